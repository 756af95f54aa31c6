"""The worker as ops run it: processes x threads, recycling after max_requests, SIGHUP reload
under load with no failed request, SIGTERM draining a request in flight, the request time budget
enforced in the database, health, readiness, metrics, status, access and slow logs."""

import json
import os
import signal
import threading
import time
import unittest

from fixture import Fixture
from harness import Stack, await_true, prometheus, wait_for

fixture = Fixture()
PROCESSES, THREADS = 2, 3


def unique(path="/v1/history?page_size=1"):
    """A target nginx's cache has never seen, so it reaches the worker."""
    return f"{path}&n={time.monotonic_ns()}"


class WorkerPool(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.access_log = f"/tmp/connector-access-{os.getpid()}.log"
        cls.stack = Stack(fixture=fixture.path, threads=THREADS, config={
            "processes": PROCESSES, "access_log": cls.access_log, "slow_request_ms": 700,
            # Whole seconds: one statement may then run for the budget less 200 ms
            # (db/session_timeouts.h).
            "request_timeout_ms": 2000, "shutdown_timeout_s": 20})

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()
        if os.path.exists(cls.access_log):
            os.unlink(cls.access_log)

    def access_log_text(self):
        with open(self.access_log) as f:
            return f.read()

    def test_health_and_readiness(self):
        s = self.stack
        r = s.get("/healthz")
        self.assertEqual((r.status, r.json()), (200, {"status": "ok"}))
        self.assertEqual(r.headers["Cache-Control"], "no-store")
        # Without replicas the primary is the only server, and not measured (no lag to bound).
        self.assertEqual(s.get("/readyz").json(), {"status": "ready", "servers": [
            {"server": f"unix:{s.db_socket}", "role": "primary", "in_rotation": True,
             "heartbeat_age_seconds": None, "measured_unix_ms": 0, "reading_age_seconds": None,
             "stale": False}]})
        s.stop_mariadb()
        try:
            down = s.get("/readyz")
            alive = s.get("/healthz")
        finally:
            s.start_mariadb()
        self.assertEqual((down.status, down.json()["error"]["code"]), (503, "unavailable"))
        self.assertEqual(alive.status, 200)
        # Ready again in every process once each has reached the database again.
        s.wait_refreshed(after_unix_ms=time.time() * 1000)
        self.assertEqual([s.get("/readyz").status for _ in range(6)], [200] * 6)

    def test_status_page_figures(self):
        before, _ = self.stack.settled_status()
        for _ in range(5):
            self.assertEqual(self.stack.get(unique()).status, 200)
        after, polls = self.stack.settled_status()
        self.assertEqual(after["pool"], "connector")
        self.assertEqual(after["processes"], PROCESSES)
        self.assertEqual(after["total_threads"], PROCESSES * THREADS)
        self.assertEqual(after["active_threads"] + after["idle_threads"], PROCESSES * THREADS)
        self.assertEqual(after["active_threads"], 1)  # the /status request itself
        self.assertEqual(after["accepted_conn"] - before["accepted_conn"], 5 + polls)
        self.assertGreaterEqual(after["max_active_threads"], 1)
        self.assertEqual(after["threads_per_process"], THREADS)

    def test_metrics_parse_and_count(self):
        key = ("connector_requests_total",
               frozenset({("endpoint", "/v1/history"), ("status", "200")}))
        bad = ("connector_requests_total",
               frozenset({("endpoint", "/v1/history"), ("status", "400")}))
        self.stack.settled_status()  # every earlier request counted
        first = self.stack.get("/metrics")
        self.assertEqual(first.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        before = prometheus(first.body.decode())
        for _ in range(7):
            self.stack.get(unique())
        for _ in range(2):
            self.stack.get(unique("/v1/history?status=nope"))
        self.stack.settled_status()
        after = prometheus(self.stack.get("/metrics").body.decode())
        self.assertEqual(after[key] - before.get(key, 0), 7)
        self.assertEqual(after[bad] - before.get(bad, 0), 2)
        count = ("connector_request_duration_seconds_count",
                 frozenset({("endpoint", "/v1/history")}))
        inf = ("connector_request_duration_seconds_bucket",
               frozenset({("endpoint", "/v1/history"), ("le", "+Inf")}))
        self.assertEqual(after[count], after[inf])
        self.assertEqual(after[count] - before[count], 9)
        for name in ("connector_db_errors_total", "connector_db_reconnects_total",
                     "connector_pool_threads_busy", "connector_pool_threads_idle",
                     "connector_slow_requests_total", "connector_reference_reloads_total"):
            self.assertIn((name, frozenset()), after, name)
        self.assertEqual(after[("connector_pool_processes", frozenset())], PROCESSES)

    def test_access_log_has_one_json_line_per_request(self):
        r = self.stack.get(unique("/v1/history?page_size=2"))
        rid = r.headers["X-Request-Id"]

        def logged():
            with open(self.access_log) as f:
                return next((json.loads(l) for l in f if rid in l), None)
        await_true(logged, 5, 0.05, "the request's line in the access log")
        line = logged()
        self.assertEqual(set(line), {"time", "request_id", "method", "endpoint", "status",
                                     "duration_ms", "bytes", "pid"})
        self.assertEqual((line["request_id"], line["method"], line["endpoint"], line["status"],
                          line["bytes"]), (rid, "GET", "/v1/history", 200, len(r.body)))
        self.assertRegex(line["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

    def test_health_probes_stay_out_of_the_access_log(self):
        # A balancer's probes would flood it: /healthz, /readyz, /metrics and /status answered
        # 200 are not logged; the request after them is.
        probes = [self.stack.get(path).headers["X-Request-Id"]
                  for path in ("/healthz", "/readyz", "/metrics", "/status")]
        rid = self.stack.get(unique("/v1/history?page_size=1")).headers["X-Request-Id"]
        await_true(lambda: rid in self.access_log_text(), 5, 0.05,
                   "the request's line in the access log")
        text = self.access_log_text()
        self.assertEqual([p for p in probes if p in text], [])

    def test_time_budget_is_enforced_in_the_database_and_slow_requests_are_logged(self):
        # Held until the answer is out (well past the 2 s budget), then released.
        lock = self.stack.hold_table_lock("history", 60)
        try:
            r = self.stack.get(unique())
        finally:
            self.stack.release_table_lock(lock)
        self.assertEqual((r.status, r.json()["error"]["code"]), (503, "unavailable"))

        # The slow-request line is written once the answer is out: wait for it, bounded.
        def slow():
            return [l for l in self.stack.worker_log_text().splitlines()
                    if "slow request:" in l and r.headers["X-Request-Id"] in l]
        wait_for(slow, 5, 0.05)
        self.assertEqual(len(slow()), 1, self.stack.worker_log_text()[-2000:])
        self.assertEqual(self.stack.get(unique()).status, 200)

    def test_reload_under_load_drops_nothing(self):
        statuses, stop = [], threading.Event()

        def load():
            while not stop.is_set():
                statuses.append(self.stack.get(unique()).status)

        threads = [threading.Thread(target=load) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            # Each reload happens under load: answers before it, it logged ("reloading:", as
            # the master spawns the new generation), and answers after it.
            await_true(lambda: len(statuses) >= 10, what="the load answered")
            for n in range(1, 4):
                self.stack.worker.send_signal(signal.SIGHUP)
                await_true(lambda: self.stack.worker_log_text().count("reloading:") >= n,
                           what=f"reload {n} begun")
                answered = len(statuses)
                await_true(lambda: len(statuses) >= answered + 10,
                           what=f"answers after reload {n}")
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertGreater(len(statuses), 20)
        self.assertEqual([s for s in statuses if s != 200], [])
        # The old generations drain and exit on their own time: wait until they have.
        self.assertTrue(wait_for(lambda: len(self.stack.worker_children()) == PROCESSES and
                                 self.stack.worker_status()["processes"] == PROCESSES, 30))
        status = self.stack.get("/status").json()
        self.assertGreaterEqual(status["config_reloads"], 3)
        self.assertEqual(status["processes"], PROCESSES)
        self.assertIn("reloading:", self.stack.worker_log_text())


class Draining(unittest.TestCase):
    """SIGTERM stops the worker: on a stack of its own, so no other test runs against the worker
    started after it (in WorkerPool's shared stack it had to run last, by name)."""

    def test_sigterm_drains_a_request_in_flight(self):
        # request_timeout_ms in whole seconds, as in WorkerPool.
        with Stack(fixture=fixture.path, threads=THREADS, config={
                "processes": PROCESSES, "request_timeout_ms": 2000,
                "shutdown_timeout_s": 20}) as stack:
            # The lock is held until the test releases it: the request is seen waiting on it in
            # a worker thread before SIGTERM, and released within the request's budget after.
            lock = stack.hold_table_lock("history", 60)
            result = {}
            request = threading.Thread(
                target=lambda: result.setdefault("r", stack.get(unique())))
            request.start()
            try:
                self.assertTrue(wait_for(lambda: stack.lock_waiters() > 0, 30, 0.05))
                stack.worker.send_signal(signal.SIGTERM)
            finally:
                stack.release_table_lock(lock)
            request.join(timeout=20)
            self.assertEqual(result["r"].status, 200)
            self.assertEqual(stack.worker.wait(timeout=20), 0)
            self.assertIn("stopping: draining requests in flight", stack.worker_log_text())
            stack.start_worker()  # the same stack serves again from a new worker
            self.assertEqual(stack.get(unique()).status, 200)


class KeptConnections(unittest.TestCase):
    def test_connections_nginx_keeps_open_are_served_and_drained(self):
        # nginx with fastcgi_keep_conn and an upstream keepalive, as shipped.
        with Stack(fixture=fixture.path, threads=2, config={"processes": 1}) as stack:
            statuses = [stack.get(f"/v1/history?page_size=1&n={i}").status for i in range(30)]
            self.assertEqual(statuses, [200] * 30)
            self.assertIn("fastcgi_keep_conn on;",
                          (stack.nginx_prefix / "snippets" / "connector-v1.conf").read_text())
            stack.stop_worker()  # must not hang on the idle kept connections
            stack.start_worker()
            self.assertEqual(stack.get("/v1/networks").status, 200)


class RetiringProcesses(unittest.TestCase):
    def test_a_retiring_process_that_hangs_is_killed_after_shutdown_timeout(self):
        """A process of the old generation that cannot drain (SIGSTOP: a request stuck past
        every deadline) is killed once it has been retiring for shutdown_timeout_s; its slot is
        freed, the event logged and counted, and it is no crash."""
        with Stack(fixture=fixture.path, threads=2,
                   config={"processes": 2, "shutdown_timeout_s": 2}) as stack:
            stuck = stack.worker_children()[0]
            os.kill(stuck, signal.SIGSTOP)
            stack.reload_worker()
            self.assertTrue(wait_for(lambda: stuck not in stack.worker_children(), 60),
                            stack.worker_log_text()[-3000:])
            self.assertIn(f"worker process {stuck} did not end within 2 s of retiring "
                          "(shutdown_timeout_s); killed it", stack.worker_log_text())
            self.assertTrue(wait_for(lambda: stack.worker_status()["processes"] == 2, 30))
            status = stack.worker_status()
            self.assertEqual((status["processes_killed"], status["process_crashes"]), (1, 0))
            metrics = prometheus(stack.get("/metrics").body.decode())
            self.assertEqual(metrics[("connector_worker_processes_killed_total", frozenset())], 1)
            self.assertEqual(stack.get("/v1/networks").status, 200)


class Recycling(unittest.TestCase):
    def test_processes_are_replaced_after_max_requests_without_failures(self):
        with Stack(fixture=fixture.path, threads=2, config={
                "processes": 1, "max_requests": 5, "access_log": "off"}) as stack:
            statuses = [stack.get(f"/v1/history?page_size=1&n={i}").status for i in range(40)]
            self.assertEqual(statuses, [200] * 40)
            status = stack.get("/status").json()
            # A retiring process is replaced at once, and while it drains it still answers the
            # requests nginx sends on the connections it keeps to it (one or two here), closing
            # each after its answer: 5 to about 8 requests per process.
            self.assertGreaterEqual(status["process_recycles"], 4)
            self.assertEqual(status["process_crashes"], 0)
            # The last retiring process may still be draining (0.5 s at most once idle).
            self.assertTrue(wait_for(lambda: stack.get("/status").json()["processes"] == 1, 10))


if __name__ == "__main__":
    unittest.main()
