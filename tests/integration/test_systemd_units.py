"""The systemd unit files (systemd/), offline; test_systemd runs the worker the way they do.

* The shipped unit files pass `systemd-analyze verify` and `systemd-analyze security` (offline),
  byte for byte: they are copied unchanged into a scratch root directory (--root) that holds
  only what verify looks at: the worker binary of this build at /usr/bin/connector-worker (the
  unit's ExecStart path; the only substitution is which binary sits there), /bin/kill
  (ExecReload) and the host's *.target units (the units' default dependencies).
* Their settings agree with the worker: the socket path and backlog are the worker's defaults,
  the stop timeout covers the worker's drain, the access log goes to the journal.
* `--check-config --env-file` sees the environment file the way the service does.
"""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import REPO, WORKER
from systemd_units import (EVENTS_UNIT, EXAMPLE_CONFIG, INSTALLED_CONFIG, INSTALLED_WORKER,
                           SERVICE_UNIT, SOCKET_UNIT, WEBHOOKS_UNIT, clean_env,
                           make_verify_root, seconds, unit_value, unit_values, worker_defaults)

# systemd-analyze security's exposure of connector-webhooks.service, measured: it may not grow.
EXPOSURE_WEBHOOKS = 1.2


class CheckConfig(unittest.TestCase):
    def test_check_config_reads_the_environment_file_as_the_service_would(self):
        # Passwords live in connector.env, which systemd reads for the service; --check-config
        # sees them only with --env-file (without it, the same file reports no password).
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "connector.conf"
            config.write_text("threads = 5\n")
            env_file = Path(tmp) / "connector.env"
            env_file.write_text("# secrets\nCONNECTOR_DB_PASSWORD=s3cr3t\nCONNECTOR_THREADS=3\n")
            runs = {}
            for name, extra in (("plain", []), ("env file", ["--env-file", str(env_file)])):
                result = subprocess.run([str(WORKER), "--config", str(config), *extra,
                                         "--check-config"], capture_output=True, text=True,
                                        timeout=30, env=clean_env())
                self.assertEqual(result.returncode, 0, result.stderr)
                runs[name] = dict(item.split("=", 1) for item in result.stdout.split())
            self.assertEqual((runs["plain"]["db_password"], runs["plain"]["threads"]),
                             ("(empty)", "5"))
            self.assertEqual((runs["env file"]["db_password"], runs["env file"]["threads"]),
                             ("(set)", "3"))
            self.assertNotIn("s3cr3t", " ".join(str(r) for r in runs.values()))

