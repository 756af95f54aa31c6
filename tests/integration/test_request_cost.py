"""The request path's cost, counted rather than timed (issue 35): the system calls and the heap
allocations of the worker's pool threads per answer, over 1,000 answers on one kept
connection, for each kind of answer the budgets of docs/BENCHMARKS.md name ("The request path
at its floor"):

* an answer held in memory (/v1/networks);
* one record (/v1/history/hash): one statement;
* a page of 20 records (/v1/history?page_size=20): one statement, the total in it.

System calls: `strace -c` attached to the pool's threads (named "pool"), so the background
threads (the refresher's, named "snapshots", lag monitor, publisher, prober, pending requests)
are not counted. The floor of this design for an answer held in memory is 5: the wake-up
(epoll_wait), the screen's look at the request (recv MSG_PEEK), libfcgi's read, the answer in
one writev, and the kept connection armed again (epoll_ctl). A statement adds its round trip to
MariaDB.

Allocations: calls of libc's malloc, calloc and realloc (operator new's included), counted by
perf with uprobes on the libc the worker has mapped (`perf probe`: added for this run, removed
at its end), on the same threads. The plain build only: the sanitized worker's allocations are
AddressSanitizer's, not libc's. Both counts must also reach a floor (one write per answer, and
the allocations libfcgi alone makes), so that a probe or a trace that counts nothing fails.

Through nginx as it ships, but for two settings, each because of what is counted: its cache off
(a cached answer never reaches the worker) and its per-client rate limit off (the 1,000 answers
come from one client, as fast as the worker gives them)."""

import http.client
import os
import re
import select
import signal
import subprocess
import unittest
from pathlib import Path

from fixture import Fixture
from harness import Stack, await_true, sanitized_build, wait_for

fixture = Fixture()
REQUESTS = 1000
ALLOCATORS = ("malloc", "calloc", "realloc")
PROBE_PREFIX = "connector_cost_"  # this test's uprobes: probe_libc:connector_cost_malloc, ...

# Per answer. System calls: the floor of 5 above, the access log's line (one write: it is on as
# shipped), and for a statement its round trip: the query sent, the answer read, and when it has
# not come yet (most often) a read that finds nothing and a poll (libmariadb's wait with the
# read timeout). The pool's once-a-second heartbeats add a few hundredths at most.
# Allocations: as measured at the commit that set them (docs/BENCHMARKS.md), with a margin of a
# few: 17 of the memory answer's are libfcgi's (a request's streams and parameters).
BUDGETS = {
    "memory": {"path": "/v1/networks", "syscalls": 6.3, "allocations": 38},
    "record": {"path": None, "syscalls": 10.3, "allocations": 157},
    "page of 20": {"path": "/v1/history?page_size=20", "syscalls": 10.3, "allocations": 351},
}

stack = None


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=2, config={"processes": 1},
                  nginx_cache=False, nginx_env={"NGINX_CONNECTOR_RATE": "off"})
    BUDGETS["record"]["path"] = f"/v1/history/hash?hash={fixture.records()[0]['hash']}"


def tearDownModule():
    remove_probes()
    stack.stop()


def pool_threads():
    """The thread ids of the worker process's pool (its one process's threads named "pool")."""
    master = stack.worker.pid
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                              text=True).stdout.split()
    assert len(children) == 1, f"one worker process expected, found {children}"
    tasks = Path(f"/proc/{children[0]}/task")
    tids = [t.name for t in tasks.iterdir() if (t / "comm").read_text().strip() == "pool"]
    assert len(tids) == 2, f"two pool threads expected, found {tids}"
    return tids


def answer_many(path, count):
    """`count` GETs of `path`, one after the other on one connection to nginx (which keeps one
    connection to the worker): each must be a 200."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=30)
    try:
        for _ in range(count):
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            assert response.status == 200, (path, response.status)
    finally:
        connection.close()


def counted(tool, path, counting, pass_fds=()):
    """Runs `tool` (a command attached to the pool's threads, which stops on SIGINT and writes
    its report to its -o file) over REQUESTS answers of `path`, sent once counting(its Popen)
    has returned (it returns once the tool counts on every pool thread); the report's text."""
    answer_many(path, 20)  # warm: the refreshed copies, prepared statements, the kept connection
    report = Path(stack.dir) / "cost-report.txt"
    report.unlink(missing_ok=True)
    attached = subprocess.Popen([*tool, "-o", str(report)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                pass_fds=pass_fds)
    try:
        counting(attached)
        answer_many(path, REQUESTS)
    finally:
        attached.send_signal(signal.SIGINT)
        _, errors = attached.communicate(timeout=60)
    assert wait_for(report.exists, seconds=10), f"{tool[0]} wrote no report: {errors}"
    text = report.read_text()
    assert text.strip(), f"{tool[0]} wrote no report: {errors}"
    return text


def tracer_of(tid):
    """The pid of the process ptrace-attached to thread `tid` (0: none)."""
    status = Path(f"/proc/{tid}/status").read_text()
    return int(re.search(r"^TracerPid:\s+(\d+)$", status, re.M).group(1))


# AddressSanitizer's allocator maps and unmaps memory itself: not the worker's system calls.
SANITIZER_SYSCALLS = {"mmap", "munmap", "madvise", "mprotect"}


def syscalls_per_answer(path):
    """{system call: calls per answer} of the pool threads (in the sanitized build, without
    the sanitizer's own memory mapping)."""
    threads = pool_threads()
    tool = ["strace", "-c", "-U", "calls,name"]
    for tid in threads:
        tool += ["-p", tid]

    def traced(strace):
        # Attached (PTRACE_SEIZE): from then on each of the thread's calls stops for strace.
        def attached():
            assert strace.poll() is None, f"strace exited: {strace.stderr.read()}"
            return all(tracer_of(tid) == strace.pid for tid in threads)
        await_true(attached, 30, 0.01, what="strace attached to every pool thread")
    calls = {}
    for line in counted(tool, path, traced).splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1] != "total":
            if not (sanitized_build() and fields[1] in SANITIZER_SYSCALLS):
                calls[fields[1]] = int(fields[0]) / REQUESTS
    return calls


