"""Lag-aware reads: a real MariaDB primary and a replica (scripts/mariadb-replica), a worker of
two processes reading from the replica with db_replica_max_lag_s = 4. The primary's event writes
the replication heartbeat every second (sql/migrations/0005); the worker's lag monitor
(db/replica_monitor.h) takes the replica out of rotation while it is more than 4 s behind, or
its heartbeat cannot be told, and back once within 2 s.

Which server a read used is made visible by a row that exists on one server only: inserted on
the primary while the replica's SQL thread is stopped (primary only), or on the replica with
sql_log_bin = 0 (replica only). Every request carries a parameter the service ignores, so no
cache answers it."""

import hashlib
import itertools
import json
import os
import signal
import time
import unittest
import uuid

from fixture import Fixture
from harness import Stack, await_true, fcgi_get, hang, pace, prometheus

MAX_LAG_S = 4
# The bound on a stopped replica's staleness is MAX_LAG_S plus one probe interval; a
# loaded machine gets a few seconds more before the test calls it a failure.
SHOWN_WITHIN_S = MAX_LAG_S + 1 + 5

stack = None
fixture = Fixture()
H0 = fixture.history[0]
_next_id = itertools.count(800001)


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=2, replica=True, accounts=True,
                  config={"processes": 2, "db_replica_max_lag_s": MAX_LAG_S, "db_failback_s": 60})


def tearDownModule():
    stack.stop()


def new_row(replica_only=False):
    """A copy of the fixture's first record under a new hash, on the primary or on the replica
    only; returns its hash."""
    new_id = next(_next_id)
    new_hash = hashlib.sha256(f"lag-test-{new_id}".encode()).hexdigest()
    stack.copy_history_row(H0["id"], new_id, new_hash, replica_only=replica_only)
    return new_hash


def found(record_hash):
    status = stack.get(f"/v1/history/hash?hash={record_hash}&nocache={uuid.uuid4().hex}").status
    assert status in (200, 404), status
    return status == 200


def replica_state():
    """The replica's entry in /status's db_servers."""
    servers = stack.worker_status()["db_servers"]
    return next(s for s in servers if s["role"] == "replica")


def wait_rotation(in_rotation, seconds):
    await_true(lambda: replica_state()["in_rotation"] is in_rotation, seconds=seconds)


def reads_leave_the_replica():
    """The replica goes out of rotation within the bound, and from then on no read is the
    replica's (every worker process reads the rotation from the pool's scoreboard at each
    request): a row only the replica has is not found, whichever process answers."""
    wait_rotation(False, seconds=SHOWN_WITHIN_S)
    record = new_row(replica_only=True)
    for _ in range(6):
        assert not found(record), "a read used the replica out of rotation"


def readyz_servers():
    status, _, body = fcgi_get(stack.fcgi_socket, "/readyz")
    assert status == 200, status
    return json.loads(body)["servers"]


def log_lines(text):
    return sum(text in line for line in stack.worker_log_text().splitlines())


