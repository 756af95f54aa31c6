"""The worker the way systemd runs it (the unit files themselves: test_systemd_units.py).

* The worker under `systemd-socket-activate` (the socket created and owned by the activator,
  passed as fd 3 with LISTEN_FDS) answers through nginx, and the socket it serves is the one the
  activator created, never unlinked nor recreated.
* It speaks systemd's notify protocol from its main pid (NotifyAccess=main): READY=1, WATCHDOG=1
  every WATCHDOG_USEC/2, RELOADING=1 + READY=1 on SIGHUP, STOPPING=1 on SIGTERM.
* What connector-worker.socket is for: with the socket held open by someone else (here the test,
  as systemd would), a worker restart drops no request; they wait in the accept queue.
* The worker runs, reloads and drains inside the unit's own seccomp sandbox, built from the
  unit's SystemCallFilter=, SystemCallErrorNumber=, RestrictAddressFamilies=,
  MemoryDenyWriteExecute= and NoNewPrivileges= lines the way systemd 252 builds it (libseccomp).
  The rest of the sandbox (ProtectSystem=, User=, ...) needs systemd as PID 1, which the tests
  do not have.
"""

import os
import signal
import stat
import subprocess
import time
import unittest

from fixture import Fixture
from harness import LOAD_FROM_ONE_CLIENT, WORKER, Stack, pace, sanitized_build, wait_for
from systemd_runs import (HeldSocket, Load, NotifySocket, Sandbox, WorkerRun, children_of,
                          listening_unix_sockets, proc_status, sanitizer_env, socket_inode_of_fd)
from systemd_units import FDNAME, INHERITED_LOG_LINE, NETWORKS, SERVICE_UNIT, clean_env

stack = None


def setUpModule():
    global stack
    # nginx's cache off: each request must reach the worker this test started under systemd's
    # stand-in (it checks that one answers); loads from 127.0.0.1 (LOAD_FROM_ONE_CLIENT).
    stack = Stack(fixture=Fixture().path, nginx_cache=False, nginx_env=LOAD_FROM_ONE_CLIENT)
    # Every test here starts its own worker on the stack's socket path, the way systemd would.
    stack.stop_worker()


def tearDownModule():
    stack.stop()


# --- unit files ------------------------------------------------------------------------------


