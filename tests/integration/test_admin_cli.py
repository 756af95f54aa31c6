"""connector-admin respects the person running it: --help for every command, a one-line reason
and a non-zero status on failure (2 for wrong usage, 1 when the work failed), and progress (rows
done, rate, time left) on a terminal, nothing on a pipe."""

import os
import pty
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import ADMIN, Stack

COMMANDS = {
    "import": "usage: connector-admin [--config FILE] import DOCUMENT.json\n",
    "sample": "usage: connector-admin sample [--history N] [--seed S]\n",
    "gen-history": "usage: connector-admin [--config FILE] gen-history N [--seed S] "
                   "[--recipients R]\n",
}


def admin(*args, config=None):
    prefix = ["--config", str(config)] if config else []
    return subprocess.run([str(ADMIN), *prefix, *map(str, args)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def on_terminal(args):
    """Runs connector-admin with stderr on a pseudo-terminal; returns (status, what it showed)."""
    controller, terminal = pty.openpty()
    with subprocess.Popen([str(ADMIN), *map(str, args)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=terminal) as process:
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the terminal's last writer has gone
                break
            if not chunk:
                break
            shown += chunk
        status = process.wait(timeout=300)
    os.close(controller)
    return status, shown.decode()


class Help(unittest.TestCase):
    def test_overview_lists_every_command(self):
        for args in (["--help"], ["-h"], ["help"]):
            result = admin(*args)
            self.assertEqual(result.returncode, 0, args)
            self.assertTrue(result.stdout.startswith(
                "usage: connector-admin [--config FILE] COMMAND [ARGS]\n"), result.stdout)
            for usage in COMMANDS.values():
                self.assertIn("  connector-admin " + usage[len("usage: connector-admin "):],
                              result.stdout)

    def test_every_command_has_its_own_help(self):
        for command, usage in COMMANDS.items():
            for args in ([command, "--help"], [command, "-h"], ["help", command]):
                result = admin(*args)
                self.assertEqual(result.returncode, 0, args)
                self.assertTrue(result.stdout.startswith(usage + "\n"), (args, result.stdout))
                self.assertGreater(len(result.stdout.splitlines()), 3, args)
                self.assertEqual(result.stderr, "", args)


class Failures(unittest.TestCase):
    def assert_one_line(self, result, status, line):
        self.assertEqual(result.returncode, status, result)
        self.assertEqual(result.stderr, line + "\n")
        self.assertEqual(result.stdout, "")

    def test_wrong_usage_is_status_2_with_one_line(self):
        cases = [
            (["bogus"], "connector-admin: unknown command 'bogus' (see connector-admin --help)"),
            (["gen-history", "abc"], "connector-admin gen-history: N must be a whole number, "
             "got 'abc' (see connector-admin gen-history --help)"),
            (["gen-history", "0"], "connector-admin gen-history: N must be at least 1 "
             "(see connector-admin gen-history --help)"),
            (["gen-history", "10", "--seed"], "connector-admin gen-history: --seed needs a "
             "value (see connector-admin gen-history --help)"),
            (["sample", "--history", "-5"], "connector-admin sample: --history must be a whole "
             "number, got '-5' (see connector-admin sample --help)"),
            (["sample", "--size", "5"], "connector-admin sample: unknown option --size "
             "(see connector-admin sample --help)"),
            (["sample", "--seed", "1", "--seed", "2"], "connector-admin sample: --seed is given "
             "twice (see connector-admin sample --help)"),
            (["import"], "connector-admin import: needs exactly one argument "
             "(see connector-admin import --help)"),
            (["import", "a.json", "b.json"], "connector-admin import: needs exactly one "
             "argument (see connector-admin import --help)"),
        ]
        for args, line in cases:
            with self.subTest(args=args):
                self.assert_one_line(admin(*args), 2, line)
        result = admin()
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith("usage: connector-admin"))

    def test_failed_work_is_status_1_with_one_line(self):
        with tempfile.TemporaryDirectory() as scratch:
            config = Path(scratch) / "admin.conf"
            config.write_text(f"db_socket = {scratch}/no-such.sock\ndb_connect_timeout_s = 1\n")
            document = Path(scratch) / "doc.json"
            document.write_text("{}")
            result = admin("import", document, config=config)
            self.assertEqual(result.returncode, 1)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
            self.assertTrue(result.stderr.startswith(
                f"connector-admin import: no database server answers (last: unix:{scratch}/"
                "no-such.sock: Can't connect"), result.stderr)
            missing = admin("import", Path(scratch) / "missing.json", config=config)
            self.assertEqual(missing.returncode, 1)
            self.assertEqual(len(missing.stderr.splitlines()), 1, missing.stderr)


class Progress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = Stack()  # an empty database: the import below brings the reference data

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    # Named so unittest runs them in this order: the import first, then gen-history after it.
    def test_1_sample_then_import_shows_progress_on_a_terminal_only(self):
        with tempfile.TemporaryDirectory() as scratch:
            document = Path(scratch) / "sample.json"
            document.write_text(admin("sample", "--history", 3000).stdout)
            config = self.stack.admin_config_path
            status, shown = on_terminal(["--config", config, "import", document])
            self.assertEqual(status, 0, shown)
            last = [line.strip() for line in shown.split("\r") if line.strip()][-1]
            self.assertRegex(last, r"^import: 3,000 / 3,000 rows \(100 %\), [\d,]+ rows/s, "
                                   r"took \d+ s$")
            piped = self.stack.admin("import", document)  # the same again: changes nothing
            self.assertEqual(piped.returncode, 0, piped.stderr)
            self.assertEqual(piped.stderr, "")

    def test_2_gen_history_shows_rows_rate_and_time_left(self):
        status, shown = on_terminal(["--config", self.stack.admin_config_path, "gen-history",
                                     30000, "--seed", 5])
        self.assertEqual(status, 0, shown)
        lines = [line.strip() for line in shown.split("\r") if line.strip()]
        self.assertRegex(lines[-1], r"^gen-history: 30,000 / 30,000 rows \(100 %\), [\d,]+ "
                                    r"rows/s, took \d+ (s|min \d\d s)$")
        for line in lines[:-1]:  # the running ones, if the load took longer than 0.5 s
            self.assertRegex(line, r"^gen-history: [\d,]+ / 30,000 rows \(\d+ %\), [\d,]+ "
                                   r"rows/s, \d+ (s|min \d\d s) left$")
        piped = self.stack.admin("gen-history", 100, "--seed", 6)
        self.assertEqual(piped.returncode, 0)
        self.assertEqual(piped.stderr, "")
        # After the import's 3,000 records and the 30,000 above.
        self.assertEqual(piped.stdout, "generated 100 history records, ids 33001 to 33100\n")

    def test_3_a_bulk_statement_longer_than_the_request_paths_read_timeout_finishes(self):
        # The counters' rebuild at the end of gen-history waits 7 s on a lock here, as it takes
        # tens of seconds over 2,000,000 records: past the 5 s db_read_timeout_s of requests,
        # which operator commands do not use (it lost the connection at 2,000,000).
        lock = self.stack.hold_table_lock("history_address_counts", 7)
        try:
            done = self.stack.admin("gen-history", 10, "--seed", 7)
        finally:
            self.stack.release_table_lock(lock)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        self.assertEqual(done.stdout, "generated 10 history records, ids 33101 to 33110\n")
        self.assertEqual(self.stack.sql("SELECT SUM(records) FROM history_counts"), [["33110"]])


if __name__ == "__main__":
    unittest.main()
