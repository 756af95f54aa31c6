"""The fleet the test_fleet* modules run (scripts/fleet), one per module: a primary MariaDB,
three nodes on 127.0.0.11-13, each with its own replica, worker pool and nginx (cache and
per-client limits on, realip from the front) with its events nginx, and the front nginx on
127.0.0.1 rendered from nginx/connector-balancer.conf.example. Clients of the front send from
addresses of their own (127.0.0.100 and up), as the clients of a real balancer do.

What a fleet must do (issue 23), by subject: what clients see, the same from every node and
counted per client (test_fleet); nodes killed, restarted, removed and added under load at no
client request's cost, every part stopped and started by its script (test_fleet_nodes); a
lagging replica passed over within db_replica_max_lag_s (4 s here) plus a probe interval, the
primary lost for a while and for good (test_fleet_primary). Here: the Fleet and what the tests
share (requests, the document's procedures, the nodes' database state)."""

import http.client
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import textwrap
import uuid
from pathlib import Path

from harness import BUILD_DIR, MARIADB_INIT_CACHE, REPO, await_true, wait_for
from load_client import ACCOUNT_QUERY, Load, Target
from tripwire import Tripwire

MAX_LAG_S = 4
# How long a node holds a quiet long-poll here (NGINX_CONNECTOR_EVENTS_POLL_S; 30 s as shipped):
# above the 5 s of the balancer's timeouts for the rest of /v1, as the shipped 30 s is.
POLL_S = 8
NODES = 3
# Thirteen client addresses, one per connection of the load: 13 is prime to the rotation's 9
# targets, so every connection sends each endpoint in turn, /v1/account one request in nine.
CLIENTS = [f"127.0.0.{100 + i}" for i in range(13)]
GUIDE = REPO / "docs" / "operations-fleet.md"


