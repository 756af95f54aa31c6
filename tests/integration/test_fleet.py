"""A fleet on this machine (scripts/fleet): a primary MariaDB, three nodes on 127.0.0.11-13, each
with its own replica, worker pool and nginx (cache and per-client limits on, realip from the
front), and the front nginx on 127.0.0.1 rendered from nginx/connector-balancer.conf.example.
Clients of the front send from addresses of their own (127.0.0.100 and up), as the clients of a
real balancer do.

What a fleet must do (issue 23): every node gives the same bytes and ETags; a node killed or
restarted under load costs no client request; a lagging replica is passed over within
db_replica_max_lag_s (4 s here) plus a probe interval; losing the primary leaves reads working;
the per-client limits count clients, not the balancer. Issue 33: idle long-polls held past the
front's 5 s for the rest of /v1 take no node out (the nodes hold a poll POLL_S here)."""

import concurrent.futures
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
import threading
import time
import unittest
import uuid
from pathlib import Path

from harness import BUILD_DIR, MARIADB_INIT_CACHE, REPO, await_true, prometheus
from load_client import ACCOUNT_QUERY, Load, Target
from tripwire import Tripwire

MAX_LAG_S = 4
# How long a node holds a quiet long-poll here (NGINX_CONNECTOR_EVENTS_POLL_S; 30 s as shipped):
# above the 5 s of the balancer's timeouts for the rest of /v1, as the shipped 30 s is.
POLL_S = 8
# The bound on a lagging replica's staleness is MAX_LAG_S plus one probe interval; a loaded
# machine gets a few seconds more before the test calls it a failure.
SHOWN_WITHIN_S = MAX_LAG_S + 1 + 5
NODES = 3
# Thirteen client addresses, one per connection of the load: 13 is prime to the rotation's 9
# targets, so every connection sends each endpoint in turn, /v1/account one request in nine.
CLIENTS = [f"127.0.0.{100 + i}" for i in range(13)]
JSON = "application/json; charset=utf-8"

fleet = None


def setUpModule():
    global fleet
    fleet = Fleet()


def tearDownModule():
    crashes = fleet.stop()
    assert not crashes, f"crashes beside the fleet's last test: {crashes}"


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
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="connector-fleet-"))
        self.port = free_port_pair()
        env = {**os.environ, "CONNECTOR_MARIADB_INIT_CACHE": MARIADB_INIT_CACHE,
               "CONNECTOR_BUILD_DIR": str(BUILD_DIR),
               "CONNECTOR_FLEET_WORKER_CONF": f"db_replica_max_lag_s = {MAX_LAG_S}",
               "NGINX_CONNECTOR_EVENTS_POLL_S": str(POLL_S)}
        self.log = open(self.dir / "fleet.log", "wb")
        self.process = subprocess.Popen(
            [str(REPO / "scripts" / "fleet"), "--port", str(self.port), "--nodes", str(NODES),
             "--state", str(self.dir / "state")], stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, env=env)
        state_file = self.dir / "state" / "state.json"
        deadline = time.monotonic() + 240
        while not state_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.log_text()[-3000:]
                self.stop()
                raise RuntimeError("scripts/fleet did not start:\n" + log)
            time.sleep(0.2)
        self.state = json.loads(state_file.read_text())
        self.nodes = self.state["nodes"]
        # Fails the test during which a process of the fleet crashed (tripwire.py): the front's
        # and every node's nginx (its events nginx, where nchan runs, too), every node's worker.
        self.tripwire = Tripwire("fleet")
        self.tripwire.watch(Path(self.state["front_dir"]) / "error.log")
        for node in self.nodes:
            self.tripwire.watch(Path(node["dir"]) / "nginx" / "error.log")
            self.tripwire.watch(Path(node["dir"]) / "nginx" / "events" / "error.log")
            self.tripwire.watch(Path(node["dir"]) / "worker.log")

    def log_text(self):
        return (self.dir / "fleet.log").read_text(errors="replace")

    def stop(self):
        """Stops the fleet; returns the crashes its logs gained since the last test, its
        shutdown included."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        crashes = self.tripwire.close() if hasattr(self, "tripwire") else []
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return crashes

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
        return json.loads((self.dir / "state" / "state.json").read_text())

    def run_doc_block(self, block, **variables):
        """A shell block of docs/operations-fleet.md as printed, in bash -e from the repository,
        with `fleet` the state folder (as the document says) and the variables given."""
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=REPO,
                                env={**os.environ, "fleet": str(self.dir / "state"), **variables},
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


GUIDE = REPO / "docs" / "operations-fleet.md"


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


def sample_targets():
    """Canonical targets over the seven endpoints, with hashes of the fleet's sample data."""
    status, _, body = get(fleet.state["front"], "/v1/history?page_size=3", source=CLIENTS[0])
    assert status == 200, body
    hashes = [record["hash"] for record in json.loads(body)["list"]]
    return ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history?page_size=5",
            "/v1/history?page_size=2&status=Confirmed&order=ASC", f"/v1/history/hash?hash={hashes[0]}",
            f"/v1/history/hash?hash={hashes[1]}", "/v1/ab", f"/v1/account?{ACCOUNT_QUERY}"]


