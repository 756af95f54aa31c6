"""The webhook deliverer (connector-webhooks) as the webhook tests run it, beside a Stack
(harness.py): its own config file (the stack's, with the webhooks_* keys), its log watched by
the crash tripwire, started and stopped by signal; subscriptions added through connector-admin
as an operator would; the lease and the queues read from the primary."""

import os
import re
import signal
import subprocess
from pathlib import Path

from harness import BUILD_DIR
from waits import await_true, pace, quiet_window

DELIVERER = BUILD_DIR / "src" / "connector-webhooks"
from harness_base import WEBHOOKS_PASSWORD, WEBHOOKS_USER  # noqa: E402 (the accounts db-accounts made)
# Short, so takeovers are quick to test: the deliverer's own floor is 2000.
LEASE_MS = 2000
SECRET = re.compile(r"whsec_[0-9a-f]{64}")


class Deliverer:
    """One connector-webhooks process ("a node") of a stack."""

    def __init__(self, stack, name, ca_file=None, settings=None):
        self.stack, self.name = stack, name
        self.config_path = stack.dir / f"webhooks-{name}.conf"
        self.log = stack.dir / f"webhooks-{name}.log"
        self.metrics = stack.dir / f"webhooks-{name}.prom"
        config = dict(stack.settings)
        config.update({"webhooks_db_user": WEBHOOKS_USER, "webhooks_db_password": WEBHOOKS_PASSWORD,
                       "webhooks_allow_hosts": "127.0.0.1", "webhooks_poll_ms": 50,
                       "webhooks_lease_ms": LEASE_MS, "webhooks_metrics_file": self.metrics,
                       "webhooks_timeout_ms": 8000})
        if ca_file:
            config["webhooks_ca_file"] = ca_file
        config.update(settings or {})
        self.config_path.write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
        self.config_path.chmod(0o600)
        stack.tripwire.watch(self.log)
        self.process = None
        self.expected_exit = 0  # what stop() must find: 0, or -9 once killed on purpose

    def start(self):
        log = open(self.log, "ab")
        try:
            self.process = subprocess.Popen([str(DELIVERER), "--config", str(self.config_path)],
                                            stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.stack._env())
        finally:
            log.close()
        return self

    @property
    def holder(self):
        """The start of its name in the lease row ("host pid nonce")."""
        return f"{os.uname().nodename} {self.process.pid} "

    def holds_lease(self):
        rows = self.stack.sql("SELECT holder FROM webhook_lease WHERE id = 1")
        return rows and rows[0][0].startswith(self.holder) and self.process.poll() is None

    def wait_holding(self, timeout=30):
        await_true(self.holds_lease, timeout, what=f"deliverer {self.name} holds the lease")
        await_true(lambda: "delivers for the fleet" in self.log_text(), timeout,
                   what=f"deliverer {self.name} says it delivers")
        return self

    def log_text(self):
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def attempt_lines(self):
        """(subscription, event id, attempt, status) of each attempt the log shows."""
        return [(int(m[1]), m[2], int(m[3]), m[4]) for m in re.finditer(
            r"webhook subscription=(\d+) event=(\S+) attempt=(\d+) status=(\S+)", self.log_text())]

    def stop_checked(self, test):
        """stop(), failing `test` unless it ended as expected (0; -9 when killed on purpose):
        a deliverer that died beside a test fails it."""
        test.assertEqual(self.stop(), self.expected_exit, self.log_text()[-3000:])

    def stop(self, timeout=30):
        """SIGTERM; the exit status (0 for a clean stop)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self, sig=signal.SIGKILL):
        self.process.send_signal(sig)
        if sig == signal.SIGKILL:
            self.expected_exit = -signal.SIGKILL
            self.process.wait(10)


def allow_loopback(stack):
    """connector-admin's config allow-lists 127.0.0.1 as the deliverers' do (http, and the
    address), as an operator's would for receivers on a private network."""
    text = stack.admin_config_path.read_text()
    if "webhooks_allow_hosts" not in text:
        stack.admin_config_path.write_text(text + "webhooks_allow_hosts = 127.0.0.1\n")


def add_subscription(stack, url, recipients, statuses=None):
    """`connector-admin webhook add`; (id, secret) as it printed them."""
    allow_loopback(stack)
    args = ["webhook", "add", "--url", url]
    for recipient in recipients:
        args += ["--recipient", recipient]
    if statuses:
        args += ["--statuses", statuses]
    result = stack.admin(*args)
    assert result.returncode == 0, result.stderr
    secret = SECRET.search(result.stdout)
    ident = re.search(r"subscription (\d+)", result.stdout)
    assert secret and ident, result.stdout
    return int(ident[1]), secret[0]


def queue_row(stack, subscription):
    """The subscription's row of webhook_queues, as a dict."""
    columns = ("acked_seq", "attempt", "delivered", "retried", "last_status", "failing_since_us",
               "replay_from_seq", "lost_before_seq")
    rows = stack.sql(f"SELECT {', '.join(columns)} FROM webhook_queues "
                     f"WHERE subscription_id = {int(subscription)}")
    return dict(zip(columns, rows[0])) if rows else None


def feed_end(stack):
    return int(stack.sql("SELECT COALESCE(MAX(seq), 0) FROM history_changes")[0][0])


def record_changes(stack, recipient, after):
    """(seq, hash, status) of the feed's changes to `recipient` after seq `after`, in order."""
    return [(int(seq), h, status) for seq, h, status in stack.sql(
        "SELECT seq, hash, status FROM history_changes WHERE destination_address = "
        f"'{recipient}' AND seq > {int(after)} ORDER BY seq")]


__all__ = ["DELIVERER", "Deliverer", "LEASE_MS", "Path", "WEBHOOKS_PASSWORD", "WEBHOOKS_USER",
           "add_subscription", "feed_end", "new_record", "pace", "queue_row", "quiet_window",
           "record_changes", "record_sql", "set_status"]


def record_sql(record_id, recipient, status="Deposit"):
    """The statements that write a history record of `recipient`: a copy of record 1 under a
    new id, hash and addresses of its own (no counter row shared with another writer's)."""
    own = f"{int(record_id):040x}"
    return ("CREATE TEMPORARY TABLE copy AS SELECT * FROM history WHERE id = 1; "
            f"UPDATE copy SET id = {int(record_id)}, hash = '{int(record_id):064x}', "
            f"destination_address = '{recipient}', source_deposit_address = '0xd{own[1:]}', "
            f"source_sender = '0xe{own[1:]}', status = '{status}'; "
            "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy;")


def new_record(stack, record_id, recipient, status="Deposit"):
    """A history record of `recipient`, as the connector's nodes write one: its insert is a
    change of the feed. Returns its hash."""
    stack.sql(record_sql(record_id, recipient, status))
    return f"{int(record_id):064x}"


def set_status(stack, record_id, status):
    stack.sql(f"UPDATE history SET status = '{status}' WHERE id = {int(record_id)}")
