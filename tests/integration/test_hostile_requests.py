"""Hostile requests through nginx, with the shipped drop-ins and nginx's cache on (as in
production): every method on every path, absurd and malformed headers and request lines, bodies up
to 1 MB, slow and stalled clients. Every answer has exactly the expected status; every error is
the contract's JSON body with this request's id; every answer carries X-Content-Type-Options:
nosniff, no nginx version and nothing of the database, the file system or a stack trace. A
stalled client is cut off by nginx's own timeouts (client_header_timeout, client_body_timeout,
10 s). Also here: nginx's own 429 and 503, and the stack's config file (it holds a password)
private to its owner.

When every test has run, in whatever order, tearDownModule checks that the same worker processes
answer a normal request as before any hostile one, and that no log, /status or /metrics shows
the database password (hostile_support.stop_stack). Requests are built byte by byte on a raw
socket (hostile_support: the requests, the checks of every answer, the header cases). The
shipped nginx files are checked in test_nginx_files, config files holding a password in
test_config_permissions."""

import gzip
import re
import socket
import stat
import threading
import unittest
from http.client import HTTPResponse

import hostile_support
from harness import REPO, Headers, Response, connect, pace, start_nginx, stop_nginx, wait_for
from hostile_support import (ACCOUNT, JSON, METRICS, OUTSIDE, Checks, before, exchange, fixture,
                             header_cases, normal_answer, request_bytes, request_line_cases)

stack = None


def setUpModule():
    global stack
    stack = hostile_support.start_stack()


def tearDownModule():
    hostile_support.stop_stack()


# --- every method on every path ------------------------------------------------------------

HASH = fixture.history[0]["hash"]
# Path -> (status, error code) of GET and HEAD.
PATHS = {
    "/v1/networks": (200, None), "/v1/connects": (200, None), "/v1/pairs": (200, None),
    "/v1/ab": (200, None), "/v1/history?page_size=2": (200, None),
    f"/v1/history/hash?hash={HASH}": (200, None), ACCOUNT: (200, None),
    "/v1/account": (400, "missing_parameter"), "/v1/history/hash": (400, "missing_parameter"),
    "/v1/nope": (404, "not_found"), "/v1": (404, "not_found"), "/nope": (404, "not_found"),
    "/": (404, "not_found"),
    "/healthz": (200, None), "/readyz": (200, None), "/metrics": (200, None),
    "/status": (200, None),
}
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
           "PROPFIND", "FROBNICATE"]
# Paths whose location answers 404 before any method check (no such endpoint, whatever the method).
UNKNOWN = {"/nope", "/"}


def expected_for(method, path):
    if method in ("GET", "HEAD"):
        return PATHS[path]
    if method == "OPTIONS" and (path == "/v1" or path.startswith("/v1/")):
        return 204, None  # the CORS preflight, known path or not
    if method in ("TRACE", "CONNECT"):
        return 405, "method_not_allowed"  # nginx refuses them before any location
    if path in UNKNOWN:
        return 404, "not_found"
    return 405, "method_not_allowed"


class EveryMethod(Checks):
    def test_every_method_on_every_path(self):
        for path in PATHS:
            for method in METHODS:
                status, code = expected_for(method, path)
                with self.subTest(method=method, path=path):
                    r = exchange(request_bytes(method, path), method)
                    self.check(r, status, code, method, where=f"{method} {path}", path=path,
                               content_type=METRICS if (path, status) == ("/metrics", 200)
                               else JSON)

    def test_a_lower_case_or_malformed_method_is_a_400(self):
        for method in ("get", "G ET", "GET\x00", "[]"):
            with self.subTest(method=method):
                r = exchange(request_bytes(method, "/v1/networks"))
                self.check(r, 400, "invalid_request", where=repr(method))



# --- absurd headers and request lines -------------------------------------------------------