def load_through_front(connections=len(CLIENTS)):
    """Load on the front from thirteen client addresses, each connection at most 12 requests a
    second (under every node's per-client limits: 20 r/s, and 2 r/s for /v1/account)."""
    targets = [Target(path, unique=(i % 2 == 0)) for i, path in enumerate(sample_targets())]
    return Load(fleet.port, targets, connections=connections, sources=CLIENTS,
                interval=1 / 12, timeout=20)


def failures(load):
    return [r for r in load.records if not r.ok]


class Consistency(unittest.TestCase):
    def answers(self, path):
        """(status, ETag, body) of every node for path."""
        out = []
        for node in fleet.nodes:
            status, headers, body = get(node["url"], path)
            out.append((status, headers.get("ETag"), body))
        return out

    def assert_identical(self, path):
        answers = self.answers(path)
        self.assertEqual(answers[0][0], 200, (path, answers[0][2][:200]))
        self.assertIsNotNone(answers[0][1], path)
        for node, answer in zip(fleet.nodes[1:], answers[1:]):
            self.assertEqual(answer, answers[0], f"{path}: {node['name']} differs from node1")
        return answers[0]

    def test_every_node_gives_the_same_bytes_and_etag_before_and_after_new_records(self):
        fleet.wait_replicas_caught_up()
        for path in sample_targets():
            with self.subTest(path=path):
                _, etag, _ = self.assert_identical(path)
                # A client whose next request lands on another node still gets its 304.
                for node in fleet.nodes[1:]:
                    status, headers, body = get(node["url"], path, {"If-None-Match": etag})
                    self.assertEqual((status, body, headers.get("ETag")), (304, b"", etag),
                                     f"{path} on {node['name']}")

        new_hashes = [fleet.new_record() for _ in range(3)]
        fleet.wait_replicas_caught_up()
        page = "/v1/history?page_size=5"
        # Every node shows the new records once its cache entry (2 s for a page) has expired,
        # and all agree byte for byte.
        def agreed_with_new_records():
            answers = self.answers(page)
            return (all(a == answers[0] for a in answers) and answers[0][0] == 200 and
                    all(h.encode() in answers[0][2] for h in new_hashes))
        await_true(agreed_with_new_records, seconds=15, step=0.5)
        for path in [page] + [f"/v1/history/hash?hash={h}" for h in new_hashes]:
            with self.subTest(path=path):
                self.assert_identical(unique(path))

    def test_the_same_new_recipient_asked_of_two_nodes_at_once_is_one_row(self):
        recipient = new_recipient()
        path = (f"/v1/account?recipient_address={recipient}&recipient_blockchain=unitiot"
                "&deposit_blockchain=unitcore")
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda node: get(node["url"], path),
                                    [fleet.nodes[0], fleet.nodes[1]] * 2))
        self.assertEqual([a[0] for a in answers], [200] * 4, [a[2][:200] for a in answers])
        addresses = {json.loads(a[2])["deposit_address"] for a in answers}
        self.assertEqual(len(addresses), 1, addresses)
        rows = fleet.sql("SELECT COUNT(*) FROM deposit_accounts WHERE "
                         f"recipient_address = '{recipient}'")
        self.assertEqual(rows, [["1"]])


