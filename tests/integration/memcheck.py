"""Valgrind's memcheck over the unit tests and the worker (ctest: integration.memcheck, in the
plain build only): every unit-test binary of the build runs under valgrind, then a
representative set of integration tests runs with the worker under valgrind. Valgrind's log of
every process (the worker's master and each forked worker process write their own) must end
with "ERROR SUMMARY: 0 errors". Definite leaks count as errors; only third-party noise is
suppressed, in tests/valgrind.supp.

    CONNECTOR_BUILD_DIR=/tmp/build python3 memcheck.py [test_module ...]

Named test modules: only those, without the unit tests.

Exit status 0 when the tests passed and valgrind found nothing; the logs of a failing run (of
every run with CONNECTOR_MEMCHECK_KEEP=1) are kept, and their directory printed.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("CONNECTOR_REPO") or HERE.parents[1])
# The reference endpoints, history paging and filters, deposit addresses (the one write), and
# malformed input: every code path of a request, with the database up and down.
TESTS = ["test_stack_smoke", "test_reference_endpoints", "test_history", "test_hostile_input",
         "test_account"]
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts")


BUILD_DIR = Path(os.environ.get("CONNECTOR_BUILD_DIR") or REPO / "build")


def valgrind_command(log_file):
    return ["valgrind", "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
            "--track-origins=yes", "--num-callers=30",
            f"--suppressions={REPO / 'tests' / 'valgrind.supp'}", f"--log-file={log_file}"]


def two_at_a_time(run, items):
    """run(item) for each item, two at a time on two cores or more (ctest runs nothing beside
    memcheck); returns what the runs returned other than None, in the items' order."""
    with ThreadPoolExecutor(max_workers=min(2, len(os.sched_getaffinity(0)))) as pool:
        return [failure for failure in pool.map(run, items) if failure is not None]


def run_unit_tests(log_dir):
    """Each unit-test binary of the build under valgrind; returns the names that failed."""
    binaries = [b for b in sorted((BUILD_DIR / "tests").glob("test_*"))
                if b.is_file() and os.access(b, os.X_OK)]

    def run(binary):
        result = subprocess.run(valgrind_command(f"{log_dir}/unit.{binary.name}.log")
                                + [str(binary)], capture_output=True, text=True, timeout=600,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            return f"{binary.name} exited {result.returncode}:\n{result.stdout[-3000:]}"
        return None

    return two_at_a_time(run, binaries)


def run_test_modules(tests, env):
    """Each test module in a unittest process of its own (each starts its own stack: MariaDB,
    the worker under valgrind, nginx); returns the modules that failed."""
    def run(module):
        result = subprocess.run([sys.executable, "-m", "unittest", module], cwd=HERE, env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=1200)
        print(f"memcheck: {module}: {'passed' if result.returncode == 0 else 'FAILED'}",
              flush=True)
        if result.returncode != 0:
            return f"{module}:\n{result.stderr[-6000:]}"
        return None

    return two_at_a_time(run, tests)


def check_logs(log_dir):
    """(number of logs, problems): a log whose summary is not 0 errors, or that has none (the
    process never finished, e.g. killed)."""
    logs = sorted(Path(log_dir).glob("*.log"))
    problems = []
    for log in logs:
        text = log.read_text(errors="replace")
        found = SUMMARY.findall(text)
        if not found:
            problems.append(f"{log.name}: no ERROR SUMMARY (the process did not exit normally)")
        elif found[-1][0] != "0":
            problems.append(f"{log.name}: {found[-1][0]} errors\n{text[-6000:]}")
    return len(logs), problems


def main(tests, unit):
    if shutil.which("valgrind") is None:
        print("memcheck: valgrind is not installed (scripts/install-deps installs it)", flush=True)
        return 1
    log_dir = Path(tempfile.mkdtemp(prefix="connector-memcheck-"))
    started = time.monotonic()
    unit_failed = run_unit_tests(log_dir) if unit else []
    units = len(list(log_dir.glob("unit.*.log")))
    print(f"memcheck: {units} unit-test binaries, {len(unit_failed)} failed, in "
          f"{time.monotonic() - started:.0f} s")
    for failure in unit_failed:
        print(f"memcheck: {failure}", flush=True)
    wrapper = shlex.join(valgrind_command(f"{log_dir}/worker.%p.log"))
    env = dict(os.environ, CONNECTOR_WORKER_WRAPPER=wrapper)
    started = time.monotonic()
    tests_failed = run_test_modules(tests, env)
    workers = len(list(log_dir.glob("worker.*.log")))
    print(f"memcheck: {len(tests)} test modules, {len(tests_failed)} failed, in "
          f"{time.monotonic() - started:.0f} s, {workers} worker processes")
    for failure in tests_failed:
        print(f"memcheck: {failure}", flush=True)
    count, problems = check_logs(log_dir)
    print(f"memcheck: {count} valgrind logs, {count - len(problems)} with 0 errors", flush=True)
    for problem in problems:
        print(f"memcheck: {problem}", flush=True)
    if workers == 0:
        problems.append("no valgrind log: the worker never ran under valgrind")
    if unit and units == 0:
        problems.append(f"no unit-test binary in {BUILD_DIR / 'tests'}")
    failed = bool(tests_failed) or bool(problems) or bool(unit_failed)
    if failed or os.environ.get("CONNECTOR_MEMCHECK_KEEP") == "1":
        print(f"memcheck: logs kept in {log_dir}", flush=True)
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or TESTS, unit=not sys.argv[1:]))
