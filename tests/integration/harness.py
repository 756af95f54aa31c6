"""Integration-test harness: the whole service stack in a fresh temporary directory.

    with Stack(fixture="tests/integration/fixtures/basic.json") as stack:
        r = stack.get("/v1/networks")
        assert r.status == 200 and r.json()["networks"]

Stack() starts a private MariaDB (scripts/mariadb-start), applies the migrations, imports the
fixture (optional) with `connector-admin import`, starts one connector-worker process with
`threads` threads, and nginx on a free loopback port (scripts/nginx-start). stop() (or leaving the
`with` block) ends them all and removes the directory, unless KEEP_STACK=1.

Binaries come from $CONNECTOR_BUILD_DIR (default: <repo>/build); ctest sets it to the build tree
that registered the test, so build-asan/ runs the sanitized worker. Python 3 standard library only.
"""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from http.client import HTTPResponse
from pathlib import Path

REPO = Path(os.environ.get("CONNECTOR_REPO") or Path(__file__).resolve().parents[2])
BUILD_DIR = Path(os.environ.get("CONNECTOR_BUILD_DIR") or REPO / "build")
WORKER = BUILD_DIR / "fcgi" / "connector-worker"
ADMIN = BUILD_DIR / "src" / "connector-admin"
SCRIPTS = REPO / "scripts"
DB_PASSWORD = os.environ.get("CONNECTOR_DB_PASSWORD", "connector-dev")

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer")


class StackError(RuntimeError):
    """The stack could not be started, or a process of it misbehaved."""


class Headers(dict):
    """Response headers with case-insensitive names; repeated headers joined by ", "."""

    def __init__(self, pairs=()):
        super().__init__()
        for name, value in pairs:
            key = name.lower()
            super().__setitem__(key, f"{self[key]}, {value}" if key in self else value)

    def __getitem__(self, name):
        return super().__getitem__(name.lower())

    def __contains__(self, name):
        return super().__contains__(name.lower())

    def get(self, name, default=None):
        return super().get(name.lower(), default)


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return f"<Response {self.status} {self.body[:200]!r}>"


def _tail(path, lines=40):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args, timeout=120, **kwargs):
    """Runs a command, raising StackError with its output when it fails."""
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    if result.returncode != 0:
        raise StackError(f"{' '.join(map(str, args))} exited {result.returncode}:\n"
                         f"{result.stdout}{result.stderr}")
    return result