class EventStream:
    """An address's event stream on one node (docs/events.md), read on a thread: (id, data)."""

    def __init__(self, url, address):
        host, port = url.removeprefix("http://").split(":")
        self.events = []
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.sendall(f"GET /v1/history/events?address={address} HTTP/1.1\r\nHost: x\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.opened = False
        threading.Thread(target=self._read, daemon=True).start()
        await_true(lambda: self.opened, what=f"the stream on {url}")

    def _read(self):
        received, body = b"", b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            received += chunk
            if not self.opened:
                if b"\r\n\r\n" not in received:
                    continue
                self.opened = True
                received = received.split(b"\r\n\r\n", 1)[1]
            # The body comes chunked (the node's nginx proxies the events nginx's stream).
            while (end := received.find(b"\r\n")) >= 0:
                size = int(received[:end].split(b";")[0], 16)
                if len(received) < end + 2 + size + 2:
                    break
                body += received[end + 2:end + 2 + size]
                received = received[end + 2 + size + 2:]
            for seq, data in re.findall(rb"id: ([0-9]+)\ndata: (.*)\n\n", body):
                self.events.append((seq.decode(), data))
            body = body[body.rfind(b"\n\n") + 2:] if b"\n\n" in body else body

    def close(self):
        # shutdown() first: close() alone leaves the connection open while the reading thread
        # waits in recv() (until nchan's next ping), and the nginx workers holding it with it.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class Events(unittest.TestCase):
    def test_every_node_publishes_the_changes_of_its_own_replica(self):
        address = fleet.sql("SELECT destination_address FROM history ORDER BY id DESC LIMIT 1")[0][0]
        streams = [EventStream(node["url"], address) for node in fleet.nodes]
        try:
            new_hash = fleet.new_record()
            await_true(lambda: all(s.events for s in streams), seconds=15,
                       what="the new record's event on every node")
            seq = fleet.sql("SELECT MAX(seq) FROM history_changes")[0][0]
            body = get(fleet.nodes[0]["url"], f"/v1/history/hash?hash={new_hash}")[2]
            for node, stream in zip(fleet.nodes, streams):
                self.assertEqual(stream.events, [(seq, body)], node["name"])
                # From the node's own nginx, published by the node's own worker.
                status = json.loads(get(node["url"], "/status")[2])
                self.assertGreaterEqual(status["events"]["cursor"], int(seq), node["name"])
        finally:
            for stream in streams:
                stream.close()


class LongPolls(unittest.TestCase):
    """Issue 33: the front once took every node out on ordinary long-polls. A node holds a
    quiet poll for its poll time; the front's 5 s read timeout for /v1 ended it as a failure
    (max_fails=1) and sent it to the next node, so six idle polls left the front no node for
    5 s: other clients' /v1/networks got nginx's HTML 502, the polls 502 or 504. A stream
    through the front is held meanwhile too, and passes the next change on."""

    def test_idle_long_polls_through_the_front_take_no_node_out(self):
        front = fleet.state["front"]
        address = new_recipient()  # no record: a channel nothing is published to
        path = f"/v1/history/changes?address={address}"

        def published():
            """Where each node says to poll from (None: its 503 while it catches up)."""
            answers = [get(node["url"], path) for node in fleet.nodes]
            return {json.loads(body)["after"] if status == 200 else None
                    for status, _, body in answers}
        # Every node has published as far (the earlier tests' changes): any may take a poll.
        await_true(lambda: len(published()) == 1 and None not in published(), seconds=30,
                   what="the same published point on every node")
        [after] = published()
        # A stream through the front, held as long as the polls and then some.
        followed = fleet.sql("SELECT destination_address FROM history ORDER BY id DESC LIMIT 1")[0][0]
        stream = EventStream(front, followed)
        self.addCleanup(stream.close)
        pollers = [f"127.0.0.{150 + i}" for i in range(6)]
        with concurrent.futures.ThreadPoolExecutor(len(pollers)) as pool:
            polls = [pool.submit(get, front, f"{path}&after={after}", None, source)
                     for source in pollers]
            # Other clients meanwhile, each at 10 r/s (under a node's 20 r/s per client), until
            # every poll has its answer (a node holds them POLL_S, past the front's old 5 s).
            others = []
            while not all(poll.done() for poll in polls):
                for source in ("127.0.0.170", "127.0.0.171"):
                    status, headers, body = get(front, "/v1/networks", source=source)
                    others.append((status, headers.get("Content-Type"), body))
                time.sleep(0.1)
            answers = [poll.result() for poll in polls]
        self.assertGreater(len(others), 10)
        self.assertEqual([(s, t, b[:80]) for s, t, b in others if (s, t) != (200, JSON)], [])
        self.assertEqual({len(json.loads(body)["networks"]) for _, _, body in others}, {2})
        self.assertEqual([(status, body) for status, _, body in answers],
                         [(200, b'{"changes":[]}')] * len(pollers))
        # The stream is still open, and passes the next change on as it comes.
        self.assertEqual(stream.events, [])
        new_hash = fleet.new_record()
        await_true(lambda: stream.events, seconds=15, what="the change through the front")
        seq = fleet.sql("SELECT MAX(seq) FROM history_changes")[0][0]
        body = get(fleet.nodes[0]["url"], f"/v1/history/hash?hash={new_hash}")[2]
        self.assertEqual(stream.events, [(seq, body)])
        # Every node has published it before the next test follows the same address.
        await_true(lambda: all(json.loads(get(node["url"], "/status")[2])["events"]["cursor"] >=
                               int(seq) for node in fleet.nodes), what="every node's cursor")


class NodeFailures(unittest.TestCase):
    def test_a_node_killed_under_load_costs_no_request_and_serves_again_once_restarted(self):
        node = fleet.nodes[0]
        load = load_through_front()
        with load:
            time.sleep(2)
            fleet.kill_node(node)
            time.sleep(4)
            fleet.start_node(node)
            time.sleep(2)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        for path in ("/v1/networks", unique("/v1/history?page_size=2")):
            self.assertEqual(get(node["url"], path)[0], 200, path)

    def test_a_rolling_restart_under_load_costs_no_request(self):
        [restart] = doc_blocks(4, "sh")
        load = load_through_front()
        with load:
            time.sleep(1)
            for node in fleet.nodes:
                fleet.run_doc_block(restart, node=node["dir"])
                # As an operator does: the next node only once the front sends this one
                # clients' requests again (after its fail_timeout, 5 s), else a second node out
                # at once would leave the front one node, then none.
                fleet.wait_front_traffic(node)
            time.sleep(1)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        # state.json names the processes running now, not those the fleet started with.
        for node, listed in zip(fleet.nodes, fleet.current_state()["nodes"]):
            worker, nginx = fleet.node_pids(node)
            self.assertEqual((listed["worker_pid"], listed["nginx_pid"]), (worker, nginx))
            self.assertTrue(alive(worker) and alive(nginx), node["name"])

    def test_a_node_removed_and_added_under_load_costs_no_request(self):
        _reload, commands = doc_blocks(3, "sh")
        remove, add = commands.splitlines()
        node = fleet.nodes[-1]
        k = node["name"].removeprefix("node")
        self.assertEqual((remove, add), (f'scripts/fleet-node remove "$fleet" {k}',
                                         f'scripts/fleet-node add "$fleet" {k}'))
        upstream = Path(fleet.current_state()["front_dir"]) / "conf.d" / "connector-balancer.conf"
        line = f"server {node['address']}:{fleet.port} "
        load = load_through_front()
        with load:
            time.sleep(1)
            fleet.run_doc_block(remove)
            self.assertEqual([n["name"] for n in fleet.current_state()["nodes"]],
                             [n["name"] for n in fleet.nodes[:-1]])
            self.assertNotIn(line, upstream.read_text())
            self.assertFalse(Path(node["dir"]).exists())
            with self.assertRaises(ConnectionRefusedError):
                get(node["url"], "/v1/networks")
            fleet.run_doc_block(add)
            fleet.wait_front_traffic(node)
            time.sleep(1)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        self.assertEqual(upstream.read_text().count(line), 1)
        listed = fleet.current_state()["nodes"]
        self.assertEqual([n["name"] for n in listed], [n["name"] for n in fleet.nodes])
        self.assertEqual(fleet.node_pids(node), (listed[-1]["worker_pid"], listed[-1]["nginx_pid"]))
        fleet.wait_replicas_caught_up([node])
        await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)

    def test_the_front_reloads_as_the_document_says(self):
        [reload, _commands] = doc_blocks(3, "sh")
        master = fleet.current_state()["front_pid"]
        self.assertTrue(alive(master))
        # The workers of an earlier reload (a node added) may still be finishing.
        await_true(lambda: len(front_workers(master)) == 2, seconds=30)
        old_workers = front_workers(master)
        fleet.run_doc_block(reload)
        # The same master, a new generation of its two workers.
        await_true(lambda: len(front_workers(master)) == 2 and
                   front_workers(master).isdisjoint(old_workers), seconds=30)
        self.assertEqual(fleet.current_state()["front_pid"], master)
        self.assertEqual(get(fleet.state["front"], "/v1/networks", source=CLIENTS[0])[0], 200)


