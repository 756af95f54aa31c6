"""The worker's FastCGI socket against peers that are not a well-behaved nginx, spoken to
directly with tests/integration/fcgi_client.py:

* Connections that send nothing, or part of a request, are closed by the worker once
  fcgi_read_timeout_ms has passed (not before), more of them than the pool has threads, while
  requests through nginx keep being answered; the pool is whole again afterwards.
* A connection kept open (FCGI_KEEP_CONN) that goes idle is closed after the same time, and
  nginx with keep-alive to the workers serves on after its kept connections were closed.
* A worker listening on TCP refuses to start without FCGI_WEB_SERVER_ADDRS (unless
  listen_allow_any = yes), and answers only the web servers it lists (a peer
  from another address is closed without an answer), warns at start when the variable is unset,
  and refuses to start on a list that is not addresses.

Timing: the read timeout here is 1.5 s; the only time assertions are that nothing is cut before
it and generous upper bounds (a loaded CI machine, or the sanitized build, runs much slower)."""

import json
import math
import os
import selectors
import signal
import socket
import struct
import subprocess
import threading
import time
import unittest

import fcgi_client
from fcgi_client import closed_by_peer, connect, fcgi_get, record, request_bytes, request_params
from fixture import Fixture
from harness import SANITIZER_MARKERS, WORKER, WORKER_WRAPPER, Stack, pace, wait_for

fixture = Fixture()
THREADS = 2
TIMEOUT_S = 1.5
# PendingRequests sweeps every tenth of the timeout (at most 250 ms): a read is cut that late.
CUT_S = TIMEOUT_S + 0.25
# Room for a slow machine on top of what the worker itself takes.
SLACK_S = 15

stack = None


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=THREADS,
                  config={"processes": 1, "fcgi_read_timeout_ms": int(TIMEOUT_S * 1000)})


def tearDownModule():
    stack.stop()


def bad_connections(idle, partial):
    """`idle` connections that send nothing and `partial` ones that stop inside a request."""
    socks = [connect(stack.fcgi_socket) for _ in range(idle)]
    begin = record(fcgi_client.BEGIN_REQUEST, 1, struct.pack("!HB5x", fcgi_client.RESPONDER, 0))
    params = record(fcgi_client.PARAMS, 1, fcgi_client.encode_params(request_params("/healthz")))
    cuts = [begin[:5],  # half a record header
            begin + params[:20]]  # a whole begin record, then a parameters record cut short
    for i in range(partial):
        sock = connect(stack.fcgi_socket)
        sock.sendall(cuts[i % len(cuts)])
        socks.append(sock)
    return socks


def wait_closed(socks, deadline):
    """{sock: monotonic time the worker closed it}; fails on data or a connection still open at
    the deadline."""
    closed = {}
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < len(socks):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{len(socks) - len(closed)} of {len(socks)} connections "
                                     "still open at the deadline")
            for key, _ in selector.select(timeout=left):
                try:
                    data = key.fileobj.recv(4096)
                except ConnectionResetError:
                    data = b""
                if data:
                    raise AssertionError(f"the worker answered a broken request: {data[:100]!r}")
                closed[key.fileobj] = time.monotonic()
                selector.unregister(key.fileobj)
    return closed