def free_port_pair():
    """A port p free on 127.0.0.1 (the front) and on the nodes' addresses, with p + 1 (the
    primary) and p + 1 + k (node k's replica) free on 127.0.0.1. Below the kernel's ephemeral
    range (32768 and up by default), so that no outgoing connection takes one of them while the
    fleet's servers are restarted on them."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, 32000 - NODES - 2)
        try:
            for address, p in ([("127.0.0.1", port + 1 + k) for k in range(NODES + 1)] +
                               [(f"127.0.0.{10 + k}", port) for k in range(NODES + 1)]):
                with socket.socket() as s:
                    s.bind((address, p))
            return port
        except OSError:
            continue
    raise RuntimeError("no free ports for the fleet")


class Fleet:
    """scripts/fleet in the foreground, as an operator runs it; state.json says where it is."""

    def __init__(self, name):
        self.dir = Path(tempfile.mkdtemp(prefix=f"connector-{name}-"))
        self.state_dir = self.dir / "state"
        self.port = free_port_pair()
        env = {**os.environ, "CONNECTOR_MARIADB_INIT_CACHE": MARIADB_INIT_CACHE,
               "CONNECTOR_BUILD_DIR": str(BUILD_DIR),
               "CONNECTOR_FLEET_WORKER_CONF": f"db_replica_max_lag_s = {MAX_LAG_S}",
               "NGINX_CONNECTOR_EVENTS_POLL_S": str(POLL_S)}
        self.log = open(self.dir / "fleet.log", "wb")
        self.process = subprocess.Popen(
            [str(REPO / "scripts" / "fleet"), "--port", str(self.port), "--nodes", str(NODES),
             "--state", str(self.state_dir)], stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, env=env)
        state_file = self.state_dir / "state.json"
        if not wait_for(lambda: state_file.exists() or self.process.poll() is not None, 240, 0.2) \
                or not state_file.exists():
            log = self.log_text()[-3000:]
            self.stop()
            raise RuntimeError("scripts/fleet did not start:\n" + log)
        self.state = json.loads(state_file.read_text())
        self.nodes = self.state["nodes"]
        # Fails the test during which a process of the fleet crashed (tripwire.py): the front's
        # and every node's nginx (its events nginx, where nchan runs, too), every node's worker.
        self.tripwire = Tripwire(name)
        self.tripwire.watch(Path(self.state["front_dir"]) / "error.log")
        for node in self.nodes:
            self.tripwire.watch(Path(node["dir"]) / "nginx" / "error.log")
            self.tripwire.watch(Path(node["dir"]) / "nginx" / "events" / "error.log")
            self.tripwire.watch(Path(node["dir"]) / "worker.log")

    def log_text(self):
        return (self.dir / "fleet.log").read_text(errors="replace")

    def stop(self):
        """Stops the fleet as docs/operations-fleet.md says (scripts/fleet stop); returns what
        went wrong: the crashes its logs gained since the last test (its shutdown included), a
        process of it still running, scripts/fleet not ended as by SIGTERM."""
        problems = []
        if self.process.poll() is None:
            running = self.running_pids()
            stop = subprocess.run([str(REPO / "scripts" / "fleet"), "stop", "--state",
                                   str(self.state_dir)], capture_output=True, text=True,
                                  timeout=300)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if (stop.returncode, self.process.returncode) != (0, 128 + signal.SIGTERM):
                problems.append(f"scripts/fleet stop: {stop.returncode} {stop.stderr}; "
                                f"scripts/fleet: {self.process.returncode}")
            problems += [f"still running after scripts/fleet stop: {what}, pid {pid}"
                         for what, pid in running if alive(pid)]
        problems += self.tripwire.close() if hasattr(self, "tripwire") else []
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return problems

    def running_pids(self):
        """(what, pid) of every process state.json names as running now."""
        state = self.current_state()
        pids = [("front", state["front_pid"]), ("primary", state["primary"]["pid"])]
        for node in state["nodes"]:
            pids += [(f"{node['name']}'s {key}", node[key])
                     for key in ("worker_pid", "nginx_pid", "events_pid", "replica_pid")]
        return [(what, pid) for what, pid in pids if pid is not None]

    # --- MariaDB ---------------------------------------------------------------------------

    @staticmethod
    def sql_on(sock, statement):
        result = subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root" if os.getuid() == 0
             else os.environ.get("USER", ""), "-N", "-B", "connector", "-e", statement],
            capture_output=True, text=True, timeout=60, check=True)
        return [line.split("\t") for line in result.stdout.splitlines()]

    def sql(self, statement):
        return self.sql_on(self.state["primary"]["socket"], statement)

    def replica_sql(self, node, statement):
        return self.sql_on(node["replica_socket"], statement)

    def wait_replicas_caught_up(self, nodes=None, timeout=30):
        position = self.sql("SELECT @@gtid_binlog_pos")[0][0]
        for node in nodes or self.nodes:
            reached = self.replica_sql(node, f"SELECT MASTER_GTID_WAIT('{position}', {timeout})")
            assert reached == [["0"]], f"{node['name']}'s replica did not catch up: {reached}"

    def new_record(self, replica_only_on=None):
        """A copy of the newest record under a new id and hash, on the primary (or on one
        node's replica only); returns its hash."""
        new_hash = secrets.token_hex(32)
        statement = ("CREATE TEMPORARY TABLE copy AS SELECT * FROM history ORDER BY id DESC "
                     "LIMIT 1; UPDATE copy SET id = id + 1, hash = '" + new_hash + "'; "
                     "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy")
        if replica_only_on is not None:
            self.replica_sql(replica_only_on, "SET SESSION sql_log_bin = 0; " + statement)
        else:
            self.sql(statement)
        return new_hash

    # --- the nodes' parts --------------------------------------------------------------------

    def node_pids(self, node):
        worker = int((Path(node["dir"]) / "worker.pid").read_text())
        nginx = int((Path(node["dir"]) / "nginx" / "nginx.pid").read_text())
        return worker, nginx

    def kill_node(self, node):
        """SIGKILL to the node's nginx, its events nginx and its workers, every process of each
        (nginx first: a node whose nginx is gone refuses connections, which the front passes
        over)."""
        worker, nginx = self.node_pids(node)
        events = int((Path(node["dir"]) / "nginx" / "events" / "nginx.pid").read_text())
        os.killpg(nginx, signal.SIGKILL)
        os.killpg(events, signal.SIGKILL)
        os.killpg(worker, signal.SIGKILL)
        await_true(lambda: not any(alive(pid) for pid in (nginx, events, worker)), seconds=10)

    def current_state(self):
        """state.json as scripts/fleet-node last wrote it."""
        return json.loads((self.state_dir / "state.json").read_text())

    def run_doc_block(self, block, **variables):
        """A shell block of docs/operations-fleet.md as printed, in bash -e from the repository,
        with `fleet` the state folder (as the document says) and the variables given."""
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=REPO,
                                env={**os.environ, "fleet": str(self.state_dir), **variables},
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{block}\n{result.stdout}{result.stderr}"

    def wait_front_traffic(self, node, seconds=20):
        """Waits until the node's nginx logs a request of one of the load's clients again."""
        log = Path(node["dir"]) / "nginx" / "access.log"
        start = log.stat().st_size if log.exists() else 0

        def served_a_client():
            with open(log, "rb") as f:
                f.seek(start)
                return any(line.split(b" ", 1)[0].decode() in CLIENTS for line in f)
        await_true(served_a_client, seconds=seconds, step=0.2)

    def start_node(self, node):
        for script in ("start-worker", "start-nginx"):
            subprocess.run([f"{node['dir']}/{script}"], check=True, capture_output=True,
                           timeout=60)

    def run_script(self, script):
        """One of the fleet's start and stop scripts (its folder's, or a node's)."""
        subprocess.run([str(script)], check=True, capture_output=True, timeout=120)

    # --- clients ---------------------------------------------------------------------------------

    def sample_targets(self):
        """Canonical targets over the seven endpoints, with hashes of the fleet's sample data."""
        status, _, body = get(self.state["front"], "/v1/history?page_size=3", source=CLIENTS[0])
        assert status == 200, body
        hashes = [record["hash"] for record in json.loads(body)["list"]]
        return ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history?page_size=5",
                "/v1/history?page_size=2&status=Confirmed&order=ASC",
                f"/v1/history/hash?hash={hashes[0]}", f"/v1/history/hash?hash={hashes[1]}",
                "/v1/ab", f"/v1/account?{ACCOUNT_QUERY}"]

    def load_through_front(self, connections=len(CLIENTS)):
        """Load on the front from thirteen client addresses, each connection at most 12 requests
        a second (under every node's per-client limits: 20 r/s, and 2 r/s for /v1/account)."""
        targets = [Target(path, unique=(i % 2 == 0)) for i, path in enumerate(self.sample_targets())]
        return Load(self.port, targets, connections=connections, sources=CLIENTS,
                    interval=1 / 12, timeout=20)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (not yet reaped by its parent) is gone for this purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def doc_blocks(section, language):
    """The ```language blocks of section `section` (its number) of docs/operations-fleet.md,
    dedented, in order: the document's procedures, run as printed."""
    body = re.search(rf"^## {section}\. [^\n]*\n(.*?)(?=^## |\Z)", GUIDE.read_text(),
                     re.S | re.M).group(1)
    return [textwrap.dedent(block) for _indent, block in
            re.findall(rf"^( *)```{language}\n(.*?)^\1```", body, re.S | re.M)]