def front_workers(master):
    """The pids of the front's nginx worker processes."""
    result = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return {int(pid) for pid in result.stdout.split()}


def replica_state(node):
    status, _, body = get(node["url"], "/status")
    assert status == 200, body
    return next(s for s in json.loads(body)["db_servers"] if s["role"] == "replica")


def found(node, record_hash):
    status = get(node["url"], unique(f"/v1/history/hash?hash={record_hash}"))[0]
    assert status in (200, 404), status
    return status == 200


class ReplicaLag(unittest.TestCase):
    def tearDown(self):
        for node in fleet.nodes:
            fleet.replica_sql(node, "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 0; START SLAVE")
        fleet.wait_replicas_caught_up()
        for node in fleet.nodes:
            await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)

    def test_a_stopped_replica_is_passed_over_within_the_bound_and_taken_back(self):
        node, other = fleet.nodes[0], fleet.nodes[1]
        existing = fleet.new_record()
        fleet.wait_replicas_caught_up()
        fleet.replica_sql(node, "STOP SLAVE SQL_THREAD")
        record = fleet.new_record()
        fleet.sql(f"UPDATE history SET status = 'Error' WHERE hash = '{existing}'")
        changed_at = time.monotonic()
        await_true(lambda: found(node, record), seconds=SHOWN_WITHIN_S, step=0.2)
        shown_after = time.monotonic() - changed_at
        # The status change too, by every process of the node (each reads the rotation from
        # the pool's scoreboard at each request).
        for _ in range(6):
            status, _, body = get(node["url"], unique(f"/v1/history/hash?hash={existing}"))
            self.assertEqual((status, json.loads(body)["status"]), (200, "Error"))
        print(f"\nfleet: a stopped replica's node showed a new record after {shown_after:.1f} s "
              f"(db_replica_max_lag_s {MAX_LAG_S})", flush=True)
        state = replica_state(node)
        self.assertFalse(state["in_rotation"])
        self.assertGreater(state["lag_seconds"], MAX_LAG_S)
        metrics = prometheus(get(node["url"], "/metrics")[2].decode())
        self.assertEqual(metrics[("connector_db_server_in_rotation",
                                  frozenset({("server", f"unix:{node['replica_socket']}")}))], 0)
        # The other nodes' replicas are current: they stay in rotation.
        self.assertTrue(replica_state(other)["in_rotation"])

        fleet.replica_sql(node, "START SLAVE SQL_THREAD")
        fleet.wait_replicas_caught_up([node])
        await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)
        # Reads are back on the replica: a row only it has is found, by every process.
        only_there = fleet.new_record(replica_only_on=node)
        for _ in range(6):
            self.assertTrue(found(node, only_there))

    def test_a_delayed_replica_is_out_while_behind(self):
        node = fleet.nodes[1]
        fleet.replica_sql(node, "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 60; START SLAVE")
        await_true(lambda: not replica_state(node)["in_rotation"], seconds=SHOWN_WITHIN_S)
        self.assertGreater(replica_state(node)["lag_seconds"], MAX_LAG_S)
        # Every process of the node reads the primary from then on (db/replica_monitor.h).
        record = fleet.new_record()
        for _ in range(6):
            self.assertTrue(found(node, record))


