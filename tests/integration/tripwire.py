"""The crash tripwire (issue 33): a test fails when, during it, a process beside it died quietly.

An nginx worker that aborts, or a connector-worker process killed by a signal, is replaced by its
master and the next request is answered as if nothing happened: only the logs say so. Every
Stack (harness.py), and every fleet node a test starts, registers its logs here; after each test
method (and when a stack stops) the lines the logs gained are read, and any that means a crash
fails that test:

* nginx's error log: `[alert]`, `[emerg]` or `[crit]` (a worker "exited on signal N" is an
  alert), or an `Assertion` (a module's assert);
* the worker's log: `killed by` (the master's line for a process that died on a signal).

The exceptions are explicit: HARMLESS below, each with why; and a test that kills or breaks a
process on purpose says so first, `stack.tripwire.expect(pattern, why, times)`: that many
matching lines are then allowed, whenever they come (a master may log a death after the test
that caused it ended). Where the count is open (a restart logs a line per request it refuses),
`with stack.tripwire.expecting(pattern, why):` allows any number, only until the block ends.

The hook: importing this module wraps unittest.TestCase.run, so that every test of every
integration module is checked without a base class of its own (there are ninety).
"""

import contextlib
import re
import sys
import threading
import unittest
from pathlib import Path

# A line that means a process died or nginx failed in a way no test expects.
FATAL = re.compile(r"\[(?:alert|emerg|crit)\]|Assertion|killed by ")

# Lines FATAL matches that are harmless, each with why.
HARMLESS = [
    (re.compile(r'\[crit\] .*unlink\(\) ".*/cache/[^"]*" failed \(2: No such file or directory\)'),
     "nginx's cache manager and a worker process both evicting the same answer (a full keys "
     "zone, test_cache_bounds' flood): the second finds the file gone. The entry is freed "
     "either way; nothing is served from it."),
]


class TripwireError(AssertionError):
    """A log beside the test gained a line that means a crash."""


class _Watched:
    """One log file, read from where the last check stopped."""

    def __init__(self, path):
        self.path = Path(path)
        self.inode, self.offset = self._stat()

    def _stat(self):
        try:
            stat = self.path.stat()
            return stat.st_ino, stat.st_size
        except OSError:
            return None, 0

    def new_lines(self):
        inode, size = self._stat()
        if inode != self.inode or size < self.offset:  # a new file, or truncated: from its start
            self.inode, self.offset = inode, 0
        if size == self.offset:
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read(size - self.offset)
        # A line still being written is read at the next check.
        end = data.rfind(b"\n") + 1
        self.offset += end
        return data[:end].decode(errors="replace").splitlines()


class _Expected:
    def __init__(self, pattern, why, times):
        self.pattern = re.compile(pattern)
        self.why = why
        self.left = times


class Tripwire:
    """The logs of one stack (or fleet) and the crashes its tests announced."""

    def __init__(self, name):
        self.name = name
        self._watched = []
        self._expected = []
        self._carried = []  # problems found by an expecting() block's end, not reported yet
        self._lock = threading.Lock()
        _live.add(self)

    def watch(self, path):
        """Checks the lines `path` gains from now on (it need not exist yet)."""
        with self._lock:
            self._watched.append(_Watched(path))

    def expect(self, pattern, why, times=1):
        """Allows `times` lines matching `pattern` (a regular expression), for a process the
        test kills or breaks on purpose; `why` says which and why, for the reader."""
        expected = _Expected(pattern, why, times)
        with self._lock:
            self._expected.append(expected)
        return expected

    @contextlib.contextmanager
    def expecting(self, pattern, why):
        """Allows any number of lines matching `pattern` that the logs gain until the block
        ends (read there), and none after."""
        expected = self.expect(pattern, why, times=float("inf"))
        try:
            yield
        finally:
            found = self.problems()
            with self._lock:
                self._expected.remove(expected)
                self._carried += found

    def problems(self):
        """The fatal lines the logs gained since the last call, less the expected and
        harmless ones."""
        with self._lock:
            found, self._carried = self._carried, []
            for watched in self._watched:
                for line in watched.new_lines():
                    if FATAL.search(line) and not self._allowed(line):
                        found.append(f"{watched.path}: {line}")
        return found

    def _allowed(self, line):
        if any(pattern.search(line) for pattern, _ in HARMLESS):
            return True
        for expected in self._expected:
            if expected.left > 0 and expected.pattern.search(line):
                expected.left -= 1
                return True
        return False

    def close(self):
        """Stops checking (the stack stopped); returns the last problems."""
        found = self.problems()
        _live.discard(self)
        return found


_live = set()


def check_live():
    """The problems of every live tripwire, as one message (None: no problem)."""
    found = [f"{tripwire.name}: {line}" for tripwire in list(_live)
             for line in tripwire.problems()]
    if not found:
        return None
    return ("a process beside this test crashed or nginx logged a fatal line (tests/integration/"
            "tripwire.py; a test that does it on purpose calls tripwire.expect; a master logs a "
            "death a moment after it, so the line may come from the test before):\n" +
            "\n".join(found))


_run = unittest.TestCase.run


def _run_then_check(self, result=None):
    outcome = _run(self, result)
    message = check_live()
    target = result if result is not None else outcome
    if message is not None and target is not None:
        try:
            raise TripwireError(message)
        except TripwireError:
            target.addFailure(self, sys.exc_info())
    return outcome


unittest.TestCase.run = _run_then_check
