"""Slowloris on the worker's socket (fcgi/pending_requests.h): 200 connections that send a
request a byte at a time and never finish it hold no thread. While they wait, every thread of
the pool is free, a request on the socket is answered, and the load through nginx gets its
200s; each of them is closed at its read deadline however many bytes it trickles, and counted
as `deadline`. The read timeout is long here (8 s) so that the moment the threads are checked
falls inside it even on a busy machine."""

import selectors
import threading
import time
import unittest

from fcgi_client import connect, fcgi_get, request_bytes, request_params
from fixture import Fixture
from harness import LOAD_FROM_ONE_CLIENT, Stack, await_true
from load_client import Load, Target

fixture = Fixture()
PROCESSES, THREADS = 2, 2
READ_TIMEOUT_S = 8
SLACK_S = 15  # a loaded machine's room beyond a deadline; the waits end as soon as they can
CONNECTIONS = 200
LOAD_CONNECTIONS = 2  # through nginx meanwhile

stack = None


def setUpModule():
    global stack
    # A load from 127.0.0.1 beside the slow connections (LOAD_FROM_ONE_CLIENT).
    stack = Stack(fixture=fixture.path, threads=THREADS, nginx_env=LOAD_FROM_ONE_CLIENT,
                  config={"processes": PROCESSES,
                          "fcgi_read_timeout_ms": READ_TIMEOUT_S * 1000})


def tearDownModule():
    stack.stop()


def closing_times(socks, timeout):
    """When the worker closed each connection (time.monotonic()), watched all at once."""
    closed_at = {}
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while len(closed_at) < len(socks) and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                now = time.monotonic()
                try:
                    data = key.fileobj.recv(4096)
                except ConnectionResetError:
                    data = b""
                assert data == b"", f"the worker answered a request it never got: {data!r}"
                closed_at[key.fileobj] = now
                selector.unregister(key.fileobj)
    return list(closed_at.values())


class Trickle:
    """Sends each connection the next byte of a request it never finishes, every 0.25 s."""

    def __init__(self, socks, data):
        self.socks, self.data = socks, data
        self.sent = [0] * len(socks)  # bytes each connection sent, kept once it is closed
        self.closed = [False] * len(socks)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.wait(0.25):
            for i, sock in enumerate(self.socks):
                if self.closed[i] or self.sent[i] >= len(self.data):
                    continue
                try:
                    sock.send(self.data[self.sent[i]:self.sent[i] + 1])
                    self.sent[i] += 1
                except OSError:  # the worker closed it
                    self.closed[i] = True


class Slowloris(unittest.TestCase):
    def test_200_slow_connections_hold_no_thread_and_end_at_their_deadline(self):
        pids = stack.worker_pids()
        before = stack.worker_status()["fcgi_rejected"]
        whole = request_bytes(request_params("/healthz"))
        never_whole = whole[:-1]
        with Load(stack.port, [Target("/v1/networks"), Target("/v1/pairs"),
                               Target("/v1/history?page_size=2", unique=True)],
                  connections=LOAD_CONNECTIONS) as load:
            opened = time.monotonic()  # no deadline can be earlier than this plus the timeout
            socks = [connect(stack.fcgi_socket) for _ in range(CONNECTIONS)]
            for sock in socks:
                sock.sendall(never_whole[:1])
            trickle = Trickle(socks, never_whole[1:])
            trickle.thread.start()
            try:
                # Every connection waits, without a thread: all of them pending, every thread
                # free but the one answering /status, and a whole request on the socket is
                # answered meanwhile.
                await_true(lambda: stack.worker_status()["pending_requests"] >= CONNECTIONS,
                           SLACK_S, 0.05, what=f"{CONNECTIONS} requests pending")
                status, _ = stack.settled_status(timeout=SLACK_S)
                self.assertEqual(status["idle_threads"], PROCESSES * THREADS - 1)
                # The slow ones, and at most one of each load connection's requests that nginx
                # was sending at that moment.
                self.assertIn(status["pending_requests"] - CONNECTIONS,
                              range(LOAD_CONNECTIONS + 1))
                self.assertEqual(fcgi_get(stack.fcgi_socket, "/healthz")[0], 200)
                # Each is closed at its read deadline, none before, trickling or not: no
                # deadline is earlier than the moment they were opened plus the timeout.
                closed_at = closing_times(socks, READ_TIMEOUT_S + SLACK_S)
                self.assertEqual(len(closed_at), CONNECTIONS)
                self.assertGreaterEqual(min(closed_at), opened + READ_TIMEOUT_S - 0.1)
            finally:
                trickle.stop.set()
                trickle.thread.join()
                for sock in socks:
                    sock.close()
        self.assertGreater(max(trickle.sent), 0)  # they did trickle
        self.assertEqual([r for r in load.records if not r.ok], [])
        self.assertGreater(len(load.records), 0)
        status = stack.worker_status()
        self.assertEqual(status["pending_requests"], 0)
        self.assertEqual({k: status["fcgi_rejected"][k] - before[k] for k in before},
                         {"malformed": 0, "too_large": 0, "management_record": 0,
                          "deadline": CONNECTIONS})
        self.assertEqual(stack.worker_pids(), pids)
        self.assertNotIn("killed by", stack.worker_log_text())


if __name__ == "__main__":
    unittest.main()