class Stack:
    def __init__(self, fixture=None, threads=4, config=None, worker_env=None):
        """fixture: JSON document to import, or None. config: extra worker config keys (dict).
        worker_env: extra environment for the worker process (e.g. CONNECTOR_* overrides)."""
        for binary in (WORKER, ADMIN):
            if not binary.exists():
                raise StackError(f"{binary} not found: build first (scripts/build), "
                                 f"or set CONNECTOR_BUILD_DIR")
        base = Path(tempfile.gettempdir())
        if len(str(base)) > 40:  # unix socket paths must stay short (108 bytes)
            base = Path("/tmp")
        self.dir = Path(tempfile.mkdtemp(prefix="connector-stack-", dir=base))
        self.db_dir = self.dir / "mariadb"
        self.db_socket = self.db_dir / "mysqld.sock"
        self.fcgi_socket = self.dir / "fcgi.sock"
        self.nginx_prefix = self.dir / "nginx"
        self.config_path = self.dir / "connector.conf"
        self.worker_log = self.dir / "worker.log"
        self.port = None
        self.worker = None
        self._worker_env = dict(worker_env or {})
        self._stopped = False
        settings = {
            "listen": self.fcgi_socket, "listen_mode": "0666", "threads": threads,
            "db_socket": self.db_socket, "db_name": "connector", "db_user": "connector",
            "db_password": DB_PASSWORD, "db_connect_timeout_s": 2, "db_read_timeout_s": 5,
        }
        settings.update(config or {})
        self.config_path.write_text("# written by tests/integration/harness.py\n" + "".join(
            f"{key} = {value}\n" for key, value in settings.items()))
        try:
            self.start_mariadb()
            _run([SCRIPTS / "migrate", "--socket", self.db_socket])
            if fixture is not None:
                result = self.admin("import", Path(fixture).resolve())
                if result.returncode != 0:
                    raise StackError(f"import of {fixture} failed:\n{result.stderr}")
            self.start_worker()
            self._start_nginx()
        except BaseException:
            self.stop(check=False)
            raise

    # --- processes -------------------------------------------------------------------------

    def _env(self, extra=None):
        """The environment for our programs: no stray CONNECTOR_* overrides from outside."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
        env["CONNECTOR_DB_PASSWORD"] = DB_PASSWORD
        env.update(extra or {})
        return env

    def start_mariadb(self):
        _run([SCRIPTS / "mariadb-start", self.db_dir], env=self._env())

    def stop_mariadb(self):
        _run([SCRIPTS / "mariadb-stop", self.db_dir])

    def start_worker(self, timeout=30):
        """Starts connector-worker and waits until its socket accepts connections."""
        if self.fcgi_socket.exists():
            self.fcgi_socket.unlink()
        log = open(self.worker_log, "ab")
        self.worker = subprocess.Popen([str(WORKER), "--config", str(self.config_path)],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=self._env(self._worker_env))
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise StackError(f"connector-worker exited with {self.worker.returncode}:\n"
                                 f"{_tail(self.worker_log)}")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.fcgi_socket))
                return
            except OSError:
                time.sleep(0.05)
        raise StackError(f"connector-worker not listening on {self.fcgi_socket} after "
                         f"{timeout} s:\n{_tail(self.worker_log)}")

    def stop_worker(self):
        """SIGTERM, then SIGKILL after 10 s. Raises StackError if it had to be killed or a
        sanitizer reported anything."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        problem = None
        if worker.poll() is not None:
            problem = f"connector-worker had exited by itself with {worker.returncode}"
        else:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
                problem = "connector-worker did not exit within 10 s of SIGTERM"
        log = self.worker_log.read_text(errors="replace") if self.worker_log.exists() else ""
        if problem is None and any(marker in log for marker in SANITIZER_MARKERS):
            problem = "a sanitizer reported an error in connector-worker"
        if problem:
            raise StackError(f"{problem}:\n{_tail(self.worker_log, 80)}")

    def _start_nginx(self):
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.port = _free_port()
            try:
                _run([SCRIPTS / "nginx-start", self.nginx_prefix, self.port, self.fcgi_socket])
                return
            except StackError:
                if attempt == 2:
                    raise

    def stop(self, check=True):
        """Stops worker, nginx and MariaDB; removes the directory unless KEEP_STACK=1.
        With check, raises StackError afterwards if the worker misbehaved."""
        if self._stopped:
            return
        self._stopped = True
        errors = []
        try:
            self.stop_worker()
        except StackError as e:
            errors.append(str(e))
        for command in ([SCRIPTS / "nginx-stop", self.nginx_prefix],
                        [SCRIPTS / "mariadb-stop", self.db_dir]):
            result = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                                    timeout=60, stdin=subprocess.DEVNULL)
            if result.returncode != 0:
                errors.append(f"{command[0].name}: {result.stderr}")
        if os.environ.get("KEEP_STACK") == "1":
            print(f"KEEP_STACK=1: stack files kept in {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        if errors and check:
            raise StackError("\n".join(errors))
        for e in errors:
            print(f"harness: {e}", file=sys.stderr)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # Never hide the test's own failure behind a stop problem.
        self.stop(check=exc_type is None)
        return False

    # --- talking to it ---------------------------------------------------------------------

    def request(self, method, target, headers=None, body=b"", timeout=30):
        """Sends one HTTP/1.1 request through nginx, with the target exactly as given (str or
        bytes: bad escapes, long queries, odd methods all go out unchanged). A Host header is
        added unless headers name one; a header whose value is None is left out."""
        headers = dict(headers or {})
        names = {name.lower() for name in headers}
        if "host" not in names:
            headers["Host"] = f"127.0.0.1:{self.port}"
        if "connection" not in names:
            headers["Connection"] = "close"
        if body and "content-length" not in names:
            headers["Content-Length"] = str(len(body))
        if isinstance(target, str):
            target = target.encode("utf-8")
        head = method.encode("ascii") + b" " + target + b" HTTP/1.1\r\n" + b"".join(
            f"{name}: {value}\r\n".encode("latin-1")
            for name, value in headers.items() if value is not None)
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(head + b"\r\n" + body)
            response = HTTPResponse(sock, method=method)
            response.begin()
            data = response.read()
            return Response(response.status, response.reason,
                            Headers(response.getheaders()), data)

    def get(self, target, headers=None):
        return self.request("GET", target, headers)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def admin(self, *args, timeout=120):
        """Runs connector-admin --config <this stack's config> ARGS; returns the
        CompletedProcess (text stdout/stderr) without checking the exit code."""
        return subprocess.run([str(ADMIN), "--config", str(self.config_path),
                               *[str(a) for a in args]], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=self._env())

    def sql(self, statement):
        """Runs SQL as the MariaDB admin account on database connector; returns the rows as
        lists of strings (NULL comes back as "NULL")."""
        result = _run(["mariadb", "--no-defaults", f"--socket={self.db_socket}",
                       "-u", _os_user(), "--default-character-set=utf8mb4", "-N", "-B",
                       "connector", "-e", statement], timeout=60)
        return [line.split("\t") for line in result.stdout.splitlines()]

    def worker_log_text(self):
        return self.worker_log.read_text(errors="replace")

    def nginx_access_log(self):
        return (self.nginx_prefix / "access.log").read_text(errors="replace")


def _os_user():
    return pwd.getpwuid(os.getuid()).pw_name
