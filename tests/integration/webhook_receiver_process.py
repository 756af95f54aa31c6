"""The webhook receiver (webhook_receiver.py) as a process of its own, for scripts/bench-webhooks:
one or N processes sharing its port (SO_REUSEPORT), each recording to a file of its own in its
state directory D, all following D/control.json. `python3 webhook_receiver.py --state-dir D ...`
runs main(); ReceiverProcess starts one and has WebhookReceiver's API.

D holds: ready ({"port", "ca_file", "pids"}: every process listens), deliveries-<process>.jsonl
(one JSON object per request, webhook_receiver.DELIVERY_FIELDS; read_deliveries(D) merges them
in receipt order), control.json (written by whoever drives it, atomically: {"version", "down",
"paths": {path: {"secret", "status", "delay", "drop"}}}) and applied-<process> ({"version"} of
the control it has applied, checked every 20 ms). Standard library only."""

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from webhook_receiver import WebhookReceiver, make_certificates

RECEIVER = Path(__file__).resolve().with_name("webhook_receiver.py")


def read_deliveries(state_dir):
    """Every request the processes of the receiver in `state_dir` recorded, in receipt order (a
    line still being written is left for the next read)."""
    deliveries = []
    for log in sorted(Path(state_dir).glob("deliveries-*.jsonl")):
        text = log.read_text(encoding="utf-8")
        deliveries += [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines()]
    return sorted(deliveries, key=lambda d: d["monotonic"])


def write_json(path, value):
    """Writes `value` as JSON to `path` atomically (a reader sees the old file or the new)."""
    temporary = Path(f"{path}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    os.replace(temporary, path)


def read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def _follow_control(receiver, state_dir, stopping):
    """Applies D/control.json each time it changes, then says so in D/applied-<process>."""
    control = Path(state_dir) / "control.json"
    seen = "never"
    while not stopping.is_set():
        try:
            stat = control.stat()
            key = stat.st_ino, stat.st_mtime_ns
        except FileNotFoundError:
            key = None
        if key != seen:
            seen = key
            state = read_json(control) or {"version": 0, "paths": {}}
            for path, settings in state["paths"].items():
                receiver.register(path, settings["secret"])
                receiver.set_behaviour(path, settings.get("status", 200),
                                       settings.get("delay", 0.0), settings.get("drop", False))
            (receiver.down if state.get("down") else receiver.up)()
            write_json(Path(state_dir) / f"applied-{receiver.process}",
                       {"version": state["version"]})
        stopping.wait(0.02)


def _run_process(args, index, port):
    """One process of the receiver (forked): serves until SIGTERM, or until its parent dies."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    receiver = WebhookReceiver(tls=not args.http, port=port, host=args.host,
                               cert_dir=args.state_dir, keep_bodies=args.keep_bodies,
                               tolerance=args.tolerance, reuse_port=True, process=index,
                               log_file=args.state_dir / f"deliveries-{index}.jsonl")
    receiver.start()
    _follow_control(receiver, args.state_dir, stopping)
    receiver.stop()


def _arguments(argv):
    parser = argparse.ArgumentParser(description="A webhook receiver (tests/integration/"
                                     "webhook_receiver.py) as a process of its own.")
    parser.add_argument("--state-dir", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0, help="0: a free one (in D/ready)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--http", action="store_true", help="plain http, no TLS")
    parser.add_argument("--keep-bodies", action="store_true", help="each body in its line")
    parser.add_argument("--tolerance", type=int, default=300)
    return parser.parse_args(argv)


def _start_processes(args):
    """Forks the processes, each listening on the same port; returns (port, pids) once all do."""
    d = args.state_dir
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        holder.bind((args.host, args.port))  # the port, held until every process has bound it
        port = holder.getsockname()[1]
        pids = []
        for index in range(args.processes):
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    holder.close()
                    _run_process(args, index, port)
                    status = 0
                except BaseException:
                    traceback.print_exc()
                finally:
                    os._exit(status)
            pids.append(pid)
        while not all((d / f"applied-{i}").exists() for i in range(args.processes)):
            if any(os.waitpid(pid, os.WNOHANG) != (0, 0) for pid in pids):
                raise SystemExit("webhook_receiver: a process ended before it listened")
            time.sleep(0.01)
    return port, pids


def main(argv=None):
    args = _arguments(argv)
    d = args.state_dir = args.state_dir.resolve()  # ready's ca_file: a path for any cwd
    d.mkdir(parents=True, exist_ok=True)
    for old in (*d.glob("deliveries-*.jsonl"), *d.glob("applied-*"), d / "ready"):
        old.unlink(missing_ok=True)
    ca_file = None if args.http else str(make_certificates(d)[0])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    port, pids = _start_processes(args)
    write_json(d / "ready", {"port": port, "ca_file": ca_file, "pids": pids})
    while not stop.wait(0.2) and all(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in pids):
        pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):  # it ended, and was reaped above
            pass
    return 0 if stop.is_set() else 1


class ReceiverProcess:
    """Starts `webhook_receiver.py` (`processes` of them on one port) and drives it through its
    state directory: the API of WebhookReceiver, each change applied by every process before
    the call returns."""

    def __init__(self, state_dir=None, processes=1, tls=True, port=0, keep_bodies=False,
                 tolerance=300):
        self.state_dir = Path(state_dir or tempfile.mkdtemp(prefix="webhook-receiver-"))
        self.processes, self.tls = processes, tls
        self.args = ["--state-dir", str(self.state_dir), "--port", str(port), "--processes",
                     str(processes), "--tolerance", str(tolerance),
                     *([] if tls else ["--http"]), *(["--keep-bodies"] if keep_bodies else [])]
        self.process = self.port = self.ca_file = None
        self._control = {"version": 0, "down": False, "paths": {}}

    def start(self, timeout=60):
        self.process = subprocess.Popen([sys.executable, str(RECEIVER), *self.args],
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while (ready := read_json(self.state_dir / "ready")) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"webhook_receiver.py did not start ({self.process.poll()})")
            time.sleep(0.02)
        self.port, self.ca_file = ready["port"], ready["ca_file"]
        return self

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)

    def url(self, path):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}{path}"

    def register(self, path, secret):
        self.register_all({path: secret})

    def register_all(self, secrets):
        for path, secret in secrets.items():
            self._control["paths"].setdefault(path, {})["secret"] = secret
        self._apply()

    def set_behaviour(self, path, status=200, delay=0.0, drop=False):
        if path not in self._control["paths"]:
            raise KeyError(f"{path}: not registered")
        self._control["paths"][path].update(status=status, delay=delay, drop=drop)
        self._apply()

    def down(self):
        self._control["down"] = True
        self._apply()

    def up(self):
        self._control["down"] = False
        self._apply()

    def _apply(self, timeout=60):
        self._control["version"] += 1
        write_json(self.state_dir / "control.json", self._control)
        deadline = time.monotonic() + timeout
        for i in range(self.processes):
            while ((read_json(self.state_dir / f"applied-{i}") or {}).get("version", 0)
                   < self._control["version"]):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"receiver process {i} did not apply the control")
                time.sleep(0.01)

    def deliveries(self, path=None):
        return [d for d in read_deliveries(self.state_dir) if path is None or d["path"] == path]

    def bad_signatures(self):
        return sum(not d["signature_ok"] for d in read_deliveries(self.state_dir))

    def wait_deliveries(self, count, timeout=60, path=None):
        deadline = time.monotonic() + timeout
        while len(found := self.deliveries(path)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(found)} deliveries to {path or 'any path'} in "
                                     f"{timeout} s, not {count}")
            time.sleep(0.05)
        return found
