"""What clients of a fleet see (fleet_support.py: the fleet, scripts/fleet): every node gives
the same bytes and ETags, and publishes the same events; idle long-polls held past the front's
5 s for the rest of /v1 take no node out (issue 33: the nodes hold a poll POLL_S here); the
per-client limits count clients, not the balancer. Nodes and parts: test_fleet_nodes; replicas
and the primary: test_fleet_primary."""

import concurrent.futures
import json
import re
import socket
import threading
import unittest
from pathlib import Path

from fleet_support import Fleet, get, new_recipient, unique
from harness import await_true, pace

JSON = "application/json; charset=utf-8"

fleet = None


def setUpModule():
    global fleet
    fleet = Fleet("fleet")


def tearDownModule():
    problems = fleet.stop()
    assert not problems, f"the fleet's stop, or beside the last test: {problems}"


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
        for path in fleet.sample_targets():
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
                pace(0.1)
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


def load_tests(loader, tests, pattern):
    """The classes in the order they were written."""
    suite = unittest.TestSuite()
    for case in (ClientLimits, Consistency, Events, LongPolls):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    unittest.main()
