"""MariaDB restarts under a running worker: 503 with Retry-After while it is down, then answers
again without restarting the worker."""

import os
import signal
import time
import unittest

from fixture import Fixture
from harness import Stack, await_true, hang, pace, wait_for

stack = None
fixture = Fixture()


def setUpModule():
    global stack
    # nginx's cache off: the worker's own answers to a database outage are tested (the cache's
    # STALE answers over them: test_faults).
    stack = Stack(fixture=fixture.path, threads=4, config={"reference_refresh_ms": 100},
                  nginx_cache=False)


def tearDownModule():
    stack.stop()


class DatabaseRestart(unittest.TestCase):
    def test_503_while_down_then_recovery_without_restarting_workers(self):
        pid = stack.worker.pid
        # Every thread holds a live connection before the restart.
        before = [stack.get("/v1/history?page_size=5").json() for _ in range(12)]
        self.assertTrue(all(b == before[0] for b in before))

        stack.stop_mariadb()
        # /v1/ab is served from memory until every process's refreshed supply is too old.
        expired = max(stack.supply_expiries())
        await_true(lambda: time.monotonic() > expired, expired - time.monotonic() + 5, 0.05,
                   what="every process's refreshed supply past its maximum age")
        for target in ("/v1/history?page_size=5", "/v1/ab",
                       f"/v1/history/hash?hash={fixture.history[0]['hash']}"):
            for _ in range(6):  # reaches several threads
                r = stack.get(target)
                self.assertEqual(r.status, 503, (target, r))
                self.assertEqual(r.headers["Retry-After"], "1")
                self.assertEqual(r.headers["Cache-Control"], "no-store")
                self.assertEqual(r.json()["error"]["code"], "unavailable")
                self.assertEqual(r.json()["error"]["request_id"], r.headers["X-Request-Id"])
        # Reference data keeps being served from the worker's memory.
        self.assertEqual(stack.get("/v1/networks").status, 200)

        stack.start_mariadb()
        # Every process has reached the database again once each has reloaded its refreshed
        # copies (its refresher shares the circuit breaker its request threads use).
        stack.wait_refreshed(after_unix_ms=time.time() * 1000)
        after = [stack.get("/v1/history?page_size=5") for _ in range(12)]
        self.assertEqual([r.status for r in after], [200] * 12)
        self.assertEqual(after[-1].json(), before[0])
        self.assertEqual(stack.get("/v1/ab").status, 200)  # the reloaded supply
        self.assertEqual(stack.worker.pid, pid)
        self.assertIsNone(stack.worker.poll())

    def test_connection_killed_by_the_server_is_retried_transparently(self):
        self.assertEqual(stack.get("/v1/history?page_size=1").status, 200)
        ids = stack.sql("SELECT id FROM information_schema.processlist WHERE user = 'connector'")
        for (conn_id,) in ids:
            stack.sql(f"KILL {conn_id}")
        statuses = [stack.get("/v1/history?page_size=1").status for _ in range(12)]
        self.assertEqual(statuses, [200] * 12)



class SupplyDuringAnOutage(unittest.TestCase):
    """/v1/ab comes from the worker's refreshed supply: while the database hangs it is served
    until it is two reload intervals old, then the answer is the 503. The test reads when each
    process stored its last supply from /status (loaded_monotonic_ns, on the clock the worker
    counts the age on and time.monotonic() reads), so it asserts only what it can observe: an
    answer received before every process's supply expired is the 200, one sent after the
    last expired is the 503; the moments in between, when only some processes still serve it,
    are not asserted."""

    def test_ab_is_served_from_memory_for_two_intervals_at_most(self):
        interval_s = 3.0
        with Stack(fixture=fixture.path, threads=2, nginx_cache=False,  # as the module's stack
                   config={"reference_refresh_ms": int(interval_s * 1000)}) as s:
            first = s.get("/v1/ab")
            self.assertEqual(first.status, 200)
            mariadb = int((s.db_dir / "mysqld.pid").read_text())
            # A hung server (SIGSTOP) rather than a stopped one: no reload succeeds from the
            # stop on (hang() returns once it holds), and it takes no time, unlike a shutdown.
            hang(mariadb)
            try:
                answers = []  # (sent, received, answer) on time.monotonic()
                while True:
                    expiries = s.supply_expiries()
                    if time.monotonic() > max(expiries) + 1:
                        break
                    sent = time.monotonic()
                    r = s.get("/v1/ab")
                    answers.append((sent, time.monotonic(), r))
                    pace(0.05)  # a request every 50 ms until past the expiries
                expiries = s.supply_expiries()  # what the processes last stored
            finally:
                os.kill(mariadb, signal.SIGCONT)
            young = [r for _, received, r in answers if received < min(expiries)]
            old = [r for sent, _, r in answers if sent >= max(expiries)]
            self.assertTrue(young, "no answer before the supply expired")
            self.assertTrue(old)
            for r in young:
                self.assertEqual((r.status, r.body), (200, first.body))
            for r in old:
                self.assertEqual(r.status, 503, r)
                self.assertEqual(r.json()["error"]["code"], "unavailable")
                self.assertEqual(r.headers["Retry-After"], "1")
            self.assertTrue(wait_for(lambda: s.get("/v1/ab").status == 200))


class SchemaMismatch(unittest.TestCase):
    def test_a_broken_query_is_a_500_that_leaks_nothing(self):
        stack.sql("ALTER TABLE history RENAME COLUMN status_message TO status_message_renamed")
        try:
            r = stack.get("/v1/history?page_size=1")
        finally:
            stack.sql("ALTER TABLE history RENAME COLUMN status_message_renamed TO status_message")
        self.assertEqual(r.status, 500)
        self.assertEqual(r.headers["Cache-Control"], "no-store")
        self.assertEqual(r.json(), {"error": {"code": "internal", "message": "Internal error",
                                              "request_id": r.headers["X-Request-Id"]}})
        self.assertIn(r.headers["X-Request-Id"], stack.worker_log_text())
        self.assertEqual(stack.get("/v1/history?page_size=1").status, 200)


if __name__ == "__main__":
    unittest.main()
