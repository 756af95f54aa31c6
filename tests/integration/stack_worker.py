"""Stack's connector-worker (StackWorker, a part of Stack): started and stopped, its /status,
its processes' refreshed copies, its configuration rewritten, its processes and their resources.
Python 3 standard library only."""

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from fcgi_client import fcgi_get
from harness_base import (SANITIZER_MARKERS, WORKER, WORKER_START_TIMEOUT, WORKER_STOP_TIMEOUT,
                          WORKER_WRAPPER, StackError, _tail)
from waits import await_true, wait_for


class StackWorker:
    """Stack's worker (self.worker, self.settings, self.config_path, self.fcgi_socket,
    self.worker_log, self._worker_env and self._env() are Stack's)."""

    def start_worker(self, timeout=WORKER_START_TIMEOUT, wait_loaded=True):
        """Starts connector-worker and waits until its socket accepts connections and (with
        wait_loaded) until every process has loaded its refreshed copies (wait_refreshed()), so a
        test that changes the database next changes it under copies that are already loaded.
        Pass wait_loaded=False when the database cannot be reached."""
        if self.fcgi_socket.exists():
            self.fcgi_socket.unlink()
        log = open(self.worker_log, "ab")
        # The environment overrides the file: its password must be the worker's own.
        env = self._env({"CONNECTOR_DB_PASSWORD": str(self.settings["db_password"]),
                         **self._worker_env})
        self.worker = subprocess.Popen([*WORKER_WRAPPER, str(WORKER), "--config",
                                        str(self.config_path)],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=env)
        log.close()
        deadline = time.monotonic() + timeout

        def listening():
            self._fail_if_exited()
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.fcgi_socket))
                return True
            except OSError:
                return False
        if not wait_for(listening, timeout, 0.05):
            raise StackError(f"connector-worker not listening on {self.fcgi_socket} after "
                             f"{timeout} s:\n{_tail(self.worker_log)}")
        if wait_loaded:
            self.wait_refreshed(timeout=max(0.0, deadline - time.monotonic()))

    def wait_events_ready(self):
        """Until the publisher runs (its cursor known) and the events nginx answers it: the
        worker started before nginx, and hands nothing over until then (a stream is told to
        come back shortly)."""
        def ready():
            events = self.worker_status()["events"]
            return events["cursor"] is not None and events["events_nginx_answers"]
        await_true(ready, what="the event publisher running and the events nginx answering it")

    def worker_status(self):
        """The worker's /status (JSON), asked on its FastCGI socket (no nginx in between)."""
        status, _, body = fcgi_get(self.fcgi_socket, "/status")
        if status != 200:
            raise StackError(f"/status answered {status}: {body[:200]!r}")
        return json.loads(body)

    def settled_status(self, timeout=10):
        """/status (through nginx) once no request but its own is in a thread: a thread counts
        its request and frees itself after writing the answer, so a client may read /status
        before those figures move. Returns (status, how many /status requests it took);
        raises StackError if some thread stays busy for `timeout` seconds."""
        seen = []

        def settled():
            seen.append(self.get("/status").json())
            return seen[-1]["active_threads"] == 1
        if not wait_for(settled, timeout, 0.05):
            raise StackError(f"a worker thread stayed busy for {timeout} s: {seen[-1]}")
        return seen[-1], len(seen)

    def supply_expiries(self):
        """When each worker process's refreshed supply (/v1/ab) stops being served, on
        time.monotonic(): its load time from /status plus its maximum age (db/refreshed_supply.h:
        two reference_refresh_ms intervals, the interval at least 50 ms, the age at least 1 s)."""
        interval_ms = max(int(self.settings.get("reference_refresh_ms", 1000)), 50)
        max_age_s = max(2 * interval_ms, 1000) / 1000
        return [p["supply_snapshot"]["loaded_monotonic_ns"] / 1e9 + max_age_s
                for p in self.worker_status()["process_list"]]

    def wait_refreshed(self, after_unix_ms=0, timeout=WORKER_START_TIMEOUT):
        """Waits until every worker process (the configured number, none retiring) serves
        reference data and supply copies whose load began after after_unix_ms (0: any load),
        as the processes state it in /status; returns their process_list entries. Raises
        StackError after `timeout` seconds with what they showed."""
        shown, loaded = None, []

        def all_loaded():
            nonlocal shown, loaded
            try:
                shown = self.worker_status()
                serving = [p for p in shown["process_list"] if not p["retiring"]]
                loaded = [p for p in serving
                          if min(p["reference_snapshot"]["as_of_unix_ms"],
                                 p["supply_snapshot"]["as_of_unix_ms"]) > after_unix_ms]
                if len(serving) == len(loaded) == shown["configured_processes"]:
                    return True
            except OSError:  # a process that was ending as it was asked
                pass
            if self.worker is not None:
                self._fail_if_exited()
            return False
        if not wait_for(all_loaded, timeout, 0.05):
            raise StackError(f"the worker's processes did not load refreshed copies newer than "
                             f"{after_unix_ms} within {timeout} s; /status: {shown}\n"
                             f"{_tail(self.worker_log)}")
        return loaded

    def _fail_if_exited(self):
        """Raises StackError, with its log's tail, if connector-worker has exited."""
        if self.worker.poll() is not None:
            raise StackError(f"connector-worker exited with {self.worker.returncode}:\n"
                             f"{_tail(self.worker_log)}")

    def rewrite_config(self, **changes):
        """Changes worker config keys (a value of None removes the key) and rewrites the file;
        takes effect at the next start_worker()."""
        for key, value in changes.items():
            if value is None:
                self.settings.pop(key, None)
            else:
                self.settings[key] = value
        self.config_path.write_text("# written by tests/integration/harness.py\n" + "".join(
            f"{key} = {value}\n" for key, value in self.settings.items()))

    def stop_worker(self):
        """SIGTERM, then SIGKILL after 10 s (120 s under CONNECTOR_WORKER_WRAPPER). Raises
        StackError if it had to be killed or a sanitizer reported anything."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        problem = None
        if worker.poll() is not None:
            problem = f"connector-worker had exited by itself with {worker.returncode}"
        else:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=WORKER_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
                problem = (f"connector-worker did not exit within {WORKER_STOP_TIMEOUT} s "
                           "of SIGTERM")
        log = self.worker_log.read_text(errors="replace") if self.worker_log.exists() else ""
        if problem is None and any(marker in log for marker in SANITIZER_MARKERS):
            problem = "a sanitizer reported an error in connector-worker"
        if problem:
            raise StackError(f"{problem}:\n{_tail(self.worker_log, 80)}")

    def worker_log_text(self):
        return self.worker_log.read_text(errors="replace")

    def worker_children(self):
        """The PIDs of the worker master's live child processes (its worker processes)."""
        pid = self.worker.pid
        children = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                children += [int(c) for c in (task / "children").read_text().split()]
            except OSError:  # the thread ended meanwhile
                pass
        return sorted(children)

    def worker_pids(self):
        """The master's PID, then its children's."""
        return [self.worker.pid, *self.worker_children()]

    @staticmethod
    def process_status(pid, field):
        """A field of /proc/PID/status as an int (VmRSS in kB, Threads), None if PID is gone."""
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return None

    @staticmethod
    def open_fds(pid):
        """The number of file descriptors PID has open, None if it is gone."""
        try:
            return len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return None

    def reload_worker(self):
        """SIGHUP to the worker master: it reads its config again and replaces its processes."""
        self.worker.send_signal(signal.SIGHUP)