class AbsurdHeaders(Checks):
    def test_headers(self):
        for label, data, status, code in header_cases():
            with self.subTest(label):
                r = self.check(exchange(data), status, code, where=label)
                if status == 200:
                    self.assertEqual(r.body, normal_answer(data), label)
                    self.assertNotIn("Content-Range", r.headers, label)
        # A client's X-Request-Id never replaces nginx's.
        r = exchange(request_bytes("GET", "/v1/nope", [("X-Request-Id", "client-chosen")]))
        self.check(r, 404, "not_found")
        self.assertNotEqual(r.headers["X-Request-Id"], "client-chosen")

    def test_request_lines(self):
        for label, data, status, code in request_line_cases():
            with self.subTest(label):
                r = self.check(exchange(data), status, code, where=label)
                if status == 200:
                    self.assertEqual(r.body, normal_answer(data), label)

    def test_if_none_match_with_the_etag_is_a_304_from_the_cache_too(self):
        etag = exchange(request_bytes("GET", "/v1/pairs")).headers["ETag"]
        for value in (etag, "W/" + etag, f'"x", {etag}'):
            for _ in range(2):  # the first may fill the cache, the second is a HIT
                r = exchange(request_bytes("GET", "/v1/pairs", [("If-None-Match", value)]))
                self.check(r, 304, where=value)
                self.assertEqual(r.headers["ETag"], etag)

    def test_accept_encoding_junk_gets_the_same_document(self):
        plain = exchange(request_bytes("GET", "/v1/pairs"))
        self.check(plain, 200)
        for value in ("gzip;q=abc", "gzip;q=0", "x" * 7000, "gzip, gzip, br, *", "*",
                      "identity;q=0", "GZIP", ";;;,,,", "gzip;q=1.0000000001"):
            with self.subTest(value[:40]):
                r = self.check(exchange(request_bytes("GET", "/v1/pairs",
                                                      [("Accept-Encoding", value)])), 200)
                body = (gzip.decompress(r.body) if r.headers.get("Content-Encoding") == "gzip"
                        else r.body)
                self.assertEqual(body, plain.body)

    def test_forwarded_headers_grant_nothing(self):
        # No real_ip in the shipped files: an outside client stays outside whatever it claims.
        for name in ("X-Forwarded-For", "X-Real-IP", "Forwarded"):
            value = "for=127.0.0.1" if name == "Forwarded" else "127.0.0.1"
            r = exchange(request_bytes("GET", "/metrics", [(name, value)]), source=OUTSIDE)
            self.check(r, 403, "forbidden", where=name)


# --- bodies ---------------------------------------------------------------------------------

class Bodies(Checks):
    MB = b"x" * (1 << 20)

    def test_a_1_mb_body_is_a_413_whatever_the_method_and_path(self):
        # client_max_body_size 1k for the whole server is checked before the method: a 413,
        # not a 405, and nothing reaches the worker.
        for method, path in (("GET", "/v1/networks"), ("GET", ACCOUNT), ("POST", "/v1/history"),
                             ("PUT", "/v1/account"), ("DELETE", "/v1/pairs"),
                             ("POST", "/healthz"), ("POST", "/nope"), ("GET", "/v1")):
            with self.subTest(method=method, path=path):
                data = request_bytes(method, path, [("Content-Length", str(len(self.MB)))],
                                     self.MB)
                self.check(exchange(data, method), 413, "request_too_large",
                           where=f"{method} {path}")

    def test_small_bodies(self):
        def send(method, size):
            body = b"y" * size
            return exchange(request_bytes(method, "/v1/networks",
                                          [("Content-Length", str(size))], body), method)
        r = self.check(send("GET", 1024), 200)  # up to 1k is read and ignored
        self.assertEqual(r.body, before["networks"])
        self.check(send("GET", 1025), 413, "request_too_large")
        self.check(send("POST", 10), 405, "method_not_allowed")
        self.check(send("POST", 1025), 413, "request_too_large")


# --- slow and stalled clients ---------------------------------------------------------------