def worker_libc():
    """The libc the worker process has mapped (its path as the process sees it)."""
    child = subprocess.run(["pgrep", "-P", str(stack.worker.pid)], capture_output=True,
                           text=True).stdout.split()[0]
    for line in Path(f"/proc/{child}/maps").read_text().splitlines():
        path = line.split()[-1]
        if re.search(r"/libc\.so\.6$|/libc-[0-9.]+\.so$", path):
            return path
    raise AssertionError("the worker maps no libc")


def remove_probes():
    try:
        subprocess.run(["perf", "probe", "-q", "-d", f"probe_libc:{PROBE_PREFIX}*"],
                       capture_output=True, text=True)
    except FileNotFoundError:
        pass  # no perf: the allocation test itself says so


def add_probes():
    """Fresh uprobes on the allocators of the worker's libc (any left by an earlier run that
    was killed are removed first: they may point at a libc since replaced)."""
    remove_probes()
    libc = worker_libc()
    for function in ALLOCATORS:
        subprocess.run(["perf", "probe", "-q", "-x", libc, "--add",
                        f"{PROBE_PREFIX}{function}={function}"],
                       check=True, capture_output=True, text=True)


def allocations_per_answer(path):
    """{allocator: calls per answer} of the pool threads."""
    add_probes()
    events = ",".join(f"probe_libc:{PROBE_PREFIX}{f}" for f in ALLOCATORS)
    # The counters start disabled (--delay=-1) and count from perf's "ack" of "enable" on its
    # control pipes, not from a moment after it started.
    control_perf, control = os.pipe()  # perf reads its commands from the first end
    ack, ack_perf = os.pipe()  # perf writes "ack" to the second end
    tool = ["perf", "stat", "-x", ",", "-e", events, "-t", ",".join(pool_threads()),
            "--delay=-1", f"--control=fd:{control_perf},{ack_perf}"]

    def enabled(perf):
        os.write(control, b"enable\n")
        ready, _, _ = select.select([ack], [], [], 30)
        answer = os.read(ack, 64) if ready else b""
        assert answer.startswith(b"ack"), f"perf did not enable its counters: {answer!r}"
    try:
        report = counted(tool, path, enabled, pass_fds=(control_perf, ack_perf))
    finally:
        for fd in (control, control_perf, ack_perf, ack):
            os.close(fd)
    calls = {}
    for line in report.splitlines():
        match = re.match(rf"^(\d+),[^,]*,probe_libc:{PROBE_PREFIX}(\w+)", line)
        if match:
            calls[match.group(2)] = int(match.group(1)) / REQUESTS
    assert set(calls) == set(ALLOCATORS), f"perf counted {calls}"
    return calls


def describe(calls):
    return ", ".join(f"{name} {n:.2f}" for name, n in sorted(calls.items(), key=lambda c: -c[1]))


class RequestCost(unittest.TestCase):
    def test_system_calls_per_answer_stay_within_budget(self):
        for kind, budget in BUDGETS.items():
            with self.subTest(kind):
                calls = syscalls_per_answer(budget["path"])
                total = sum(calls.values())
                print(f"system calls per answer, {kind}: {total:.2f} ({describe(calls)})")
                self.assertLessEqual(total, budget["syscalls"], describe(calls))
                # Every answer is one write, and one wake-up: nothing else wakes the pool but
                # its heartbeats and the kept connections' sweep, a few a second.
                self.assertAlmostEqual(calls.get("writev", 0), 1.0, delta=0.01)
                self.assertLessEqual(calls.get("epoll_wait", 0), 1.1)

    @unittest.skipIf(sanitized_build(), "AddressSanitizer replaces libc's allocator")
    def test_heap_allocations_per_answer_stay_within_budget(self):
        for kind, budget in BUDGETS.items():
            with self.subTest(kind):
                calls = allocations_per_answer(budget["path"])
                total = sum(calls.values())
                print(f"heap allocations per answer, {kind}: {total:.1f} ({describe(calls)})")
                self.assertLessEqual(total, budget["allocations"], describe(calls))
                # libfcgi alone allocates 17 per request: fewer means nothing was counted.
                self.assertGreaterEqual(total, 17, describe(calls))


if __name__ == "__main__":
    unittest.main()
