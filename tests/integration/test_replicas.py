"""Reads that scale out: a real MariaDB primary and a replica on loopback (replication set up by
scripts/mariadb-replica), the worker reading from the replica (db_replicas) as connector_reader
and writing to the primary as connector_writer.

Which server answered is made visible by making them differ: with the replica's SQL thread
stopped, a row inserted on the primary exists there only, so an API that does not show it read
the replica, and one that shows it read the primary. Every request carries a parameter the
service ignores, so that no cache between the client and the worker can answer it."""

import collections
import hashlib
import os
import signal
import time
import unittest
import uuid
from urllib.parse import urlencode

from fixture import Fixture
from harness import READ_USER, Stack, WRITE_USER, _free_port, hang, prometheus, wait_for

stack = None
fixture = Fixture()
H0 = fixture.history[0]
RECIPIENT = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE"
_next_id = iter(range(900001, 1000000))


def setUpModule():
    global stack
    # Fail back to the replica 3 s after leaving it (30 s by default), to keep the test short;
    # the replica stays in rotation however far behind (test_replica_lag covers the bound).
    stack = Stack(fixture=fixture.path, threads=4, replica=True, accounts=True,
                  config={"db_failback_s": 3, "db_replica_max_lag_s": 0})


def tearDownModule():
    stack.stop()


def get(target):
    separator = "&" if "?" in target else "?"
    return stack.get(f"{target}{separator}nocache={uuid.uuid4().hex}")


def insert_on_primary():
    """Inserts a copy of the fixture's first record under a new id and hash on the primary;
    returns (hash, the API's expected by-hash answer)."""
    new_id = next(_next_id)
    new_hash = hashlib.sha256(f"replica-test-{new_id}".encode()).hexdigest()
    stack.copy_history_row(H0["id"], new_id, new_hash)
    return new_hash, fixture.record({**H0, "id": str(new_id), "hash": new_hash},
                                    with_status_message=True)


def by_hash(record_hash):
    return get(f"/v1/history/hash?hash={record_hash}")


def statuses(record_hash, count=20):
    return collections.Counter(by_hash(record_hash).status for _ in range(count))


def rows(sql_function, record_hash):
    return sql_function(f"SELECT COUNT(*) FROM history WHERE hash = '{record_hash}'")


def connections(sql_function, user):
    return int(sql_function("SELECT COUNT(*) FROM information_schema.processlist "
                            f"WHERE user = '{user}'")[0][0])


def breakers_open():
    metrics = prometheus(stack.get("/metrics").body.decode())
    return metrics[("connector_db_breakers_open", frozenset())]


def mixed_requests(count):
    """count requests over the read endpoints; returns the statuses and their counts."""
    targets = ["/v1/history?page_size=5", f"/v1/history/hash?hash={H0['hash']}", "/v1/ab",
               "/v1/history?status=confirmed&order=ASC", "/v1/pairs"]
    return collections.Counter(get(targets[i % len(targets)]).status for i in range(count))


def replica_pid():
    return int((stack.replica_dir / "mysqld.pid").read_text())


class ReplicaFrozen:
    """With the replica's SQL thread stopped: the replica keeps answering but applies nothing."""

    def __enter__(self):
        stack.replica_sql("STOP SLAVE SQL_THREAD")
        return self

    def __exit__(self, *exc):
        stack.replica_sql("START SLAVE SQL_THREAD")
        stack.wait_replica_caught_up()
        return False


def ensure_replica_running():
    stack.start_replica()  # does nothing when it runs
    stack.wait_replica_caught_up()