class SlowClients(Checks):
    def test_a_slow_client_is_served_and_a_stalled_one_is_cut_off_by_nginx(self):
        """Runs side by side: one client sends its request a byte at a time (well within the
        header timeout) and gets its answer; clients that stop in the request line, in the
        headers or in the body, or send nothing, are closed by nginx after its own timeout
        (10 s) without a byte (nginx logs 408). The socket timeout (40 s) only bounds the test."""
        results = {}

        def slow():
            data = request_bytes("GET", "/v1/networks?slow=bytes")
            with connect(stack.port, timeout=40) as sock:
                for i in range(len(data)):
                    sock.sendall(data[i:i + 1])
                    pace(0.03)  # a slow client, a byte at a time
                response = HTTPResponse(sock, method="GET")
                response.begin()
                results["slow"] = Response(response.status, response.reason,
                                           Headers(response.getheaders()), response.read())

        def stall(name, data):
            with connect(stack.port, timeout=40) as sock:
                sock.sendall(data)
                received = b""
                try:
                    while chunk := sock.recv(65536):
                        received += chunk
                    results[name] = received
                except socket.timeout:
                    results[name] = "still open after 40 s"
                except ConnectionResetError:
                    results[name] = received

        host = f"Host: 127.0.0.1:{stack.port}\r\n".encode()
        stalls = {
            "line": b"GET /v1/networks?stall=line",
            "header": b"GET /v1/networks?stall=header HTTP/1.1\r\n" + host,
            "body": b"GET /v1/networks?stall=body HTTP/1.1\r\n" + host +
                    b"Content-Length: 500\r\n\r\nabc",
            "nothing": b"",
        }
        threads = [threading.Thread(target=slow)] + [
            threading.Thread(target=stall, args=item) for item in stalls.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual({name: results.get(name) for name in stalls},
                         {name: b"" for name in stalls})
        self.assertIn("slow", results)
        r = self.check(results["slow"], 200)
        self.assertEqual(r.body, before["networks"])
        for name in ("line", "header", "body"):
            self.assertEqual(logged_status(rf'"GET /v1/networks\?stall={name}[^"]*"'), "408 0")


def logged_status(request_pattern):
    """Status and bytes sent of the one access-log line whose request matches (nginx writes it
    as it closes the connection; waited for, bounded)."""
    def found():
        return re.findall(request_pattern + r" (\d+ \d+) ", stack.nginx_access_log())
    wait_for(found, 5, 0.05)
    lines = found()
    assert len(lines) == 1, (request_pattern, lines)
    return lines[0]


# --- nginx's own errors that need another nginx ---------------------------------------------

def get_from(port, target):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        response = HTTPResponse(sock, method="GET")
        response.begin()
        return Response(response.status, response.reason, Headers(response.getheaders()),
                        response.read())


class NginxOwnErrors(Checks):
    def test_429_past_the_rate(self):
        prefix = stack.dir / "nginx-rate"
        port = start_nginx(prefix, stack.fcgi_socket,
                           {"NGINX_CONNECTOR_CACHE": "on", "NGINX_CONNECTOR_RATE": "1r/m"})
        try:
            burst = int(re.search(r"burst=(\d+)",
                                  (REPO / "nginx" / "connector-v1.conf").read_text())[1])
            answers = [get_from(port, "/v1/networks") for _ in range(burst + 2)]
            self.assertEqual([r.status for r in answers], [200] * (burst + 1) + [429])
            self.check(answers[-1], 429, "rate_limited")
            self.assertEqual(answers[-1].headers["Retry-After"], "1")
        finally:
            stop_nginx(prefix)

    def test_503_when_no_worker_listens(self):
        prefix = stack.dir / "nginx-dead"
        port = start_nginx(prefix, stack.dir / "no-such.sock", {"NGINX_CONNECTOR_CACHE": "on"})
        try:
            for target in ("/v1/networks", "/v1/account", "/healthz"):
                r = self.check(get_from(port, target), 503, "unavailable", where=target)
                self.assertEqual(r.headers["Retry-After"], "1")
        finally:
            stop_nginx(prefix)


# --- the stack's own configuration ----------------------------------------------------------

class StackConfig(unittest.TestCase):
    def test_the_running_nginx_uses_the_shipped_timeouts(self):
        rendered = (stack.nginx_prefix / "snippets" / "connector.conf").read_text()
        self.assertIn("client_header_timeout 10s;", rendered)
        self.assertIn("server_tokens off;", rendered)

    def test_the_stack_config_is_private(self):
        # It holds the database password (test_config_permissions: a readable one is refused).
        mode = stat.S_IMODE(stack.config_path.stat().st_mode)
        self.assertEqual(mode & 0o007, 0, oct(mode))


if __name__ == "__main__":
    unittest.main()