class PrimaryLost(unittest.TestCase):
    def test_reads_answer_from_the_replicas_and_new_recipients_recover_with_the_primary(self):
        recorded = json.loads(get(fleet.nodes[0]["url"], f"/v1/account?{ACCOUNT_QUERY}")[2])
        fleet.wait_replicas_caught_up()
        primary_dir = Path(fleet.state["primary"]["socket"]).parent
        subprocess.run([str(REPO / "scripts" / "mariadb-stop"), str(primary_dir)], check=True,
                       capture_output=True, timeout=120)
        try:
            new_path = (f"/v1/account?recipient_address={new_recipient()}"
                        "&recipient_blockchain=unitiot&deposit_blockchain=unitcore")
            for node in fleet.nodes:
                for path in sample_targets_from(node):
                    with self.subTest(node=node["name"], path=path):
                        status, _, body = get(node["url"], unique(path))
                        self.assertEqual(status, 200, body[:300])
                self.assertTrue(replica_state(node)["in_rotation"], node["name"])
                # A recorded recipient is still answered (from the replica).
                status, _, body = get(node["url"], unique(f"/v1/account?{ACCOUNT_QUERY}"))
                self.assertEqual((status, json.loads(body)), (200, recorded))
                status, headers, body = get(node["url"], new_path)
                self.assertEqual(status, 503, body[:300])
                self.assertEqual(json.loads(body)["error"]["code"], "unavailable")
                self.assertIsNotNone(headers.get("Retry-After"))
        finally:
            subprocess.run([str(REPO / "scripts" / "mariadb-start"), str(primary_dir)],
                           check=True, capture_output=True, timeout=120)
        for node in fleet.nodes:
            await_true(lambda: get(node["url"], new_path)[0] == 200, seconds=30, step=0.5)
        fleet.wait_replicas_caught_up()