class ReplicaLag(unittest.TestCase):
    def setUp(self):
        # Every case starts from a replica in rotation and caught up.
        stack.replica_sql("START SLAVE")
        stack.wait_replica_caught_up()
        wait_rotation(True, seconds=3 * MAX_LAG_S)

    def test_a_current_replica_is_in_rotation_and_shown_everywhere(self):
        replica = f"unix:{stack.replica_socket}"
        primary = f"unix:{stack.db_socket}"
        status = stack.worker_status()["db_servers"]
        self.assertEqual([(s["server"], s["role"], s["in_rotation"]) for s in status],
                         [(replica, "replica", True), (primary, "primary", True)])
        self.assertIsInstance(status[0]["lag_seconds"], float)
        self.assertLessEqual(status[0]["lag_seconds"], MAX_LAG_S / 2)
        self.assertGreater(status[0]["measured_unix_ms"], time.time() * 1000 - 5000)
        self.assertIsInstance(status[1]["heartbeat_age_seconds"], float)
        self.assertNotIn("lag_seconds", status[1])

        status_code, _, body = fcgi_get(stack.fcgi_socket, "/readyz")
        self.assertEqual(status_code, 200)
        ready = json.loads(body)
        self.assertEqual(ready["status"], "ready")
        self.assertEqual([(s["server"], s["in_rotation"]) for s in ready["servers"]],
                         [(replica, True), (primary, True)])

        metrics = prometheus(fcgi_get(stack.fcgi_socket, "/metrics")[2].decode())
        self.assertEqual(metrics[("connector_db_server_in_rotation",
                                  frozenset({("server", replica)}))], 1)
        self.assertEqual(metrics[("connector_db_server_in_rotation",
                                  frozenset({("server", primary)}))], 1)
        lag = metrics[("connector_db_replica_lag_seconds", frozenset({("server", replica)}))]
        self.assertLessEqual(lag, MAX_LAG_S / 2)
        self.assertIn(("connector_db_primary_heartbeat_age_seconds", frozenset()), metrics)

        # The reads use the replica: a row only it has is found, whichever process answers.
        only_there = new_row(replica_only=True)
        for _ in range(6):
            self.assertTrue(found(only_there))

    def test_a_stopped_replica_is_passed_over_within_the_bound_and_taken_back(self):
        outs = log_lines("out of rotation")
        backs = log_lines("back in rotation")
        stack.replica_sql("STOP SLAVE SQL_THREAD")
        record = new_row()
        stopped_at = time.monotonic()
        # Shown by the node within the bound: read from the primary once the replica is out.
        await_true(lambda: found(record), seconds=SHOWN_WITHIN_S, step=0.2)
        shown_after = time.monotonic() - stopped_at
        self.assertGreater(shown_after, MAX_LAG_S - 1.5, "read the replica while it was current")
        state = replica_state()
        self.assertFalse(state["in_rotation"])
        self.assertGreater(state["lag_seconds"], MAX_LAG_S)
        # A status changed on the primary is shown as well, whichever process answers.
        stack.sql(f"UPDATE history SET status = 'Error' WHERE hash = '{record}'")
        for _ in range(6):
            answer = stack.get(f"/v1/history/hash?hash={record}&nocache={uuid.uuid4().hex}")
            self.assertEqual((answer.status, answer.json()["status"]), (200, "Error"))
        # Both processes agreed; the change was logged once.
        await_true(lambda: log_lines("out of rotation") == outs + 1, seconds=5)

        stack.replica_sql("START SLAVE SQL_THREAD")
        stack.wait_replica_caught_up()
        wait_rotation(True, seconds=3 * MAX_LAG_S)
        self.assertLessEqual(replica_state()["lag_seconds"], MAX_LAG_S / 2)
        await_true(lambda: log_lines("back in rotation") == backs + 1, seconds=5)
        # Reads are back on the replica, without waiting db_failback_s (60 s here).
        only_there = new_row(replica_only=True)
        for _ in range(6):
            self.assertTrue(found(only_there))
        self.assertEqual(log_lines("out of rotation"), outs + 1)

    def test_a_delayed_replica_is_out_while_behind(self):
        stack.replica_sql("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 60; START SLAVE")
        try:
            reads_leave_the_replica()
            self.assertGreater(replica_state()["lag_seconds"], MAX_LAG_S)
        finally:
            stack.replica_sql("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 0; START SLAVE")
        wait_rotation(True, seconds=3 * MAX_LAG_S)

    def test_a_stopped_heartbeat_event_takes_the_replica_out(self):
        # Without a heartbeat the lag cannot be told: the replica goes out, and the primary's
        # own heartbeat age shows why.
        stack.sql("ALTER EVENT replication_heartbeat_tick DISABLE")
        try:
            reads_leave_the_replica()
            primary = stack.worker_status()["db_servers"][1]
            self.assertGreater(primary["heartbeat_age_seconds"], MAX_LAG_S)
        finally:
            stack.sql("ALTER EVENT replication_heartbeat_tick ENABLE")
        wait_rotation(True, seconds=3 * MAX_LAG_S)

    def test_a_row_another_server_left_in_the_future_does_not_make_a_replica_current(self):
        """A former primary whose clock ran ahead left its heartbeat row, an hour ahead: the lag
        is read from the current primary's own row, so a replica behind is still behind."""
        future_us = int((time.time() + 3600) * 1_000_000)
        primary_id = int(stack.sql("SELECT @@server_id")[0][0])
        stale_id = primary_id + 1000
        stack.sql(f"REPLACE INTO replication_heartbeat (server_id, written_us) "
                  f"VALUES ({stale_id}, {future_us})")
        stack.wait_replica_caught_up()
        self.assertEqual(stack.replica_sql(f"SELECT written_us FROM replication_heartbeat "
                                           f"WHERE server_id = {stale_id}"), [[str(future_us)]])
        stack.replica_sql("STOP SLAVE SQL_THREAD")
        try:
            reads_leave_the_replica()
            self.assertGreater(replica_state()["lag_seconds"], MAX_LAG_S)
        finally:
            stack.sql(f"DELETE FROM replication_heartbeat WHERE server_id = {stale_id}")
            stack.replica_sql("START SLAVE SQL_THREAD")
        stack.wait_replica_caught_up()
        wait_rotation(True, seconds=3 * MAX_LAG_S)

    def test_a_hung_primary_leaves_a_current_replica_in_rotation(self):
        record = new_row(replica_only=True)
        primary_pid = int((stack.db_dir / "mysqld.pid").read_text())
        hang(primary_pid)
        try:
            # Measured against the newest time the primary is known to have written, the
            # replica is current: it stays in, and reads go on from it.
            deadline = time.monotonic() + MAX_LAG_S + 3
            while time.monotonic() < deadline:
                self.assertTrue(replica_state()["in_rotation"])
                self.assertTrue(found(record))
                pace(0.5)  # sampled through the whole window: it must hold throughout
            # /readyz shows the primary's last reading as stale (no reading for over 5 s);
            # the replica, read every second, is current.
            await_true(lambda: readyz_servers()[1]["stale"], seconds=10)
            replica, primary = readyz_servers()
            self.assertTrue(primary["stale"])
            self.assertGreater(primary["reading_age_seconds"], 5)
            self.assertEqual((replica["in_rotation"], replica["stale"]), (True, False))
        finally:
            os.kill(primary_pid, signal.SIGCONT)
        await_true(lambda: not readyz_servers()[1]["stale"], seconds=10)
        self.assertTrue(readyz_servers()[1]["in_rotation"])


if __name__ == "__main__":
    unittest.main()
