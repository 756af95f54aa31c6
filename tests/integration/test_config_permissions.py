"""A configuration file that holds a database password and that others can read: the worker (with
--check-config, and starting for real) and connector-admin refuse it, with one line that says
what to do and shows no password; one readable by its group only, or without a password, is
accepted. No stack: each program runs on a file of its own (the stack's own config file is
private: test_hostile_requests' StackConfig)."""

import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import ADMIN, WORKER


class ConfigPermissions(unittest.TestCase):
    SECRET = "s3cret-perm-test"

    def run_with(self, program, text, mode, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "connector.conf"
            path.write_text(text)
            path.chmod(mode)
            env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
            result = subprocess.run([str(program), "--config", str(path), *args],
                                    capture_output=True, text=True, timeout=60, env=env,
                                    stdin=subprocess.DEVNULL)
            return path, result

    def refusal(self, path, mode):
        return (f"config file {path} holds a password and is readable by everyone "
                f"(mode {mode:04o}): run chmod 640 (or 600) on it, or move the password to "
                "CONNECTOR_DB_PASSWORD / CONNECTOR_DB_WRITE_PASSWORD / "
                "CONNECTOR_WEBHOOKS_DB_PASSWORD")

    def test_the_worker_refuses_a_world_readable_file_with_a_password(self):
        for key in ("db_password", "db_write_password"):
            for args in (["--check-config"], []):  # checking, and starting for real
                with self.subTest(key=key, args=args):
                    path, result = self.run_with(
                        WORKER, f"listen = /nonexistent/fcgi.sock\n{key} = {self.SECRET}\n",
                        0o644, *args)
                    self.assertEqual(result.returncode, 1)
                    self.assertEqual(result.stdout, "")
                    # One line, its time first (stderr is not the journal here).
                    self.assertRegex(result.stderr, r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
                                     r"[0-9]{2}:[0-9]{2}\.[0-9]{3}Z error: " +
                                     re.escape(self.refusal(path, 0o644)) + r"\n\Z")
                    self.assertNotIn(self.SECRET, result.stderr)

    def test_group_readable_or_without_a_password_is_accepted(self):
        for text, mode in ((f"db_password = {self.SECRET}\n", 0o640),
                           (f"db_password = {self.SECRET}\n", 0o600),
                           ("db_password =\nthreads = 3\n", 0o644)):
            with self.subTest(mode=oct(mode), text=text):
                _, result = self.run_with(WORKER, text, mode, "--check-config")
                self.assertEqual((result.returncode, result.stderr), (0, ""))
                self.assertIn("db_password=(", result.stdout)
                self.assertNotIn(self.SECRET, result.stdout)

    def test_connector_admin_refuses_it_too(self):
        path, result = self.run_with(ADMIN, f"db_password = {self.SECRET}\n", 0o604,
                                     "import", "/nonexistent.json")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr,
                         f"connector-admin import: {self.refusal(path, 0o604)}\n")


if __name__ == "__main__":
    unittest.main()