class ReadTimeout(unittest.TestCase):
    def test_silent_and_half_sent_connections_are_cut_while_nginx_is_answered(self):
        opened = time.monotonic()  # before the worker can have accepted any of them
        socks = bad_connections(idle=THREADS + 2, partial=2)
        try:
            results = []

            def through_nginx(target):
                started = time.monotonic()
                status = stack.get(target).status
                results.append((target, status, time.monotonic() - started))

            clients = [threading.Thread(target=through_nginx, args=(target,))
                       for target in ["/v1/networks", "/healthz", "/v1/pairs"] * 2]
            for client in clients:
                client.start()
            # No pool thread holds a bad connection (they wait in PendingRequests); the bound
            # below is what holding one at a time for CUT_S would take.
            rounds = math.ceil(len(socks) / THREADS)
            closed = wait_closed(socks, opened + rounds * CUT_S + SLACK_S)
            for client in clients:
                client.join(timeout=rounds * CUT_S + SLACK_S)
        finally:
            for sock in socks:
                sock.close()
        self.assertEqual(len(results), len(clients))
        self.assertEqual([status for _, status, _ in results], [200] * len(clients), results)
        self.assertLess(max(elapsed for _, _, elapsed in results), rounds * CUT_S + SLACK_S)
        # None is cut before the timeout: the worker waits that long for a request, no less.
        self.assertGreaterEqual(min(closed.values()) - opened, TIMEOUT_S - 0.1)
        self.assertIn(f"sent no complete request within {int(TIMEOUT_S * 1000)} ms",
                      stack.worker_log_text())
        # The pool is whole again: every thread idle but the one answering this.
        status, _ = stack.settled_status()
        self.assertEqual((status["active_threads"], status["idle_threads"]), (1, THREADS - 1))
        self.assertEqual(status["process_crashes"], 0)

    def test_a_kept_connection_that_goes_idle_is_closed(self):
        with connect(stack.fcgi_socket) as sock:
            for n in (1, 2):  # FCGI_KEEP_CONN: both requests on the one connection
                # The worker parks the connection once it has written the answer: it is idle
                # from some moment after the last request was sent, not before.
                idle_since = time.monotonic()
                sock.sendall(request_bytes(request_params("/healthz"), request_id=n,
                                           keep_conn=True))
                status, _, body = fcgi_client.read_response(sock)
                self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))
            self.assertTrue(closed_by_peer(sock, CUT_S + SLACK_S), "still open")
            self.assertGreaterEqual(time.monotonic() - idle_since, TIMEOUT_S - 0.1)
        self.assertEqual(stack.get("/v1/networks").status, 200)

    def test_a_body_sent_late_on_a_kept_connection_is_not_read_as_the_next_request(self):
        # The body (STDIN) arrives after the parameters, in its own packets, as it may when
        # the parameters fill libfcgi's read buffer: the worker reads it to its end before
        # answering, so the connection's next request starts clean.
        with connect(stack.fcgi_socket) as sock:
            whole = request_bytes(request_params("/healthz"), request_id=1, keep_conn=True)
            stdin_end = record(fcgi_client.STDIN, 1)
            sock.sendall(whole[:-len(stdin_end)])
            pace(0.2)  # each part in packets of its own, late
            sock.sendall(record(fcgi_client.STDIN, 1, b"x" * 600))
            pace(0.2)
            sock.sendall(stdin_end)
            status, _, body = fcgi_client.read_response(sock)
            self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))
            sock.sendall(request_bytes(request_params("/healthz"), request_id=2, keep_conn=True))
            status, _, body = fcgi_client.read_response(sock)
            self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))

    def test_idle_kept_connections_hold_no_thread(self):
        # More kept connections than the pool has threads, all idle at once: each is parked in
        # the process's epoll set, not held by a thread, so every one gets its second answer on
        # the same connection (a pool that pinned a thread to each would leave the third one
        # unread until the idle timeout closed the first).
        socks = [connect(stack.fcgi_socket) for _ in range(THREADS + 3)]
        try:
            for n in (1, 2):
                for sock in socks:
                    sock.sendall(request_bytes(request_params("/healthz"), request_id=n,
                                               keep_conn=True))
                    status, _, body = fcgi_client.read_response(sock)
                    self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))
                # Every thread idle but the one answering /status, with all of them parked.
                status, _ = stack.settled_status()
                self.assertEqual((status["active_threads"], status["idle_threads"]),
                                 (1, THREADS - 1))
        finally:
            for sock in socks:
                sock.close()


class KeptConnectionsThroughNginx(unittest.TestCase):
    def test_nginx_serves_on_after_the_worker_closed_its_idle_kept_connections(self):
        # nginx with fastcgi_keep_conn and an upstream keepalive, as shipped; its
        # keepalive_timeout (4 s) is longer than this worker's idle limit, so the worker closes
        # first and nginx must notice.
        with Stack(fixture=fixture.path, threads=THREADS,
                   config={"processes": 1, "fcgi_read_timeout_ms": int(TIMEOUT_S * 1000)}) as kept:
            self.assertIn("fastcgi_keep_conn on;",
                          (kept.nginx_prefix / "snippets" / "connector-v1.conf").read_text())
            first = [kept.get(f"/v1/history?page_size=1&n={i}").status for i in range(10)]
            process = kept.worker_children()[0]
            holding = Stack.open_fds(process)  # with the kept connections
            # Every kept connection goes idle past the timeout and is closed.
            self.assertTrue(wait_for(lambda: Stack.open_fds(process) < holding, CUT_S + SLACK_S),
                            "no kept connection was closed")
            second = [kept.get(f"/v1/history?page_size=1&n={i}").status for i in range(10)]
            self.assertEqual(first + second, [200] * 20)