def admin_sql(sock, script):
    """SQL as the server's admin over its socket, with no database chosen (as an operator's
    `mariadb` session starts); returns its output."""
    result = subprocess.run(
        ["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root" if os.getuid() == 0
         else os.environ.get("USER", ""), "-N", "-B"], input=script, capture_output=True,
        text=True, timeout=60)
    assert result.returncode == 0, f"{script}\n{result.stderr}"
    return result.stdout


def get(url, path, headers=None, source=None):
    """One GET; returns (status, headers, body)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30,
                                            source_address=(source, 0) if source else None)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def new_recipient():
    """A recipient never asked for, in lower case (any case is valid on a UNITIoT chain)."""
    return "0x" + secrets.token_hex(20)


def unique(path):
    """A target no cache has seen (the worker ignores the extra parameter)."""
    return f"{path}{'&' if '?' in path else '?'}nocache={uuid.uuid4().hex}"


def failures(load):
    return [r for r in load.records if not r.ok]


def replica_state(node):
    status, _, body = get(node["url"], "/status")
    assert status == 200, body
    return next(s for s in json.loads(body)["db_servers"] if s["role"] == "replica")


def found(node, record_hash):
    status = get(node["url"], unique(f"/v1/history/hash?hash={record_hash}"))[0]
    assert status in (200, 404), status
    return status == 200
