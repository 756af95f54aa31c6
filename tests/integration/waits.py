"""Waiting on a stated condition instead of a clock (harness.py re-exports these): poll a
predicate (wait_for, await_true), or stop a process and wait until every thread of it is
stopped (hang). The two clocks a test may mean are named too, so that a bare time.sleep() in a
test is always a question: pace() (time the test lets pass on purpose) and quiet_window() (a
time in which nothing more may arrive). Python 3 standard library only."""

import os
import signal
import time
from pathlib import Path


def wait_for(predicate, seconds=15, step=0.1):
    """Polls predicate every `step` seconds until it holds (True) or `seconds` pass (False). It
    is asked at least once, and once more after the deadline (a slow machine's last step)."""
    deadline = time.monotonic() + seconds
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


def await_true(predicate, seconds=15, step=0.1, what=""):
    """wait_for() that fails the test (AssertionError) when predicate does not hold within
    `seconds`."""
    if not wait_for(predicate, seconds, step):
        raise AssertionError(f"not within {seconds} s: {what or predicate}")


def hang(pid, seconds=10):
    """Stops a process with SIGSTOP (a hung server) and returns time.monotonic() once every
    thread of it is stopped. kill() returns before that: the stop begins when one thread of the
    process next runs, and on a busy machine another thread can still answer a query for a few
    milliseconds meanwhile, so a test's "stopped at" is taken here. Should the stop not be seen
    in `seconds`, the process is continued before the test fails."""
    os.kill(pid, signal.SIGSTOP)
    try:
        await_true(lambda: _every_thread_stopped(pid), seconds, 0.001, f"process {pid} stopped")
    except BaseException:
        os.kill(pid, signal.SIGCONT)
        raise
    return time.monotonic()


def _every_thread_stopped(pid):
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_bytes()
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended
            continue
        # The state follows the command name, which is in parentheses and may hold any byte.
        if stat.rsplit(b")", 1)[1].split()[0] not in (b"T", b"t"):
            return False
    return True


def pace(seconds):
    """Lets `seconds` pass on purpose, not as a stand-in for a condition: the test's own rhythm
    (a slow client's bytes, writes spread out, a load or a fault left running for a while, a
    lifetime left to run out). What the test then asserts must not depend on the machine having
    done anything in that time; a state it needs is waited for (wait_for, await_true)."""
    time.sleep(seconds)


def quiet_window(seconds):
    """Waits `seconds` in which nothing more may arrive (an event, an answer, a process's
    exit): the caller asserts afterwards that nothing did. An absence has no state to wait on;
    on a slow machine the window only catches less, it never fails a correct service."""
    time.sleep(seconds)