def sample_targets_from(node):
    status, _, body = get(node["url"], unique("/v1/history?page_size=2"))
    assert status == 200, body
    record_hash = json.loads(body)["list"][0]["hash"]
    return ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history?page_size=5",
            f"/v1/history/hash?hash={record_hash}", "/v1/ab"]


class ClientLimits(unittest.TestCase):
    def test_limits_count_clients_behind_the_balancer_and_cannot_be_forged(self):
        heavy, light, direct = "127.0.0.200", "127.0.0.201", "127.0.0.202"
        front = fleet.state["front"]
        # The heavy client sends far past 20 r/s + a burst of 40 on every node at once: 200
        # requests to each, which a node refuses in part unless they take over 8 s.
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            heavy_statuses = list(pool.map(
                lambda _: get(front, "/v1/networks", source=heavy)[0], range(600)))
        self.assertIn(429, heavy_statuses)
        self.assertEqual(set(heavy_statuses), {200, 429})
        # Another client at the same moment is not limited, even when it claims the heavy
        # client's address, or any other, in X-Forwarded-For.
        light_statuses = [get(front, "/v1/networks",
                              {"X-Forwarded-For": forged} if forged else {}, light)[0]
                          for forged in (None, heavy, "10.1.2.3", f"{heavy}, {light}")
                          for _ in range(5)]
        self.assertEqual(light_statuses, [200] * 20)
        # A client that reaches a node directly cannot pose as another either: the node takes
        # X-Forwarded-For from the front's address only.
        node = fleet.nodes[0]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            direct_statuses = list(pool.map(
                lambda _: get(node["url"], "/v1/networks", {"X-Forwarded-For": light},
                              direct)[0], range(120)))
        self.assertIn(429, direct_statuses)
        self.assertEqual([get(front, "/v1/networks", source=light)[0] for _ in range(5)],
                         [200] * 5)
        # The nodes' logs name the client, not the front.
        log = (Path(node["dir"]) / "nginx" / "access.log").read_text()
        self.assertIn(f"\n{light} [", "\n" + log)
        self.assertIn(f"\n{direct} [", "\n" + log)