class WebServerAddrs(unittest.TestCase):
    """A second worker, on TCP 127.0.0.1:<port>, on the stack's database."""

    def start_tcp_worker(self, web_server_addrs=None, expect_exit=False, **extra_settings):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CONNECTOR_") and k != "FCGI_WEB_SERVER_ADDRS"}
        env["CONNECTOR_DB_PASSWORD"] = str(stack.settings["db_password"])
        if web_server_addrs is not None:
            env["FCGI_WEB_SERVER_ADDRS"] = web_server_addrs
        for attempt in range(3):  # the free port can be taken between picking and binding
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            config = stack.dir / f"tcp-{port}.conf"
            settings = dict(stack.settings, listen=f"127.0.0.1:{port}", processes=1, threads=2,
                            **extra_settings)
            config.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
            config.chmod(0o600)
            log = stack.dir / f"tcp-{port}.log"
            with open(log, "wb") as out:
                process = subprocess.Popen([*WORKER_WRAPPER, str(WORKER), "--config", str(config)],
                                           stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                           env=env)
            if expect_exit:
                process.wait(timeout=60)
                return process, log
            self.addCleanup(self.stop, process, log)

            def listening():
                if process.poll() is not None:
                    return True
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return True
                except OSError:
                    return False

            self.assertTrue(wait_for(listening, 30), log.read_text())
            if process.poll() is None:
                return port, log
        raise AssertionError(f"the TCP worker did not start:\n{log.read_text()}")

    @staticmethod
    def stop(process, log):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120 if WORKER_WRAPPER else 20)
        text = log.read_text(errors="replace")
        assert not any(marker in text for marker in SANITIZER_MARKERS), text[-3000:]

    def test_only_the_listed_web_servers_are_answered(self):
        port, log = self.start_tcp_worker("127.0.0.1")
        address = ("127.0.0.1", port)
        self.assertEqual(fcgi_get(address, "/healthz", source="127.0.0.1")[0], 200)
        # Another address: the connection is accepted by the kernel, then closed unanswered.
        with connect(address, source="127.0.0.2") as sock:
            sock.sendall(request_bytes(request_params("/healthz")))
            self.assertTrue(closed_by_peer(sock, SLACK_S), "still open")
        self.assertEqual(fcgi_get(address, "/v1/networks", source="127.0.0.1")[0], 200)
        text = log.read_text()
        self.assertIn("FastCGI connections accepted from FCGI_WEB_SERVER_ADDRS=127.0.0.1 only",
                      text)
        self.assertIn("refused a FastCGI connection from 127.0.0.2: not in "
                      "FCGI_WEB_SERVER_ADDRS (127.0.0.1)", text)

    def test_without_the_variable_a_tcp_listen_refuses_to_start(self):
        process, log = self.start_tcp_worker(None, expect_exit=True)
        self.assertEqual(process.returncode, 1)
        self.assertIn("error: refusing to listen on TCP without FCGI_WEB_SERVER_ADDRS: any host "
                      "that can reach the port could send requests to the worker. Set it to the "
                      "address(es) of nginx (docs/operations.md), or listen_allow_any = yes on a "
                      "network no one else can reach", log.read_text())

    def test_listen_allow_any_warns_and_answers_anyone(self):
        port, log = self.start_tcp_worker(None, listen_allow_any="yes")
        self.assertEqual(fcgi_get(("127.0.0.1", port), "/healthz", source="127.0.0.2")[0], 200)
        self.assertIn("warning: listening on TCP without FCGI_WEB_SERVER_ADDRS "
                      "(listen_allow_any = yes)", log.read_text())

    def test_a_list_that_is_not_addresses_stops_the_start(self):
        process, log = self.start_tcp_worker("127.0.0.1, nginx.internal", expect_exit=True)
        self.assertEqual(process.returncode, 1)
        self.assertIn("FCGI_WEB_SERVER_ADDRS: 'nginx.internal' is not an IP address",
                      log.read_text())


if __name__ == "__main__":
    unittest.main()
