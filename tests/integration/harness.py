"""Integration-test harness: the whole service stack in a fresh temporary directory.

    with Stack(fixture="tests/fixtures/sample-60.json") as stack:
        r = stack.get("/v1/networks")
        assert r.status == 200 and r.json()["networks"]

Stack() starts a private MariaDB (scripts/mariadb-start), applies the migrations, imports the
fixture (optional) with `connector-admin import`, starts one connector-worker process with
`threads` threads, and nginx on a free loopback port (scripts/nginx-start). stop() (or leaving the
`with` block) ends them all and removes the directory, unless KEEP_STACK=1.

Options for the database side (all off by default, which is the plain stack above):
* db_port: the MariaDB also listens on 127.0.0.1:db_port (0 = a free port), besides its socket.
* accounts: scripts/db-accounts creates the least-privilege accounts, and the worker reads as
  connector_reader and writes as connector_writer (imports still run as the full 'connector').
* replica: the MariaDB is a replication primary (loopback TCP port, binary log) and a second one,
  started by scripts/mariadb-replica, replicates from it; the worker reads from the replica
  (db_replicas = unix:<replica socket>) and writes to the primary. Fixtures are imported on the
  primary, and the worker starts once the replica has caught up. stop_replica(),
  start_replica(), replica_sql() and wait_replica_caught_up() drive it.

Binaries come from $CONNECTOR_BUILD_DIR (default: <repo>/build); ctest sets it to the build tree
that registered the test, so build-asan/ runs the sanitized worker. Python 3 standard library only.
"""

import base64
import importlib.machinery
import importlib.util
import itertools
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from http.client import HTTPResponse
from pathlib import Path

from fcgi_client import fcgi_get
from tripwire import Tripwire

REPO = Path(os.environ.get("CONNECTOR_REPO") or Path(__file__).resolve().parents[2])
BUILD_DIR = Path(os.environ.get("CONNECTOR_BUILD_DIR") or REPO / "build")
WORKER = BUILD_DIR / "fcgi" / "connector-worker"
ADMIN = BUILD_DIR / "src" / "connector-admin"
SCRIPTS = REPO / "scripts"
DB_PASSWORD = os.environ.get("CONNECTOR_DB_PASSWORD", "connector-dev")
READ_USER, READ_PASSWORD = "connector_reader", "connector-read-test"
WRITE_USER, WRITE_PASSWORD = "connector_writer", "connector-write-test"
REPL_PASSWORD = "connector-repl-test"
# The passwords scripts/db-accounts and scripts/mariadb-replica set (only they get these).
ACCOUNTS_ENV = {"CONNECTOR_DB_READ_PASSWORD": READ_PASSWORD,
                "CONNECTOR_DB_WRITE_PASSWORD": WRITE_PASSWORD,
                "CONNECTOR_DB_REPL_PASSWORD": REPL_PASSWORD}

# nginx_env of a test that loads the stack from a few kept connections (load_client.Load): it
# measures the service, not the per-client rate, which it would reach at once from 127.0.0.1
# (the limits themselves: test_nginx, test_write_limits, test_events_hostile).
LOAD_FROM_ONE_CLIENT = {"NGINX_CONNECTOR_RATE": "off"}

# A command put before the worker's, e.g. valgrind (tests/integration/memcheck.py sets it);
# stopping then takes longer (each process checks its memory on the way out).


def endpoint_descriptions():
    """The service's endpoint descriptions (api::kEndpoints, printed by the build's
    tests/endpoints-dump): {"endpoints": [{"path", "cache_control", "final_cache_control" ("" when
    none), "params": [{"name", "kind", "schema", "required", "echo"}]}], "page_size": {"default",
    "max"}, "statuses": [...]}."""
    dump = BUILD_DIR / "tests" / "endpoints-dump"
    return json.loads(subprocess.run([str(dump)], capture_output=True, check=True, text=True,
                                     timeout=30).stdout)