class Replication(unittest.TestCase):
    def setUp(self):
        ensure_replica_running()

    def test_set_up_by_the_script(self):
        self.assertEqual(stack.replica_sql("SELECT @@read_only, @@server_id"), [["1", "2"]])
        self.assertEqual(stack.sql("SELECT @@log_bin, @@binlog_format, @@server_id"),
                         [["1", "ROW", "1"]])
        self.assertGreaterEqual(int(stack.sql("SELECT COUNT(*) FROM history")[0][0]),
                                len(fixture.history))
        # Schema, data and the service accounts all came through replication.
        for table in ("history", "deposit_accounts", "chains", "pairs"):
            self.assertEqual(stack.replica_sql(f"CHECKSUM TABLE {table}"),
                             stack.sql(f"CHECKSUM TABLE {table}"), table)
        self.assertEqual(stack.replica_sql("SELECT user, host FROM mysql.user WHERE user LIKE "
                                           "'connector\\_%' ORDER BY user, host"),
                         stack.sql("SELECT user, host FROM mysql.user WHERE user LIKE "
                                   "'connector\\_%' ORDER BY user, host"))

    def test_reads_are_served_by_the_replica(self):
        page = get("/v1/history?page_size=100")
        self.assertEqual(page.status, 200, page)
        self.assertEqual(page.json()["list"][-len(fixture.history):], fixture.records())
        with ReplicaFrozen():
            record_hash, expected = insert_on_primary()
            self.assertEqual((rows(stack.sql, record_hash), rows(stack.replica_sql, record_hash)),
                             ([["1"]], [["0"]]))
            # Not found through the API: the reads did not go to the primary.
            self.assertEqual(statuses(record_hash), {404: 20})
            self.assertGreater(connections(stack.replica_sql, READ_USER), 0)
            self.assertEqual(connections(stack.sql, READ_USER), 0)
        # Replicated: now the API shows it, exactly.
        answers = [by_hash(record_hash) for _ in range(12)]
        self.assertEqual([r.status for r in answers], [200] * 12)
        self.assertEqual(answers[-1].json(), expected)

    def test_row_inserted_on_the_primary_appears_through_the_api(self):
        record_hash, expected = insert_on_primary()
        stack.wait_replica_caught_up()
        r = by_hash(record_hash)
        self.assertEqual((r.status, r.json()), (200, expected))
        newest = get("/v1/history?page_size=1").json()["list"]
        self.assertEqual(newest[0]["hash"], record_hash)

    def test_account_writes_go_to_the_primary(self):
        recipient = "0x" + "a1" * 20
        with ReplicaFrozen():
            r = get("/v1/account?" + urlencode({"recipient_address": recipient,
                                                "recipient_blockchain": "unitiot",
                                                "deposit_blockchain": "unitcore"}))
            self.assertEqual(r.status, 200, r)
            deposit = r.json()["deposit_address"]
            query = ("SELECT deposit_address, LOWER(recipient_address) FROM deposit_accounts "
                     f"WHERE deposit_address = '{deposit}'")
            self.assertEqual(stack.sql(query), [[deposit, recipient]])
            self.assertEqual(stack.replica_sql(query), [])
            self.assertGreater(connections(stack.sql, WRITE_USER), 0)
            self.assertEqual(connections(stack.replica_sql, WRITE_USER), 0)
        self.assertEqual(stack.replica_sql(query), [[deposit, recipient]])


