"""Faults under load: each scenario drives our load client (load_client.py: every response is
checked and recorded) against the whole stack while something breaks, then asserts what every
single response was.

* kill -9 of a worker process: no request fails (nginx sends the victim's requests again on
  another `server` entry of the same socket, which another process takes); the master forks a
  replacement within 1 s (that is the master's contract, no back-off for a process that lived
  longer than a second).
* MariaDB stopped for 10 s: while it is down, every answer is either the worker's JSON 503 with
  Retry-After, or a 200: reference data from the worker's memory, ab from its refreshed supply
  for 2 s at most, and for the endpoints nginx caches (nginx's cache is on here) the stale copy. After it is back every endpoint answers
  200 again, with the same worker processes and no more database sessions than the pool's.
* a slow database (a test session holds LOCK TABLES history WRITE; nothing of this is in the
  product): history requests fail with the JSON 503 within the time budget (request_timeout_ms,
  which lock waits round up to whole seconds) plus a margin, while every other endpoint answers
  200. The margin only makes this a correctness bound on a loaded 2-core machine: a worker that
  retried the timed-out statement would take twice the budget.
* SIGHUP reload of the workers and nginx -s reload, twice each, under load: zero failures.
* kill -9 of the read replica: zero failures, reads move to the primary.

With CONNECTOR_FAULTS_REPORT=<file>, each scenario adds its figures (requests sent, answered,
failed and why) to that JSON file; scripts/faults turns it into the table in
docs/reliability.md.
"""

import json
import os
import signal
import time
import unittest

from fixture import Fixture
from harness import LOAD_FROM_ONE_CLIENT, READ_USER, Stack, pace, wait_for
from load_client import ACCOUNT_QUERY, Load, Target, all_endpoints