class PrimaryReplaced(unittest.TestCase):
    """Losing the primary for good, and replacing it as docs/operations-fleet.md (section 6)
    says, its blocks run as printed: promote the most advanced replica with MariaDB's own
    statements, keep it writable across a restart, point the others and the writers at it,
    SIGHUP the workers. Runs last: the fleet keeps the new topology."""

    def test_a_promoted_replica_takes_the_writes_and_the_others_follow_it(self):
        promote, follow = doc_blocks(6, "sql")
        writable, writers = doc_blocks(6, "sh")
        fleet.wait_replicas_caught_up()
        primary_dir = Path(fleet.state["primary"]["socket"]).parent
        subprocess.run([str(REPO / "scripts" / "mariadb-stop"), str(primary_dir)], check=True,
                       capture_output=True, timeout=120)
        # 1. The most advanced replica (all are equal here: they had caught up).
        positions = {n["name"]: fleet.replica_sql(n, "SELECT @@gtid_slave_pos")[0][0]
                     for n in fleet.nodes}
        self.assertEqual(len(set(positions.values())), 1, positions)
        new_primary, others = fleet.nodes[0], fleet.nodes[1:]
        # 2. Promote it, and keep it writable across a restart.
        admin_sql(new_primary["replica_socket"], promote)
        fleet.run_doc_block(writable, node=new_primary["dir"])
        # 3. The other replicas follow it, from the GTID position they have reached.
        for node in others:
            admin_sql(node["replica_socket"], follow.replace("<new primary>", "127.0.0.1")
                      .replace("<its port>", str(new_primary["replica_port"])))
        # 4. The writers (and the last resort for reads) point at it; SIGHUP each worker.
        old = f"db_port = {fleet.state['primary']['port']}\n"
        for node in fleet.nodes:
            self.assertIn(old, Path(node["config"]).read_text())
        fleet.run_doc_block(writers, node=new_primary["dir"])
        for node in fleet.nodes:
            self.assertIn(f"db_port = {new_primary['replica_port']}\n",
                          Path(node["config"]).read_text())

        recipient = self.recorded_through_every_node(new_primary)
        # The others replicate from the new primary: the row, and its heartbeat, reach them,
        # and their nodes keep them in rotation.
        count = f"SELECT COUNT(*) FROM deposit_accounts WHERE recipient_address = '{recipient}'"
        for node in others:
            await_true(lambda: fleet.replica_sql(node, count) == [["1"]], seconds=30)
        for node in fleet.nodes:
            await_true(lambda: replica_state(node)["in_rotation"] and
                       replica_state(node)["lag_seconds"] is not None and
                       replica_state(node)["lag_seconds"] <= MAX_LAG_S / 2, seconds=30)
            status, _, body = get(node["url"], unique("/v1/history?page_size=2"))
            self.assertEqual(status, 200, body[:200])

        # After a restart the new primary is still a primary: writable, every event of sql/
        # enabled (the heartbeat, the change feed's trim), new recipients recorded.
        for script in ("stop-replica", "start-replica"):
            subprocess.run([f"{new_primary['dir']}/{script}"], check=True, capture_output=True,
                           timeout=120)
        self.assertEqual(fleet.replica_sql(new_primary, "SELECT @@read_only"), [["0"]])
        events = set(re.findall(r"^CREATE EVENT (\w+)$", "".join(
            f.read_text() for f in (REPO / "sql" / "migrations").glob("*.sql")), re.M))
        self.assertGreaterEqual(events, {"replication_heartbeat_tick", "history_changes_trim"})
        enabled = fleet.replica_sql(new_primary, "SELECT event_name FROM information_schema.events "
                                    "WHERE event_schema = 'connector' AND status = 'ENABLED'")
        self.assertEqual({row[0] for row in enabled}, events)
        self.recorded_through_every_node(new_primary)

    def recorded_through_every_node(self, primary):
        """A new recipient asked of every node is answered, and recorded once on primary."""
        recipient = new_recipient()
        path = (f"/v1/account?recipient_address={recipient}&recipient_blockchain=unitiot"
                "&deposit_blockchain=unitcore")
        for node in fleet.nodes:
            await_true(lambda: get(node["url"], path)[0] == 200, seconds=30, step=0.5)
        count = f"SELECT COUNT(*) FROM deposit_accounts WHERE recipient_address = '{recipient}'"
        self.assertEqual(fleet.replica_sql(primary, count), [["1"]])
        return recipient


class Document(unittest.TestCase):
    def test_the_procedures_have_the_blocks_the_tests_run(self):
        # A block lost to a formatting slip would otherwise go untested silently.
        self.assertEqual([len(doc_blocks(3, "sh")), len(doc_blocks(4, "sh")),
                          len(doc_blocks(6, "sql")), len(doc_blocks(6, "sh"))], [2, 1, 2, 2])
        promote = doc_blocks(6, "sql")[0]
        self.assertTrue(promote.startswith("USE connector;\n"), promote)


def load_tests(loader, tests, pattern):
    """The classes in this order: the replaced primary last."""
    suite = unittest.TestSuite()
    for case in (Document, ClientLimits, Consistency, Events, LongPolls, NodeFailures, ReplicaLag,
                 PrimaryLost, PrimaryReplaced):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    unittest.main()