class UnitFiles(unittest.TestCase):
    def verify(self, root):
        result = subprocess.run(
            ["systemd-analyze", "verify", f"--root={root}", SOCKET_UNIT.name, SERVICE_UNIT.name,
             EVENTS_UNIT.name, WEBHOOKS_UNIT.name],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        return result.returncode, (result.stdout + result.stderr).strip()

    def test_units_pass_systemd_analyze_verify(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            for unit in (SOCKET_UNIT, SERVICE_UNIT, EVENTS_UNIT, WEBHOOKS_UNIT):  # what ships
                self.assertEqual((root / "lib/systemd/system" / unit.name).read_bytes(),
                                 unit.read_bytes())
            code, output = self.verify(root)
        ours = [line for line in output.splitlines() if "connector" in line]
        self.assertEqual(code, 0, output)
        self.assertEqual(ours, [], output)

    def test_verify_reports_a_broken_unit(self):
        # The check above is not vacuous: the same root with a mistake in the service is caught.
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            service = root / "lib/systemd/system" / SERVICE_UNIT.name
            text = service.read_text().replace("[Service]\n", "[Service]\nRestrat=always\n", 1)
            service.write_text(text)
            (root / INSTALLED_WORKER.lstrip("/")).unlink()
            _, output = self.verify(root)
        self.assertIn("Unknown key 'Restrat' in section [Service]", output)
        self.assertIn(f"Command {INSTALLED_WORKER} is not executable", output)

    def exposure(self, unit):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            result = subprocess.run(
                ["systemd-analyze", "security", "--offline=true", f"--root={root}",
                 "--no-pager", unit.name],
                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        output = result.stdout + result.stderr
        m = re.search(rf"Overall exposure level for {re.escape(unit.name)}: ([0-9.]+)", output)
        self.assertIsNotNone(m, output)
        return m, output

    def test_webhook_deliverer_sandbox_exposure_is_low(self):
        # The deliverer must reach receivers anywhere on the internet (no IPAddressDeny), the
        # rest is locked down like the worker's.
        m, output = self.exposure(WEBHOOKS_UNIT)
        self.assertLessEqual(float(m.group(1)), EXPOSURE_WEBHOOKS, output)

    def test_service_sandbox_exposure_is_low(self):
        m, output = self.exposure(SERVICE_UNIT)
        # 0 = fully locked down, 10 = unprotected; systemd calls <= 2 "OK". Ours is 1.2 (1.4
        # before IPAddressDeny and ProcSubset); the rest is network access and the host's root
        # directory, which the worker needs. It may not grow back.
        self.assertLessEqual(float(m.group(1)), 1.4, output)

    def test_socket_unit_owns_the_workers_default_socket(self):
        defaults = worker_defaults(EXAMPLE_CONFIG)
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "ListenStream"), defaults["listen"])
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "Backlog"), defaults["listen_backlog"])
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "SocketMode"), defaults["listen_mode"])
        # nginx connects through a group of its own, which the package's postinst creates with
        # nginx's user (www-data on Debian) in it: not www-data, which every other web
        # application on the host shares, nor connector, which reads the config.
        group = unit_value(SOCKET_UNIT, "Socket", "SocketGroup")
        self.assertEqual(group, "connector-fcgi")
        postinst = (REPO / "cmake" / "debian" / "postinst").read_text()
        self.assertIn(f"addgroup --system {group}", postinst)
        self.assertIn(f"adduser www-data {group}", postinst)
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "Service"), SERVICE_UNIT.name)
        self.assertEqual(unit_value(SOCKET_UNIT, "Install", "WantedBy"), "sockets.target")

    def test_service_unit_matches_the_worker(self):
        defaults = worker_defaults(EXAMPLE_CONFIG)
        value = lambda key: unit_value(SERVICE_UNIT, "Service", key)  # noqa: E731
        self.assertEqual(value("ExecStart"), f"{INSTALLED_WORKER} --config {INSTALLED_CONFIG}")
        self.assertEqual(unit_values(SERVICE_UNIT, "Service", "ExecReload"), [
            f"{INSTALLED_WORKER} --config {INSTALLED_CONFIG} --check-config",
            "/bin/kill -HUP $MAINPID"])
        self.assertEqual(value("Type"), "notify")
        self.assertEqual(value("NotifyAccess"), "main")
        self.assertEqual(value("KillMode"), "mixed")
        self.assertEqual(value("Restart"), "on-failure")
        self.assertEqual(value("User"), "connector")
        self.assertEqual(value("UMask"), "0077")
        self.assertEqual(value("ProcSubset"), "pid")
        self.assertEqual((value("IPAddressDeny"), value("IPAddressAllow")), ("any", "localhost"))
        self.assertIn(SOCKET_UNIT.name, unit_value(SERVICE_UNIT, "Unit", "Requires").split())
        self.assertIn(SOCKET_UNIT.name, unit_value(SERVICE_UNIT, "Unit", "After").split())
        # systemd waits for the drain (shutdown_timeout_s) before it kills anything.
        self.assertGreater(seconds(value("TimeoutStopSec")), int(defaults["shutdown_timeout_s"]))
        self.assertGreaterEqual(seconds(value("WatchdogSec")), 10)
        # The default access log goes to the journal; nothing else is written.
        self.assertEqual(defaults["access_log"], "stderr")
        self.assertEqual(value("StandardError"), "journal")
        for key, expected in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"),
                              ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                              ("PrivateDevices", "yes"), ("MemoryDenyWriteExecute", "yes"),
                              ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
                              ("CapabilityBoundingSet", ""), ("SystemCallArchitectures", "native")]:
            self.assertEqual(value(key), expected, key)
        self.assertRegex(value("MemoryMax"), r"^\d+[KMG]$")
        self.assertIn("@system-service", unit_values(SERVICE_UNIT, "Service", "SystemCallFilter"))


# --- the worker as systemd runs it -------------------------------------------------------------


if __name__ == "__main__":
    unittest.main()