class WorkerUnderSystemd(unittest.TestCase):
    def setUp(self):
        self.runs = []
        self.cleanups = []
        stack.fcgi_socket.unlink(missing_ok=True)

    def tearDown(self):
        for run in self.runs:
            run.kill()
        for cleanup in reversed(self.cleanups):
            cleanup()
        stack.fcgi_socket.unlink(missing_ok=True)

    def notify_socket(self, name):
        notify = NotifySocket(stack.dir / name)
        self.cleanups.append(notify.close)
        return notify

    def get_networks(self):
        try:
            r = stack.get("/v1/networks")
        except OSError as e:
            # Unanswered (seen once in CI, not reproduced since): what the worker and nginx said.
            logs = [run.log()[-3000:] for run in self.runs]
            nginx = (stack.nginx_prefix / "error.log").read_text(errors="replace")[-3000:]
            raise AssertionError(f"/v1/networks unanswered ({e}); worker log:\n" +
                                 "\n".join(logs) + f"\nnginx error log:\n{nginx}") from e
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json(), NETWORKS)
        # Through to the worker, not from nginx's cache.
        self.assertNotIn(r.headers.get("X-Cache-Status"), ("HIT", "STALE", "UPDATING"))
        return r

    def activate(self, name, extra_env=None):
        """The worker under systemd-socket-activate, which creates and listens on the socket
        itself and execs the worker (same pid) at the first connection."""
        log_path = stack.dir / f"{name}.log"
        env = dict(sanitizer_env(), **(extra_env or {}))
        args = ["systemd-socket-activate", "-l", str(stack.fcgi_socket), f"--fdname={FDNAME}",
                *[f"--setenv={k}={v}" for k, v in env.items()],
                str(WORKER), "--config", str(stack.config_path)]
        log = open(log_path, "ab")
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        finally:
            log.close()
        run = WorkerRun(proc, log_path)
        self.runs.append(run)

        def listening():
            self.assertIsNone(proc.poll(), run.log())
            return "Listening on" in run.log()
        if not wait_for(listening, 10, 0.02):
            self.fail(run.log())
        return run

    def test_socket_activated_worker_answers_through_nginx(self):
        run = self.activate("activated")
        # The activator created the socket and waits; no worker runs yet.
        created = os.stat(stack.fcgi_socket)
        self.assertTrue(stat.S_ISSOCK(created.st_mode))
        self.assertEqual(listening_unix_sockets(stack.fcgi_socket),
                         [socket_inode_of_fd(run.proc.pid, 3)])
        self.assertNotIn("starting:", run.log())

        # The first request reaches the socket before any worker exists: it waits in the
        # accept queue, the activator execs the worker, and the worker answers it.
        first = self.get_networks()
        self.assertEqual(first.json(), NETWORKS)
        for _ in range(5):
            self.get_networks()

        log = run.log()
        self.assertIn(INHERITED_LOG_LINE, log)
        self.assertNotIn(f"listening on {stack.fcgi_socket}", log)
        # Same file, and one listening socket on that path: the one the activator made, which
        # the worker (the activator's pid after exec) and its children serve. Had the worker
        # unlinked and recreated the path, /proc/net/unix would list a second listener.
        now = os.stat(stack.fcgi_socket)
        self.assertEqual((now.st_ino, now.st_dev), (created.st_ino, created.st_dev))
        inodes = listening_unix_sockets(stack.fcgi_socket)
        self.assertEqual(len(inodes), 1, inodes)
        self.assertEqual(socket_inode_of_fd(run.proc.pid, 3), inodes[0])
        children = children_of(run.proc.pid)
        self.assertTrue(children, "the master has no worker processes")
        for child in children:
            fds = {socket_inode_of_fd(child, int(fd)) for fd in os.listdir(f"/proc/{child}/fd")
                   if os.readlink(f"/proc/{child}/fd/{fd}").startswith("socket:")}
            self.assertIn(inodes[0], fds, f"worker process {child} does not hold the socket")
        run.stop(self)

    def test_notify_protocol_from_the_main_pid(self):
        notify = self.notify_socket("notify.sock")
        run = self.activate("notify", {"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        self.get_networks()  # starts it
        pid = run.proc.pid
        ready, _ = notify.wait_for("READY")
        # WATCHDOG_USEC=1 s: pings every 0.5 s.
        first_ping, _ = notify.wait_for("WATCHDOG", since=ready + 1, timeout=5)
        second_ping, _ = notify.wait_for("WATCHDOG", since=first_ping + 1, timeout=5)
        third_ping, _ = notify.wait_for("WATCHDOG", since=second_ping + 1, timeout=5)
        interval = notify.messages[third_ping][0] - notify.messages[second_ping][0]
        self.assertLess(interval, 0.9)

        mark = len(notify.messages)
        run.proc.send_signal(signal.SIGHUP)
        reloading, _ = notify.wait_for("RELOADING", since=mark)
        notify.wait_for("READY", since=reloading + 1)
        self.get_networks()

        mark = len(notify.messages)
        run.proc.send_signal(signal.SIGTERM)
        notify.wait_for("STOPPING", since=mark)
        run.stop(self)
        notify.drain(0.2)
        senders = {m[1] for m in notify.messages}
        self.assertEqual(senders, {pid}, "NotifyAccess=main: only the master may notify; got "
                                         f"{[(m[1], m[2]) for m in notify.messages]}")

    def test_a_lone_request_after_each_of_30_reloads_is_answered(self):
        """One request at a time, each right after a reload's READY=1: the moment a new
        connection can wake only a process that is leaving the socket (EPOLLEXCLUSIVE), which
        then takes it from the queue (WorkerPool::take_queued_connections) instead of leaving it
        for nginx's read timeout, as test_notify_protocol_from_the_main_pid once saw."""
        notify = self.notify_socket("reloads.sock")
        run = self.activate("reloads", {"NOTIFY_SOCKET": notify.path})
        self.get_networks()  # starts it
        notify.wait_for("READY")
        for _ in range(30):
            mark = len(notify.messages)
            run.proc.send_signal(signal.SIGHUP)
            reloading, _ = notify.wait_for("RELOADING", since=mark)
            notify.wait_for("READY", since=reloading + 1)
            self.get_networks()
        run.stop(self)

    def test_the_watchdog_is_fed_only_while_every_process_beats(self):
        """A worker process made to hang (SIGSTOP) stops beating; past the heartbeat limit
        (2 x fcgi_read_timeout_ms + request_timeout_ms + 3 s: 4.5 s here) the master stops
        feeding the watchdog, so systemd would restart the service; once it beats again, the
        pings resume."""
        notify = self.notify_socket("watchdog.sock")
        run = self.activate("watchdog", {
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000",
            "CONNECTOR_FCGI_READ_TIMEOUT_MS": "500", "CONNECTOR_REQUEST_TIMEOUT_MS": "500"})
        self.get_networks()  # starts it
        ready, _ = notify.wait_for("READY")
        notify.wait_for("WATCHDOG", since=ready + 1, timeout=5)
        stuck = children_of(run.proc.pid)[0]
        os.kill(stuck, signal.SIGSTOP)
        try:
            withheld = f"worker process {stuck} shows no progress for over 4500 ms"
            deadline = time.monotonic() + 60
            while withheld not in run.log():
                self.assertLess(time.monotonic(), deadline, run.log()[-3000:])
                notify.drain(0.1)
            notify.drain(0.5)  # pings sent before the line was written
            mark = len(notify.messages)
            notify.drain(2.5)  # five ping intervals
            self.assertEqual([m[2] for m in notify.messages[mark:] if "WATCHDOG" in m[2]], [])
        finally:
            os.kill(stuck, signal.SIGCONT)
        notify.wait_for("WATCHDOG", since=mark, timeout=30)
        self.assertIn("every worker process beats again; feeding the watchdog", run.log())
        run.stop(self)

    def test_restart_under_a_held_socket_drops_no_request(self):
        held = HeldSocket(stack.fcgi_socket)
        self.cleanups.append(held.close)
        notify = self.notify_socket("notify.sock")
        env = clean_env(dict(sanitizer_env(), NOTIFY_SOCKET=str(notify.path)))
        args = [WORKER, "--config", stack.config_path]

        first = held.spawn(args, env, stack.dir / "held-1.log")
        self.runs.append(first)
        mark, _ = notify.wait_for("READY")
        self.get_networks()
        with Load(stack) as load:
            pace(1.0)  # the load running before the stop
            first.stop(self)
            gone = time.monotonic()
            pace(0.5)  # no worker at all: requests wait in the accept queue
            second = held.spawn(args, env, stack.dir / "held-2.log")
            self.runs.append(second)
            notify.wait_for("READY", since=mark + 1)
            back = time.monotonic()
            pace(1.0)  # the load running after
        second.stop(self)

        self.assertEqual(load.failures(), [])
        self.assertGreater(len(load.results), 20)
        # Requests sent before the first worker was gone and answered after the second was
        # ready: they waited in the socket's queue while no worker ran at all.
        waited = [r for r in load.results if r[0] < gone and r[1] > back]
        self.assertTrue(waited, "no request waited for the second worker")
        self.assertIn(INHERITED_LOG_LINE, first.log())
        self.assertIn(INHERITED_LOG_LINE, second.log())

    def test_worker_serves_reloads_and_drains_inside_the_units_sandbox(self):
        sandbox = Sandbox(SERVICE_UNIT)
        self.assertIn("clone3", sandbox.allowed)
        self.assertNotIn("ptrace", sandbox.allowed)
        held = HeldSocket(stack.fcgi_socket)
        self.cleanups.append(held.close)
        notify = self.notify_socket("notify.sock")
        extra = dict(sanitizer_env(), NOTIFY_SOCKET=str(notify.path))
        if sanitized_build():
            # LeakSanitizer inspects the process with ptrace, which the filter denies (as it
            # would under systemd); AddressSanitizer and UBSan still check everything else.
            extra["ASAN_OPTIONS"] = extra.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        run = held.spawn([WORKER, "--config", stack.config_path], clean_env(extra),
                         stack.dir / "sandbox.log", sandbox=sandbox)
        self.runs.append(run)
        ready, _ = notify.wait_for("READY")
        for pid in [run.proc.pid, *children_of(run.proc.pid)]:
            status = proc_status(pid)
            self.assertEqual(status["NoNewPrivs"].strip(), "1")
            self.assertEqual(status["Seccomp"].strip(), "2")  # filter mode
            self.assertEqual(status["Seccomp_filters"].strip(), str(len(sandbox.programs)))
        for _ in range(10):
            self.get_networks()
        before = set(children_of(run.proc.pid))
        run.proc.send_signal(signal.SIGHUP)  # new worker processes are forked in the sandbox
        reloading, _ = notify.wait_for("RELOADING", since=ready + 1)
        notify.wait_for("READY", since=reloading + 1)
        wait_for(lambda: not set(children_of(run.proc.pid)) & before, 20, 0.05)
        self.assertFalse(set(children_of(run.proc.pid)) & before, "old worker processes stayed")
        self.assertTrue(children_of(run.proc.pid), "no new worker processes")
        for _ in range(10):
            self.get_networks()
        log = run.stop(self)
        self.assertNotIn("Operation not permitted", log)
        self.assertNotIn("Address family not supported", log)


if __name__ == "__main__":
    unittest.main()
