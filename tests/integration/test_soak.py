"""Soak: many connections across all seven endpoints for a while (load_client.py checks every
response), the worker's memory and file descriptors compared between the start and the end.

The short version runs in the test suite (35 s at 256 connections); scripts/soak runs the long
one (10 minutes by default) through this same test with
    CONNECTOR_SOAK_SECONDS, CONNECTOR_SOAK_CONNECTIONS   duration and connections
    CONNECTOR_SOAK_REPORT=<file>                         the figures, as JSON

Asserted: every answer is a 200 with the body shape of its endpoint; the worker processes are
the same at the end (none crashed or was replaced); their file descriptors, counted while idle,
are as many at the end as at the start; and their resident memory grew by at most
max(RSS_GROWTH_FRACTION of the start, RSS_GROWTH_KB). Both are measured after a warm-up at the
same load, so that every thread has its database connection, its prepared statements, its
malloc arena and the reference data rendered; what a healthy worker still does after that is small
allocator and page-cache noise, not growth with the number of requests (a leak of even 100
bytes a request would be megabytes here).

nginx's cache stays off (the harness default), so every request reaches the worker; the
deposit address of the rotation is recorded by the first request and read by the others.
"""

import json
import os
import time
import unittest

from fixture import Fixture
from harness import LOAD_FROM_ONE_CLIENT, Stack, pace, wait_for
from load_client import Load, all_endpoints

fixture = Fixture()
SECONDS = float(os.environ.get("CONNECTOR_SOAK_SECONDS", "35"))
CONNECTIONS = int(os.environ.get("CONNECTOR_SOAK_CONNECTIONS", "256"))
WARM_UP_SECONDS = 8
KEPT_IDLE_MS = 1000  # fcgi_read_timeout_ms: the idle kept connections are closed after it
SAMPLE_EVERY_S = 10
RSS_GROWTH_FRACTION = 0.10
RSS_GROWTH_KB = 4096
PROCESSES, THREADS = 2, 8  # the shipped defaults


def resources(stack):
    """{pid: (rss kB, open fds)} of the worker's master and processes."""
    return {pid: (stack.process_status(pid, "VmRSS"), stack.open_fds(pid))
            for pid in stack.worker_pids()}


def totals(shot):
    return {"rss_kb": sum(rss for rss, _ in shot.values()),
            "fds": sum(fds for _, fds in shot.values()),
            "per_process": {str(pid): {"rss_kb": rss, "fds": fds}
                            for pid, (rss, fds) in shot.items()}}


def idle_fds(stack, expected, seconds=5):
    """The worker's fds once the last answers are closed: polled (bounded) until they are
    `expected`, for nginx closes its side of a finished FastCGI connection asynchronously."""
    shot = None

    def idle():
        nonlocal shot
        shot = resources(stack)
        return {pid: fds for pid, (_, fds) in shot.items()} == expected
    wait_for(idle, seconds, 0.1)
    return shot


class Soak(unittest.TestCase):
    def test_soak(self):
        # Kept connections (nginx's keep-alive to the workers) are open descriptors too, not
        # leaks: the worker closes one idle for fcgi_read_timeout_ms, so both counts are taken
        # once every kept connection has been idle longer than that.
        # nginx's cache off: every request reaches the worker, whose memory, threads and
        # connections the soak watches (docs/reliability.md); a load from 127.0.0.1.
        with Stack(fixture=fixture.path, threads=THREADS, nginx_env=LOAD_FROM_ONE_CLIENT,
                   nginx_cache=False,
                   config={"processes": PROCESSES,
                           "fcgi_read_timeout_ms": KEPT_IDLE_MS}) as stack:
            targets = all_endpoints(fixture)
            warm = Load(stack.port, targets, CONNECTIONS, keep_records=False)
            warm.run_for(WARM_UP_SECONDS)
            self.assertEqual(warm.failures, {}, warm.summary())
            pace(KEPT_IDLE_MS / 1000 + 1)  # every kept connection idle past its timeout
            start = resources(stack)
            sessions_start = stack.db_connections()

            load = Load(stack.port, targets, CONNECTIONS, keep_records=False)
            samples = []
            with load:
                began = time.monotonic()
                while time.monotonic() - began < SECONDS:
                    pace(min(SAMPLE_EVERY_S, max(0, SECONDS - (time.monotonic() - began))))
                    samples.append({"at_s": round(time.monotonic() - began),
                                    "rss_kb": totals(resources(stack))["rss_kb"],
                                    "sent": load.sent})
            end = idle_fds(stack, {pid: fds for pid, (_, fds) in start.items()},
                           seconds=KEPT_IDLE_MS / 1000 + 5)
            sessions_end = stack.db_connections()
            figures = {"seconds": SECONDS, "warm_up_s": WARM_UP_SECONDS,
                       "processes": PROCESSES, "threads": THREADS, "load": load.summary(),
                       "start": totals(start), "end": totals(end), "rss_samples": samples,
                       "db_sessions": {"start": sessions_start, "end": sessions_end}}
            report = os.environ.get("CONNECTOR_SOAK_REPORT")
            if report:
                with open(report, "w") as f:
                    json.dump(figures, f, indent=2)

            summary = figures["load"]
            self.assertGreater(load.sent, CONNECTIONS * 10)
            self.assertEqual(load.failures, {}, summary)
            self.assertEqual(load.ok, load.sent)
            self.assertEqual(set(end), set(start), "a worker process was replaced")
            for pid, (rss, fds) in start.items():
                self.assertEqual(end[pid][1], fds, f"fds of {pid}: {figures}")
            rss_start, rss_end = figures["start"]["rss_kb"], figures["end"]["rss_kb"]
            self.assertLessEqual(rss_end - rss_start,
                                 max(rss_start * RSS_GROWTH_FRACTION, RSS_GROWTH_KB), figures)
            self.assertEqual(sessions_end, sessions_start)
            self.assertEqual(stack.get("/status").json()["process_crashes"], 0)


if __name__ == "__main__":
    unittest.main()