class Failover(unittest.TestCase):
    def setUp(self):
        ensure_replica_running()

    def tearDown(self):
        # The next test starts from a replica that runs and a worker whose threads all read it.
        ensure_replica_running()
        stack.stop_worker()
        stack.start_worker()

    def test_replica_down_reads_fail_over_to_the_primary_without_errors(self):
        self.assertEqual(mixed_requests(20), {200: 20})
        stack.stop_replica()
        self.assertEqual(mixed_requests(60), {200: 60})
        record_hash, expected = insert_on_primary()
        r = by_hash(record_hash)  # reads now come from the primary: visible at once
        self.assertEqual((r.status, r.json()), (200, expected))
        self.assertGreater(connections(stack.sql, READ_USER), 0)
        account = get("/v1/account?" + urlencode({"recipient_address": "0x" + "b2" * 20,
                                                  "recipient_blockchain": "unitiot",
                                                  "deposit_blockchain": "unitcore"}))
        self.assertEqual(account.status, 200, account)

        stack.start_replica()
        self.assertEqual(mixed_requests(60), {200: 60})
        stack.wait_replica_caught_up()
        self.assertEqual(rows(stack.replica_sql, record_hash), [["1"]])
        self.assertEqual(statuses(record_hash), {200: 20})

    def test_reads_go_back_to_the_replica_once_it_is_back(self):
        stack.stop_replica()
        self.assertEqual(mixed_requests(40), {200: 40})  # the threads move to the primary
        stack.start_replica()
        stack.wait_replica_caught_up()
        with ReplicaFrozen():
            record_hash, _ = insert_on_primary()
            # Within a bound, every read is the replica's again (the row is not seen), with
            # no error on the way.
            seen = collections.Counter()

            def back_on_replica():
                recent = [by_hash(record_hash).status for _ in range(20)]
                seen.update(recent)
                return recent == [404] * 20

            self.assertTrue(wait_for(back_on_replica, 60), seen)
            self.assertEqual(set(seen) - {200, 404}, set(), seen)

    def test_replica_killed_reads_fail_over_without_errors(self):
        self.assertEqual(mixed_requests(20), {200: 20})
        os.kill(replica_pid(), signal.SIGKILL)
        self.assertEqual(mixed_requests(40), {200: 40})
        stack.start_replica()  # crash recovery, then it resumes replicating
        stack.wait_replica_caught_up()
        self.assertEqual(mixed_requests(20), {200: 20})

    def test_hung_replica_costs_bounded_time_and_no_errors(self):
        """A replica that accepts connections but never answers (SIGSTOP: a hung server or a
        partition): each thread waits out its read timeout once, then reads from the primary."""
        saved = {key: stack.settings[key] for key in ("db_read_timeout_s", "db_connect_timeout_s")}
        stack.stop_worker()
        stack.rewrite_config(db_read_timeout_s=1, db_connect_timeout_s=1)
        pid = replica_pid()
        try:
            stack.start_worker()
            self.assertEqual(mixed_requests(20), {200: 20})
            hang(pid)
            # A process's breaker opens at its third call without an answer; which process
            # and thread take a request is the kernel's choice, so requests go on (each thread
            # back on the replica after db_failback_s) until one process has met it three times.
            timings = []
            while len(timings) < 30 or (breakers_open() == 0 and len(timings) < 200):
                started = time.monotonic()
                status = get(f"/v1/history?page_size={len(timings) % 5 + 1}").status
                timings.append((status, round(time.monotonic() - started, 1)))
            self.assertEqual(collections.Counter(s for s, _ in timings), {200: len(timings)},
                             timings)
            self.assertLess(max(t for _, t in timings), 4.0, timings)
            # The processes that met it skip it now: their breakers are open, and shown.
            self.assertIn(breakers_open(), range(1, stack.worker_status()["processes"] + 1))
            os.kill(pid, signal.SIGCONT)
            # The prober's first answer closes them.
            self.assertTrue(wait_for(lambda: breakers_open() == 0, seconds=10))
        finally:
            os.kill(pid, signal.SIGCONT)
            stack.stop_worker()
            stack.rewrite_config(**saved)
            stack.start_worker()

    def test_replicas_are_tried_in_order(self):
        """db_replicas = a dead address, then the replica over TCP: reads skip the first and come
        from the second, not from the primary."""
        dead = _free_port()
        stack.stop_worker()
        stack.rewrite_config(db_replicas=f"127.0.0.1:{dead},127.0.0.1:{stack.replica_port}")
        try:
            stack.start_worker()
            with ReplicaFrozen():
                record_hash, _ = insert_on_primary()
                self.assertEqual(statuses(record_hash), {404: 20})
                self.assertEqual(mixed_requests(20), {200: 20})
                self.assertEqual(connections(stack.sql, READ_USER), 0)
        finally:
            stack.stop_worker()
            stack.rewrite_config(db_replicas=f"unix:{stack.replica_socket}")
            stack.start_worker()
        self.assertEqual(statuses(record_hash), {200: 20})

    def test_no_replica_answers_reads_come_from_the_primary(self):
        stack.stop_worker()
        stack.rewrite_config(db_replicas=f"127.0.0.1:{_free_port()},unix:/nonexistent/r.sock")
        try:
            stack.start_worker()
            record_hash, expected = insert_on_primary()
            self.assertEqual(statuses(record_hash), {200: 20})
            self.assertEqual(mixed_requests(20), {200: 20})
        finally:
            stack.stop_worker()
            stack.rewrite_config(db_replicas=f"unix:{stack.replica_socket}")
            stack.start_worker()


if __name__ == "__main__":
    unittest.main()
