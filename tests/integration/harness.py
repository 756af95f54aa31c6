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
* accounts: scripts/db-accounts creates the least-privilege accounts (the webhook deliverer's,
  connector_webhooks, too), and the worker reads as connector_reader and writes as
  connector_writer (imports and `connector-admin webhook` still run as the full 'connector').
* replica: the MariaDB is a replication primary (loopback TCP port, binary log) and a second one,
  started by scripts/mariadb-replica, replicates from it; the worker reads from the replica
  (db_replicas = unix:<replica socket>) and writes to the primary. Fixtures are imported on the
  primary, and the worker starts once the replica has caught up. stop_replica(),
  start_replica(), replica_sql() and wait_replica_caught_up() drive it.

Stack's parts live in modules of their own, and everything tests import comes from here
(__all__): harness_base.py (paths, accounts, endpoint descriptions, running a command),
stack_db.py (the MariaDB servers, SQL, table locks), stack_worker.py (the worker, its /status and
refreshed copies, its processes), stack_http.py (requests through nginx, nginx's logs and cache,
client addresses), nginx_tools.py (another nginx on a stack's worker, nginx -t of the drop-ins),
waits.py (wait_for, await_true, hang, pace, quiet_window).

Binaries come from $CONNECTOR_BUILD_DIR (default: <repo>/build); ctest sets it to the build tree
that registered the test, so build-asan/ runs the sanitized worker. Python 3 standard library only.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from fcgi_client import fcgi_get
from harness_base import (ACCOUNTS_ENV, ADMIN, BUILD_DIR, DB_PASSWORD, LOAD_FROM_ONE_CLIENT,
                          MARIADB_INIT_CACHE, READ_PASSWORD, READ_USER, REPL_PASSWORD, REPO,
                          SANITIZER_MARKERS, SCRIPTS, WORKER, WORKER_START_TIMEOUT,
                          WORKER_STOP_TIMEOUT, WORKER_WRAPPER, WRITE_PASSWORD, WRITE_USER,
                          StackError, _free_port, _os_user, _run, _tail, endpoint_descriptions,
                          endpoint_params, nginx_contract, sanitized_build)
from harness_base import WEBHOOKS_PASSWORD, WEBHOOKS_USER
from nginx_tools import nginx_t, start_nginx, stop_nginx
from stack_db import StackDatabase
from stack_http import (Headers, Response, StackHttp, client_address, connect, nginx_access_line,
                        prometheus, source_for, target_path, upstream_status)
from stack_worker import StackWorker
from tripwire import Tripwire
from waits import await_true, hang, pace, quiet_window, wait_for

# What tests import from here (the harness's parts live in the modules above).
__all__ = [
    "ACCOUNTS_ENV", "ADMIN", "BUILD_DIR", "DB_PASSWORD", "LOAD_FROM_ONE_CLIENT",
    "MARIADB_INIT_CACHE", "READ_PASSWORD", "READ_USER", "REPL_PASSWORD", "REPO",
    "SANITIZER_MARKERS", "SCRIPTS", "WORKER", "WORKER_START_TIMEOUT", "WORKER_STOP_TIMEOUT",
    "WORKER_WRAPPER", "WRITE_PASSWORD", "WRITE_USER", "StackError", "_free_port", "_os_user",
    "_run", "_tail", "endpoint_descriptions", "endpoint_params", "nginx_contract",
    "sanitized_build", "fcgi_get", "Headers", "Response", "client_address", "connect",
    "nginx_access_line", "prometheus", "source_for", "target_path", "upstream_status",
    "await_true", "hang", "pace", "quiet_window", "wait_for", "nginx_t", "start_nginx",
    "stop_nginx", "Stack", "chromium_dom", "WEBHOOKS_PASSWORD", "WEBHOOKS_USER",
]


class Stack(StackDatabase, StackWorker, StackHttp):
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
        self._write_configs(threads, config, accounts, replica, events)
        try:
            self._start_servers(fixture, accounts, replica, events)
        except BaseException:
            self.stop(check=False)
            raise

    def _write_configs(self, threads, config, accounts, replica, events):
        """The worker's config file (self.settings) and, when the worker reads with other
        accounts, connector-admin's own."""
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

    def _start_servers(self, fixture, accounts, replica, events):
        """MariaDB (and the replica), the schema, the accounts, the fixture, the worker, nginx."""
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

    def _env(self, extra=None):
        """The environment for our programs: no stray CONNECTOR_* overrides from outside."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
        env["CONNECTOR_DB_PASSWORD"] = DB_PASSWORD
        env["CONNECTOR_MARIADB_INIT_CACHE"] = MARIADB_INIT_CACHE
        env.update(extra or {})
        return env

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

    def admin(self, *args, timeout=120):
        """Runs connector-admin --config <this stack's config> ARGS; returns the
        CompletedProcess (text stdout/stderr) without checking the exit code."""
        return subprocess.run([str(ADMIN), "--config", str(self.admin_config_path),
                               *[str(a) for a in args]], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=self._env())


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