fixture = Fixture()
PROCESSES, THREADS = 2, 4
BUDGET_MS = 3000  # the shipped default
LOCK_WAIT_S = -(-BUDGET_MS // 1000)  # lock waits count whole seconds (db/session_timeouts.h)
MARGIN_S = 1.5
LOCK_SECONDS = 10
REFERENCE = {"/v1/networks", "/v1/connects", "/v1/pairs"}  # answered from the worker's memory
HISTORY = {"/v1/history", "/v1/history/hash"}


def report(name, load, why=None, **extra):
    """Adds one scenario's figures to $CONNECTOR_FAULTS_REPORT (when set)."""
    path = os.environ.get("CONNECTOR_FAULTS_REPORT")
    if not path:
        return
    figures = load.summary()
    figures["why"] = {reason: (why or {}).get(reason, "unexpected")
                      for reason in figures["failures"]}
    figures.update(extra)
    try:
        with open(path) as f:
            everything = json.load(f)
    except (OSError, ValueError):
        everything = {}
    everything[name] = figures
    with open(path, "w") as f:
        json.dump(everything, f, indent=2)


def started_at(pid):
    """When the kernel started process pid, on CLOCK_BOOTTIME (seconds)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime, in clock ticks


def wait_until(predicate, seconds, step=0.01):
    """Polls predicate until it holds; returns the time it first held (monotonic), or None."""
    return time.monotonic() if wait_for(predicate, seconds, step) else None


def is_unavailable(r):
    """The JSON 503 the service answers when it cannot serve now (worker or nginx)."""
    return (r.status, r.code, r.retry_after, r.shape_ok) == (503, "unavailable", "1", True)


def reaches_database(target):
    """A target whose answer comes from the database and that nginx caches: neither reference
    data (answered from the worker's memory) nor /v1/account (never cached)."""
    return target.endpoint not in REFERENCE and target.endpoint != "/v1/account"


def failures(load):
    return [r for r in load.records if not r.ok]


class Faults(unittest.TestCase):
    """One stack, with nginx's cache on as in production; tests that must reach the worker use
    unique targets (a parameter the worker ignores)."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(fixture=fixture.path, threads=THREADS, nginx_env=LOAD_FROM_ONE_CLIENT,
                          config={"processes": PROCESSES, "request_timeout_ms": BUDGET_MS})

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def status(self):
        return self.stack.get("/status").json()

    def pool_threads(self, pids):
        return [self.stack.process_status(pid, "Threads") for pid in pids]

    def test_kill_9_of_a_worker_process(self):
        """Killed with requests in flight for certain: history requests wait on a lock that the
        test releases right after the kill (well within their time budget, so they would all
        succeed), and the victim is the process that /status shows with the most of them,
        chosen before the other endpoints' load starts (so every busy thread it counts is a
        waiting request, or that /status request itself)."""
        s = self.stack
        children = s.worker_children()
        self.assertEqual(len(children), PROCESSES)
        threads_each = self.pool_threads(children)[0]  # the main thread and the pool's
        crashes = self.status()["process_crashes"]
        targets = all_endpoints(fixture, unique=True)
        parked = Load(s.port, [t for t in targets if t.endpoint in HISTORY],
                      connections=THREADS + 2)
        others = Load(s.port, [t for t in targets if t.endpoint not in HISTORY], connections=4)
        with parked:
            pace(1.5)  # the history load running before the lock
            victim, killed_at, killed_at_monotonic = self.kill_the_busiest(children, others)
            replaced_at, whole_at = self.wait_replaced(victim, threads_each)
            pace(2)  # the loads running on after the replacement
            others.__exit__(None, None, None)
        failed = failures(parked) + failures(others)
        for name, load in (("history, waiting on a lock at the kill", parked),
                           ("other endpoints", others)):
            report(f"kill -9 of a worker process: {name}", load,
                   new_process_after_ms=replaced_at and round((replaced_at - killed_at) * 1000),
                   pool_whole_after_ms=whole_at and round((whole_at - killed_at_monotonic) * 1000))
        self.assertGreater(others.sent, 100)
        # The victim held 2 to 4 waiting requests; nginx sent each again on a new connection
        # (the socket is listed keepalive + 2 times in the upstream), so none of them failed.
        self.assertEqual(failed, [])
        self.assertIn("upstream prematurely closed", s.nginx_error_log_text())
        self.assertIsNotNone(replaced_at, "no replacement process")
        self.assertLess(replaced_at - killed_at, 1.0)
        self.assertIsNotNone(whole_at, "the replacement never started its threads")
        after = self.status()
        self.assertEqual((after["processes"], after["total_threads"]),
                         (PROCESSES, PROCESSES * THREADS))
        self.assertEqual(after["process_crashes"], crashes + 1)
        self.assertIn(f"worker process {victim} killed by Killed", s.worker_log_text())

    def kill_the_busiest(self, children, others):
        """test_kill_9_of_a_worker_process's kill: locks history until just after it, starts the
        others load and kills -9 the process with the most history requests waiting. Returns the
        victim and when it was killed, on CLOCK_BOOTTIME (started_at()'s clock) and monotonic."""
        s = self.stack
        lock = s.hold_table_lock("history", 60)
        try:
            # At least a process's worth of history requests wait on the lock in worker
            # threads (nginx may hold the others on connections kept to a process whose
            # threads all wait); the process with the most busy threads, as the worker
            # states them, holds at least half of them: it is the victim.
            self.assertIsNotNone(wait_until(lambda: s.lock_waiters() >= THREADS, 10),
                                 "the history requests never waited on the lock")
            victim = max(s.worker_status()["process_list"],
                         key=lambda p: p["active_threads"])["pid"]
            self.assertIn(victim, children)
            others.__enter__()
            killed_at = time.clock_gettime(time.CLOCK_BOOTTIME)  # started_at()'s clock
            killed_at_monotonic = time.monotonic()
            s.tripwire.expect("killed by Killed", "the victim process, killed here")
            os.kill(victim, signal.SIGKILL)
            return victim, killed_at, killed_at_monotonic
        finally:
            s.release_table_lock(lock)

    def wait_replaced(self, victim, threads_each):
        """When the kernel started the victim's replacement (CLOCK_BOOTTIME; None when there is
        none within 10 s), and when this test saw every pool whole again (monotonic: reported,
        not asserted; None when it did not within 10 s)."""
        s = self.stack

        def whole():
            now = s.worker_children()
            return (len(now) == PROCESSES and victim not in now
                    and self.pool_threads(now) == [threads_each] * PROCESSES)

        replaced = wait_until(lambda: victim not in s.worker_children()
                              and len(s.worker_children()) == PROCESSES, 10)
        # When the kernel started the replacement, not when this test saw it.
        replaced_at = replaced and max(started_at(pid) for pid in s.worker_children())
        return replaced_at, wait_until(whole, 10)

    def test_database_down_for_10_s(self):
        s = self.stack
        pids = s.worker_pids()
        crashes = self.status()["process_crashes"]
        # The cached endpoints as clients ask for them, plus what must reach the worker: the
        # database-backed endpoints under unique keys (account is never cached).
        cached = all_endpoints(fixture)
        uncached = [Target(t.path, unique=True) for t in cached if reaches_database(t)]
        load = Load(s.port, cached + uncached, connections=16)
        with load:
            self.wait_cached(cached)
            s.stop_mariadb()
            down_from = time.monotonic()
            # The worker serves /v1/ab from memory until its refreshed supply is too old.
            supply_expired = max(s.supply_expiries())
            pace(10)  # the fault: the database down for 10 s
            down_until = time.monotonic()
            s.start_mariadb()
            restarted_ms = time.time() * 1000
            back = wait_until(lambda: s.get(f"/v1/account?{ACCOUNT_QUERY}").status == 200
                              and s.get(f"/v1/ab?lc={time.monotonic()}").status == 200,
                              30, step=0.1)
            # Every process has reached the database again once each has reloaded its
            # refreshed copies (its refresher shares the circuit breaker its request threads use); a
            # thread that failed to connect just before the restart waits 200 ms more
            # (kReconnectPause), long past by then.
            s.wait_refreshed(after_unix_ms=restarted_ms)
            recovered = time.monotonic() + 0.2
            pace(3)  # the load running on after the recovery
        self.assertIsNotNone(back, "no recovery within 30 s of the restart")
        while_down = load.between(down_from, down_until)
        after = [r for r in load.records if r.started >= recovered]
        unexpected = [r for r in load.records if not (r.ok or is_unavailable(r))]
        report("MariaDB down for 10 s", load, {
            "503 unavailable": "the database was down (the worker's JSON 503, or during the "
                               "restart: the first requests of each thread)"},
            down_s=round(down_until - down_from, 1),
            answered_while_down=len(while_down),
            ok_while_down_from_cache_or_memory=sum(r.ok for r in while_down),
            first_200_after_restart_s=round(back - down_until, 1),
            worker_processes_unchanged=s.worker_pids() == pids)
        self.assertEqual(unexpected, [])
        self.assert_answers_while_down(while_down, supply_expired)
        self.assertGreater(len(after), 100)
        self.assertEqual([r for r in after if not r.ok], [])
        self.assert_nothing_restarted_or_leaked(pids, crashes)

    def wait_cached(self, cached):
        """Every target of cached that nginx caches is in its cache (a copy to serve stale
        later)."""
        s = self.stack
        for target in cached:
            if reaches_database(target):
                self.assertIsNotNone(wait_until(lambda: s.get(target.path).headers.get(
                    "X-Cache-Status") == "HIT", 30, step=0.1), target.path)

    def assert_answers_while_down(self, while_down, supply_expired):
        """What each answer was while the database was down: from memory, nginx's copy, or the
        JSON 503; supply_expired is when the worker's refreshed /v1/ab supply ran out."""
        self.assertGreater(len(while_down), 100)
        for r in while_down:
            if r.endpoint in REFERENCE:
                self.assertTrue(r.ok, r)
            elif r.endpoint == "/v1/ab" and r.started < supply_expired:
                # The worker still answers from its refreshed supply (nginx's refreshes of its
                # copy too), or has just stopped.
                self.assertTrue(r.ok or ("lc=" in r.target and is_unavailable(r)), r)
            elif r.endpoint == "/v1/account" or "lc=" in r.target:
                self.assertTrue(is_unavailable(r), r)
            else:  # nginx's copy: fresh, or stale once past the worker's max-age
                self.assertTrue(r.ok, r)
                self.assertIn(r.cache, ("HIT", "STALE", "UPDATING"), r)
        self.assertTrue(any(r.cache == "STALE" for r in while_down))

    def assert_nothing_restarted_or_leaked(self, pids, crashes):
        """No worker restarted, and no database session leaked: at most a reader and a writer
        per thread and the refresher's per process, and as many after more load."""
        s = self.stack
        self.assertEqual(s.worker_pids(), pids)
        self.assertEqual(self.status()["process_crashes"], crashes)
        sessions = s.db_connections()
        self.assertLessEqual(sessions, 2 * PROCESSES * THREADS + PROCESSES)
        Load(s.port, all_endpoints(fixture, unique=True), connections=16).run_for(2)
        self.assertEqual(s.db_connections(), sessions)

    def test_slow_database(self):
        s = self.stack
        targets = all_endpoints(fixture, unique=True)
        history = [t for t in targets if t.endpoint in HISTORY]
        # Two loads with fewer connections in all than the pool has threads: no request waits
        # for a free thread, so each latency is the worker's own, and the history requests
        # stuck in the database cannot take every thread.
        slow_load = Load(s.port, history, connections=3)
        other_load = Load(s.port, [t for t in targets if t not in history], connections=3)
        with slow_load, other_load:
            pace(1)  # the loads running before the lock
            lock = s.hold_table_lock("history", LOCK_SECONDS)
            # The lock was taken before hold_table_lock() saw its session sleeping, and is held
            # for LOCK_SECONDS from then: this window is inside it.
            locked_from = time.monotonic()
            locked_until = locked_from + LOCK_SECONDS - 1
            lock.wait(timeout=60)
            released = time.monotonic()
            pace(2)  # the loads running on after the release
        slow = slow_load.between(locked_from, locked_until)
        others = other_load.between(locked_from, locked_until)
        after = [r for load in (slow_load, other_load) for r in load.records
                 if r.started > released]
        bound = LOCK_WAIT_S + MARGIN_S
        for name, load in (("history", slow_load), ("other endpoints", other_load)):
            report(f"slow database (history locked {LOCK_SECONDS} s): {name}", load, {
                "503 unavailable": "history and history/hash while the table was locked: the "
                                   "request's time budget ran out in the database"},
                budget_ms=BUDGET_MS, answered_while_locked=len(slow if load is slow_load
                                                               else others),
                max_latency_while_locked_ms=round(max(
                    (r.latency for r in load.between(locked_from, locked_until)),
                    default=0) * 1000))
        self.assertGreaterEqual(len(slow), 3)  # at least one per connection
        for r in slow:
            self.assertTrue(is_unavailable(r), r)
            self.assertLess(r.latency, bound, r)
        self.assertGreater(len(others), 50)
        self.assertEqual([r for r in others if not r.ok], [])
        self.assertGreater(len(after), 20)
        self.assertEqual([r for r in after if not r.ok], [])

    def test_reload_of_workers_and_nginx(self):
        s = self.stack
        reloads = self.status()["config_reloads"]
        nginx_pid = s.nginx_pid()
        load = Load(s.port, all_endpoints(fixture, unique=True), connections=16)
        with load:
            pace(1)  # the load running before the first reload, then between the reloads
            for _ in range(2):
                s.reload_worker()
                pace(1.5)
                s.reload_nginx()
                pace(1.5)
        report("reload of the workers (SIGHUP) and nginx (-s reload), 2 each", load)
        self.assertGreater(load.sent, 100)
        self.assertEqual(failures(load), [])
        # The old generations drain and exit on their own time: wait until they have.
        self.assertIsNotNone(wait_until(lambda: len(s.worker_children()) == PROCESSES and
                                        self.status()["processes"] == PROCESSES, 30, 0.1))
        status = self.status()
        self.assertEqual(status["config_reloads"], reloads + 2)
        self.assertEqual(status["processes"], PROCESSES)
        self.assertEqual(s.nginx_pid(), nginx_pid)  # reloaded, not restarted
        self.assertEqual(len(s.worker_children()), PROCESSES)


class ReplicaKilled(unittest.TestCase):
    def test_kill_9_of_the_replica(self):
        with Stack(fixture=fixture.path, threads=3, replica=True, accounts=True,
                   nginx_env=LOAD_FROM_ONE_CLIENT, config={"processes": PROCESSES}) as s:
            load = Load(s.port, all_endpoints(fixture, unique=True), connections=12)
            with load:
                pace(2)  # the load running before the kill
                # Reads are the replica's: on the primary, the reader has only the pool's lag
                # monitor (db/replica_monitor.h).
                self.assertEqual(s.db_connections(READ_USER), 1)
                self.assertGreater(s.db_connections(READ_USER, replica=True), 0)
                os.kill(s.replica_pid(), signal.SIGKILL)
                pace(4)  # the load running on after the kill
                on_primary = s.db_connections(READ_USER) - 1
            report("kill -9 of the read replica", load, readers_on_primary_after=on_primary)
            self.assertGreater(load.sent, 100)
            self.assertEqual(failures(load), [])
            self.assertGreater(on_primary, 0)


if __name__ == "__main__":
    unittest.main()