def nginx_contract():
    """scripts/nginx-contract as a module (its NOT_CACHED: the endpoints it leaves out of
    nginx's cache besides the event streams)."""
    loader = importlib.machinery.SourceFileLoader("nginx_contract",
                                                  str(REPO / "scripts" / "nginx-contract"))
    spec = importlib.util.spec_from_loader("nginx_contract", loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def endpoint_params():
    """{path: [the names of the parameters it knows, in its table's order]}, every endpoint."""
    return {e["path"]: [p["name"] for p in e["params"]]
            for e in endpoint_descriptions()["endpoints"]}


# scripts/mariadb-start copies an initialised datadir from here instead of running
# mariadb-install-db (~5 s) for each of the suite's ~100 servers.
MARIADB_INIT_CACHE = f"/tmp/connector-tests-mariadb-init-{os.getuid()}"
WORKER_WRAPPER = shlex.split(os.environ.get("CONNECTOR_WORKER_WRAPPER", ""))
WORKER_STOP_TIMEOUT = 120 if WORKER_WRAPPER else 10
WORKER_START_TIMEOUT = 120 if WORKER_WRAPPER else 30  # to serving, snapshots loaded

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
    def __init__(self, fixture=None, threads=4, config=None, worker_env=None, db_port=None,
                 accounts=False, replica=False, nginx_cache=True, nginx_env=None, db_dir=None,
                 mariadb_env=None, events=False):
        """fixture: JSON document to import, or None. config: extra worker config keys (dict).
        worker_env: extra environment for the worker process (e.g. CONNECTOR_* overrides).
        db_port: also serve MariaDB on 127.0.0.1:db_port (0: a free port; implied by replica).
        accounts: the worker uses the least-privilege reader and writer accounts.
        replica: a replica replicating from the primary serves the worker's reads.
        nginx_cache: nginx's response cache, on as shipped; a test that turns it off says why.
        nginx_env: more NGINX_CONNECTOR_* settings for scripts/nginx-start (dict); none: nginx
        runs the drop-ins as the .deb installs them (cache on, per-client limits on), and a
        test that needs another setting says which and why.
        db_dir: a MariaDB data directory of the caller's to use (created if new, kept at stop)
        instead of one in the stack's temporary directory (scripts/bench keeps its data).
        mariadb_env: more CONNECTOR_MARIADB_* settings for scripts/mariadb-start (dict).
        events: server-sent events on: nginx with the events drop-ins (nchan), the worker
        publishing to it (events_publisher), its cursor in DIR/events-cursor."""
        for binary in (WORKER, ADMIN):
            if not binary.exists():
                raise StackError(f"{binary} not found: build first (scripts/build), "
                                 f"or set CONNECTOR_BUILD_DIR")
        base = Path(tempfile.gettempdir())
        if len(str(base)) > 40:  # unix socket paths must stay short (108 bytes)
            base = Path("/tmp")
        self.dir = Path(tempfile.mkdtemp(prefix="connector-stack-", dir=base))
        self.db_dir = Path(db_dir) if db_dir else self.dir / "mariadb"
        self._mariadb_env = dict(mariadb_env or {})
        self.db_socket = self.db_dir / "mysqld.sock"
        self.replica_dir = self.dir / "replica"
        self.replica_socket = self.replica_dir / "mysqld.sock"
        self.replica = replica
        self.accounts = accounts
        self.nginx_cache = nginx_cache
        self.nginx_env = dict(nginx_env or {})
        if events:
            self.nginx_env["NGINX_CONNECTOR_EVENTS"] = "on"
        self.db_port = 0 if replica and db_port is None else db_port
        self.replica_port = None  # the replica also listens on 127.0.0.1:replica_port
        self.fcgi_socket = self.dir / "fcgi.sock"
        self.nginx_prefix = self.dir / "nginx"
        self.config_path = self.dir / "connector.conf"
        self.worker_log = self.dir / "worker.log"
        self.port = None
        self.worker = None
        self._worker_env = dict(worker_env or {})
        self._stopped = False
        # Fails the test during which a process of this stack crashed (tripwire.py).
        self.tripwire = Tripwire(f"stack {self.dir.name}")
        self.tripwire.watch(self.nginx_prefix / "error.log")
        self.tripwire.watch(self.nginx_prefix / "events" / "error.log")
        self.tripwire.watch(self.worker_log)
        settings = {
            "listen": self.fcgi_socket, "listen_mode": "0666", "threads": threads,
            "db_socket": self.db_socket, "db_name": "connector", "db_user": "connector",
            "db_password": DB_PASSWORD, "db_connect_timeout_s": 2, "db_read_timeout_s": 5,
        }
        # connector-admin (imports) always works as the full 'connector' account on the primary.
        self.admin_config_path = self.config_path
        if accounts or replica:
            self.admin_config_path = self.dir / "admin.conf"
            self.admin_config_path.write_text("# written by tests/integration/harness.py\n" + "".join(
                f"{key} = {value}\n" for key, value in settings.items()))
            self.admin_config_path.chmod(0o600)  # it holds a password: others may not read it
        if accounts:
            settings.update({"db_user": READ_USER, "db_password": READ_PASSWORD,
                             "db_write_user": WRITE_USER, "db_write_password": WRITE_PASSWORD})
        if replica:
            settings["db_replicas"] = f"unix:{self.replica_socket}"
        if events:
            settings["events_publisher"] = self.nginx_prefix / "events" / "publish" / "publish.sock"
            settings["events_cursor_file"] = self.dir / "events-cursor"
        settings.update(config or {})
        self.settings = settings
        self.config_path.write_text("# written by tests/integration/harness.py\n" + "".join(
            f"{key} = {value}\n" for key, value in settings.items()))
        self.config_path.chmod(0o600)  # it holds a password: the worker refuses it readable by others
        try:
            self._first_start_mariadb()
            _run([SCRIPTS / "migrate", "--socket", self.db_socket])
            if accounts:
                _run([SCRIPTS / "db-accounts", "--socket", self.db_socket],
                     env=self._env(ACCOUNTS_ENV))
            if fixture is not None:
                result = self.admin("import", Path(fixture).resolve())
                if result.returncode != 0:
                    raise StackError(f"import of {fixture} failed:\n{result.stderr}")
            if replica:
                self._set_up_replica()
            self.start_worker()
            self._start_nginx()
            if events:
                self.wait_events_ready()
        except BaseException:
            self.stop(check=False)
            raise

    # --- processes -------------------------------------------------------------------------

    def _env(self, extra=None):
        """The environment for our programs: no stray CONNECTOR_* overrides from outside."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
        env["CONNECTOR_DB_PASSWORD"] = DB_PASSWORD
        env["CONNECTOR_MARIADB_INIT_CACHE"] = MARIADB_INIT_CACHE
        env.update(extra or {})
        return env

    def _mariadb_options(self):
        options = []
        if self.db_port is not None:
            options += ["--port", self.db_port]
        if self.replica:
            options += ["--server-id", 1, "--log-bin"]
        return options

    def _first_start_mariadb(self):
        if self.db_port != 0:
            self.start_mariadb()
            return
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.db_port = _free_port()
            try:
                self.start_mariadb()
                return
            except StackError:
                if attempt == 2:
                    raise

    def start_mariadb(self):
        """Starts the (primary) MariaDB, or does nothing when it is running."""
        _run([SCRIPTS / "mariadb-start", *self._mariadb_options(), self.db_dir],
             env=self._env(self._mariadb_env))

    def stop_mariadb(self):
        _run([SCRIPTS / "mariadb-stop", self.db_dir])

    def _set_up_replica(self):
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.replica_port = _free_port()
            try:
                _run([SCRIPTS / "mariadb-replica", "--port", self.replica_port, self.replica_dir,
                      self.db_dir, self.db_port], env=self._env(ACCOUNTS_ENV))
                break
            except StackError:
                if attempt == 2:
                    raise
        self.wait_replica_caught_up()

    def start_replica(self):
        """Starts the replica again (scripts/mariadb-start keeps its replica options); it resumes
        replicating by itself. Does not wait for it to catch up: see wait_replica_caught_up()."""
        self._require_replica()
        _run([SCRIPTS / "mariadb-start", self.replica_dir], env=self._env())

    def stop_replica(self):
        self._require_replica()
        _run([SCRIPTS / "mariadb-stop", self.replica_dir])

    def wait_replica_caught_up(self, timeout=30):
        """Waits until the replica has applied everything the primary has logged so far;
        raises StackError (with the replica's own account of why) after timeout seconds."""
        self._require_replica()
        position = self.sql("SELECT @@gtid_binlog_pos")[0][0]
        reached = self.replica_sql(f"SELECT MASTER_GTID_WAIT('{position}', {int(timeout)})")
        if reached != [["0"]]:
            status = _run(["mariadb", "--no-defaults", f"--socket={self.replica_socket}",
                           "-u", _os_user(), "-E", "-e", "SHOW SLAVE STATUS"], timeout=30)
            raise StackError(f"the replica did not reach the primary's GTID {position} within "
                             f"{timeout} s:\n{status.stdout}")

    def _require_replica(self):
        if not self.replica:
            raise StackError("this stack has no replica (Stack(replica=True))")

    def start_worker(self, timeout=WORKER_START_TIMEOUT, wait_loaded=True):
        """Starts connector-worker and waits until its socket accepts connections and (with
        wait_loaded) until every process has loaded its snapshots (wait_snapshots()), so a test
        that changes the database next changes it under snapshots that are already loaded.
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
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise StackError(f"connector-worker exited with {self.worker.returncode}:\n"
                                 f"{_tail(self.worker_log)}")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.fcgi_socket))
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise StackError(f"connector-worker not listening on {self.fcgi_socket} after "
                             f"{timeout} s:\n{_tail(self.worker_log)}")
        if wait_loaded:
            self.wait_snapshots(timeout=max(0.0, deadline - time.monotonic()))

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
        deadline = time.monotonic() + timeout
        polls = 0
        while True:
            polls += 1
            status = self.get("/status").json()
            if status["active_threads"] == 1:
                return status, polls
            if time.monotonic() >= deadline:
                raise StackError(f"a worker thread stayed busy for {timeout} s: {status}")
            time.sleep(0.05)

    def supply_expiries(self):
        """When each worker process's supply snapshot (/v1/ab) stops being served, on
        time.monotonic(): its load time from /status plus its maximum age (db/supply_cache.h:
        two reference_refresh_ms intervals, the interval at least 50 ms, the age at least 1 s)."""
        interval_ms = max(int(self.settings.get("reference_refresh_ms", 1000)), 50)
        max_age_s = max(2 * interval_ms, 1000) / 1000
        return [p["supply_snapshot"]["loaded_monotonic_ns"] / 1e9 + max_age_s
                for p in self.worker_status()["process_list"]]

    def wait_snapshots(self, after_unix_ms=0, timeout=WORKER_START_TIMEOUT):
        """Waits until every worker process (the configured number, none retiring) serves
        reference data and supply snapshots whose load began after after_unix_ms (0: any load),
        as the processes state it in /status; returns their process_list entries. Raises
        StackError after `timeout` seconds with what they showed."""
        deadline = time.monotonic() + timeout
        shown = None
        while True:
            try:
                shown = self.worker_status()
                serving = [p for p in shown["process_list"] if not p["retiring"]]
                loaded = [p for p in serving
                          if min(p["reference_snapshot"]["as_of_unix_ms"],
                                 p["supply_snapshot"]["as_of_unix_ms"]) > after_unix_ms]
                if len(serving) == len(loaded) == shown["configured_processes"]:
                    return loaded
            except OSError:  # a process that was ending as it was asked
                pass
            if self.worker is not None and self.worker.poll() is not None:
                raise StackError(f"connector-worker exited with {self.worker.returncode}:\n"
                                 f"{_tail(self.worker_log)}")
            if time.monotonic() >= deadline:
                raise StackError(f"the worker's processes did not load snapshots newer than "
                                 f"{after_unix_ms} within {timeout} s; /status: {shown}\n"
                                 f"{_tail(self.worker_log)}")
            time.sleep(0.05)

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

    def _start_nginx(self):
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.port = _free_port()
            try:
                _run([SCRIPTS / "nginx-start", self.nginx_prefix, self.port, self.fcgi_socket],
                     env={**os.environ, **self.nginx_env,
                          "NGINX_CONNECTOR_CACHE": "on" if self.nginx_cache else "off"})
                return
            except StackError:
                if attempt == 2:
                    raise

    def stop(self, check=True):
        """Stops worker, nginx and MariaDB; removes the directory unless KEEP_STACK=1.
        With check, raises StackError afterwards if the worker misbehaved or a response that
        request() received does not match docs/openapi.yaml."""
        if self._stopped:
            return
        self._stopped = True
        errors = []
        try:
            self.stop_worker()
        except StackError as e:
            errors.append(str(e))
        keep = os.environ.get("KEEP_STACK") == "1"
        if keep:
            commands = [[SCRIPTS / "nginx-stop", self.nginx_prefix]]
            if self.replica:
                commands.append([SCRIPTS / "mariadb-stop", self.replica_dir])
            commands.append([SCRIPTS / "mariadb-stop", self.db_dir])
            for command in commands:
                result = subprocess.run([str(c) for c in command], capture_output=True,
                                        text=True, timeout=60, stdin=subprocess.DEVNULL)
                if result.returncode != 0:
                    errors.append(f"{command[0].name}: {result.stderr}")
        else:
            # Nothing of the stack is kept: no clean shutdowns to wait for (~3 s a stack).
            # nginx's fast shutdown (its master stops the workers); MariaDB is one process.
            _kill_from_pidfile(self.nginx_prefix / "nginx.pid", "nginx", signal.SIGTERM)
            _kill_from_pidfile(self.nginx_prefix / "events" / "nginx.pid", "nginx", signal.SIGTERM)
            for directory in ([self.replica_dir] if self.replica else []) + [self.db_dir]:
                _kill_from_pidfile(directory / "mysqld.pid", "mariadbd", signal.SIGKILL)
        crashes = self.tripwire.close()
        if crashes:
            errors.append("crashes beside the test (tests/integration/tripwire.py):\n" +
                          "\n".join(crashes))
        if check:
            errors += self._openapi_mismatches()
        if keep:
            print(f"KEEP_STACK=1: stack files kept in {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        if errors and check:
            raise StackError("\n".join(errors))
        for e in errors:
            print(f"harness: {e}", file=sys.stderr)

    def _openapi_mismatches(self):
        """Checks every response request() recorded against docs/openapi.yaml with
        tools/openapi/validate-responses.mjs (one node process per stack); returns the problems
        as a list of messages (empty: all match, or nothing was recorded)."""
        if not self.responses_path.exists():
            return []
        tools = REPO / "tools" / "openapi"
        if shutil.which("node") is None or not (tools / "node_modules").is_dir():
            return ["the OpenAPI check needs node and tools/openapi/node_modules: run "
                    "scripts/install-deps (or tools/openapi/install)"]
        result = subprocess.run(["node", str(tools / "validate-responses.mjs"),
                                 str(REPO / "docs" / "openapi.yaml"), str(self.responses_path)],
                                capture_output=True, text=True, timeout=120,
                                stdin=subprocess.DEVNULL)
        if result.returncode == 0:
            return []
        report = (result.stdout + result.stderr)[-12000:]
        return [f"responses that do not match docs/openapi.yaml (fix the document where the "
                f"service is right):\n{report}"]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # Never hide the test's own failure behind a stop problem.
        self.stop(check=exc_type is None)
        return False

    # --- talking to it ---------------------------------------------------------------------

    def request(self, method, target, headers=None, body=b"", timeout=30, source=None):
        """Sends one HTTP/1.1 request through nginx, with the target exactly as given (str or
        bytes: bad escapes, long queries, odd methods all go out unchanged). A Host header is
        added unless headers name one; a header whose value is None is left out.
        It comes from `source`, else from source_for(target), else, with an X-Forwarded-For,
        from 127.0.0.1 (a front, which realip trusts).
        Every response is recorded (record()) for stop()'s check against docs/openapi.yaml."""
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
        if source is None:
            source = "127.0.0.1" if "x-forwarded-for" in names else source_for(target)
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout,
                                      source_address=(source, 0)) as sock:
            sock.sendall(head + b"\r\n" + body)
            response = HTTPResponse(sock, method=method)
            response.begin()
            data = response.read()
            pairs = response.getheaders()
        self.record(method, target, response.status, pairs, data)
        return Response(response.status, response.reason, Headers(pairs), data)

    def record(self, method, target, status, header_pairs, body):
        """Adds one response to those stop() checks against docs/openapi.yaml. request() calls
        it; tests with a client of their own may too. target: str or bytes as sent;
        header_pairs: [(name, value)] as received; body: bytes as received (gzip is undone by
        the check)."""
        if isinstance(target, bytes):
            target = target.decode("latin-1")
        line = json.dumps({"method": method, "target": target, "status": status,
                           "headers": list(header_pairs),
                           "body_base64": base64.b64encode(body).decode("ascii")}) + "\n"
        if self.dir.is_dir():  # one write() per line: threads sending at once do not interleave
            fd = os.open(self.responses_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)

    @property
    def responses_path(self):
        """The JSON-lines file of the responses record() kept (see stop())."""
        return self.dir / "responses.jsonl"

    def get(self, target, headers=None, source=None):
        return self.request("GET", target, headers, source=source)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def admin(self, *args, timeout=120):
        """Runs connector-admin --config <this stack's config> ARGS; returns the
        CompletedProcess (text stdout/stderr) without checking the exit code."""
        return subprocess.run([str(ADMIN), "--config", str(self.admin_config_path),
                               *[str(a) for a in args]], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=self._env())

    def sql(self, statement):
        """Runs SQL as the MariaDB admin account on database connector (on the primary); returns
        the rows as lists of strings (NULL comes back as "NULL")."""
        return self._admin_sql(self.db_socket, statement)

    def copy_history_row(self, source_id, new_id, new_hash, replica_only=False):
        """Inserts a copy of history row source_id under a new id and hash, on the primary (and
        so, once replicated, everywhere), or with replica_only on the replica alone (the admin
        account may write there despite read_only): a row that shows which server a read
        used."""
        statement = (f"CREATE TEMPORARY TABLE copy AS SELECT * FROM history WHERE id = {source_id}; "
                     f"UPDATE copy SET id = {new_id}, hash = '{new_hash}'; "
                     "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy")
        if replica_only:
            return self.replica_sql("SET SESSION sql_log_bin = 0; " + statement)
        return self.sql(statement)

    def replica_sql(self, statement):
        """sql() on the replica."""
        self._require_replica()
        return self._admin_sql(self.replica_socket, statement)

    @staticmethod
    def _admin_sql(sock, statement):
        result = _run(["mariadb", "--no-defaults", f"--socket={sock}",
                       "-u", _os_user(), "--default-character-set=utf8mb4", "-N", "-B",
                       "connector", "-e", statement], timeout=60)
        return [line.split("\t") for line in result.stdout.splitlines()]

    def sql_as(self, user, password, statement, tcp=False, replica=False):
        """Runs SQL as another account on database connector, over the unix socket or (tcp)
        127.0.0.1:db_port, on the primary or the replica; returns the CompletedProcess (text
        stdout/stderr) without checking it, so tests can look at refusals."""
        if replica:
            self._require_replica()
        if tcp:
            port = self.replica_port if replica else self.db_port
            if port is None:
                raise StackError("the primary listens on TCP only with db_port (or replica)")
            where = ["--protocol=TCP", "--host=127.0.0.1", f"--port={port}"]
        else:
            where = [f"--socket={self.replica_socket if replica else self.db_socket}"]
        return subprocess.run(["mariadb", "--no-defaults", *where, "-u", user,
                               f"--password={password}", "--default-character-set=utf8mb4",
                               "--connect-timeout=10", "-N", "-B", "connector", "-e", statement],
                              capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)

    def worker_log_text(self):
        return self.worker_log.read_text(errors="replace")

    def nginx_access_log(self):
        return (self.nginx_prefix / "access.log").read_text(errors="replace")

    def cache_entries(self):
        """{file: key} for the answers in nginx's cache directory, read in one pass (None for a
        file without a KEY line); a file nginx removes meanwhile is in neither."""
        entries = {}
        for path in (self.nginx_prefix / "cache").rglob("*"):
            try:
                if not path.is_file():
                    continue
                head = path.read_bytes()[:4096].split(b"\n")
            except FileNotFoundError:
                continue
            keys = [line[5:].decode() for line in head if line.startswith(b"KEY: ")]
            entries[path] = keys[0] if len(keys) == 1 else None
        return entries

    def cached_keys(self):
        """The keys of the answers in nginx's cache directory (the KEY line of each file)."""
        return [key for key in self.cache_entries().values() if key is not None]

    def nginx_error_log_text(self):
        return (self.nginx_prefix / "error.log").read_text(errors="replace")

    # --- processes and faults, for the fault, soak and memcheck tests -----------------------

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

    def reload_nginx(self):
        """nginx -s reload: new nginx workers, the old ones finish what they serve and exit."""
        _run(["nginx", "-p", f"{self.nginx_prefix}/", "-c", self.nginx_prefix / "nginx.conf",
              "-s", "reload"], timeout=30)

    def nginx_pid(self):
        return int((self.nginx_prefix / "nginx.pid").read_text())

    def replica_pid(self):
        self._require_replica()
        return int((self.replica_dir / "mysqld.pid").read_text())

    def db_connections(self, user="connector", replica=False):
        """How many sessions `user` has open on the primary (or the replica)."""
        sql = self.replica_sql if replica else self.sql
        return int(sql("SELECT COUNT(*) FROM information_schema.processlist "
                       f"WHERE user = '{user}'")[0][0])

    def hold_table_lock(self, table, seconds):
        """Test-only slowness: a background admin session holds LOCK TABLES `table` WRITE for
        `seconds`, so statements on it wait. Returns the session's Popen once the lock is held
        (wait() on it to know it is released)."""
        marker = f"SLEEP({float(seconds)})"
        process = subprocess.Popen(
            ["mariadb", "--no-defaults", f"--socket={self.db_socket}", "-u", _os_user(),
             "connector", "-e", f"LOCK TABLES {table} WRITE; SELECT {marker}; UNLOCK TABLES;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rows = self.sql("SELECT COUNT(*) FROM information_schema.processlist "
                            f"WHERE info = 'SELECT {marker}'")
            if rows == [["1"]]:
                return process
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
        process.wait()
        raise StackError(f"the session locking {table} did not start")

    def release_table_lock(self, process):
        """Ends a hold_table_lock() session now (KILL of its connection takes the lock with it),
        so a test decides when the lock ends instead of racing a fixed duration."""
        for (session,) in self.sql("SELECT id FROM information_schema.processlist "
                                   "WHERE info LIKE 'SELECT SLEEP(%'"):
            self.sql(f"KILL {session}")
        process.wait(timeout=30)

    def lock_waiters(self, user="connector"):
        """How many sessions of `user` wait on a table lock (requests held by hold_table_lock)."""
        return int(self.sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user = "
                            f"'{user}' AND state LIKE 'Waiting for table%lock'")[0][0])


def nginx_access_line(prefix, request_id):
    """The access-log line of one request of the nginx in `prefix` (local.conf.in's format).
    nginx writes it after the response, so it may lag the client a little."""
    log = Path(prefix) / "access.log"
    deadline = time.monotonic() + 5
    while True:
        lines = [line for line in log.read_text().splitlines()
                 if f"request_id={request_id} " in line]
        if lines or time.monotonic() > deadline:
            assert len(lines) == 1, (request_id, lines)
            return lines[0]
        time.sleep(0.02)


def chromium_dom(url, virtual_time_ms):
    """Loads url in a headless Chromium that reaches nothing but 127.0.0.1 (no proxy, no other
    host, nothing of its own in the background) and returns the page's DOM once the page has
    had virtual_time_ms of (virtual) time; raises AssertionError without chromium."""
    if shutil.which("chromium") is None:
        raise AssertionError("chromium not found: scripts/install-deps installs it")
    profile = Path(tempfile.mkdtemp(prefix="connector-chromium-"))
    try:
        return subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", "--disable-quic",
             f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9",
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             f"--virtual-time-budget={virtual_time_ms}", "--dump-dom", url],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _kill_from_pidfile(pidfile, name, sig):
    """Sends sig to the process whose pid the file holds when it is still `name`, and waits up
    to 10 s for it to go; does nothing when the file or the process is gone."""
    def gone():  # exited, or a zombie nobody has reaped yet
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        return f"({name})" not in stat or stat.rsplit(")", 1)[1].split()[0] == "Z"
    try:
        pid = int(Path(pidfile).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    if gone():
        return
    os.kill(pid, sig)
    await_true(gone, seconds=10, what=f"{name} (pid {pid}) to exit")


_client_numbers = itertools.count()


def client_address():
    """A loopback address (127.1.1.1 and up, all of 127/8 is this host's) that no connection of
    this process has come from yet. nginx counts its per-client limits (20 r/s, 2 r/s for deposit
    addresses, 20 streams) by address: the tests run the limits as shipped, and a test is one
    client only where it means to be (127.0.0.1, or one address it keeps)."""
    n = next(_client_numbers)
    return f"127.{1 + n // 64516 % 254}.{1 + n // 254 % 254}.{1 + n % 254}"


def source_for(target):
    """Where a test's request for `target` comes from: a client_address() of its own for a /v1
    path (the per-client limits count each request apart), 127.0.0.1 for the others (the
    monitoring paths answer loopback only: connector-monitoring.conf)."""
    return client_address() if target_path(target).startswith("/v1") else "127.0.0.1"


def connect(port, timeout=30, host="127.0.0.1"):
    """A TCP connection to host:port from a client_address() of its own."""
    return socket.create_connection((host, port), timeout=timeout,
                                    source_address=(client_address(), 0))


def target_path(target):
    """The path of a request target (str or bytes) as text, without its query."""
    if isinstance(target, bytes):
        target = target.decode("latin-1")
    return target.split("?", 1)[0]


def upstream_status(prefix, request_id):
    """The worker's status for a request as nginx logged it; "-" when it never reached it."""
    return re.search(r" upstream=([^/]*)/", nginx_access_line(prefix, request_id)).group(1)


def prometheus(text):
    """Parses Prometheus text: {(name, frozenset(labels)): value}; fails on a malformed line."""
    samples = {}
    line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (-?[0-9.e+]+|\+Inf)$')
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = line_re.match(line)
        assert m, f"not Prometheus text: {line!r}"
        labels = frozenset(re.findall(r'([a-z_]+)="([^"]*)"', m.group(3) or ""))
        samples[(m.group(1), labels)] = float(m.group(4))
    return samples


def sanitized_build():
    """True when BUILD_DIR is a sanitizer (ASan+UBSan) build tree."""
    cache = BUILD_DIR / "CMakeCache.txt"
    return cache.exists() and "CONNECTOR_SANITIZE:BOOL=ON" in cache.read_text(errors="replace")


def wait_for(predicate, seconds=15, step=0.1):
    """Polls predicate every `step` seconds until it holds (True) or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


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


def await_true(predicate, seconds=15, step=0.1, what=""):
    """wait_for() that fails the test (AssertionError) when predicate does not hold within
    `seconds`."""
    if not wait_for(predicate, seconds, step):
        raise AssertionError(f"not within {seconds} s: {what or predicate}")


def _os_user():
    return pwd.getpwuid(os.getuid()).pw_name
