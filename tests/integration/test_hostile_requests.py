"""Hostile requests through nginx, with the shipped drop-ins and nginx's cache on (as in
production): every method on every path, absurd and malformed headers and request lines, bodies up
to 1 MB, slow and stalled clients. Every answer has exactly the expected status; every error is
the contract's JSON body with this request's id; every answer carries X-Content-Type-Options:
nosniff, no nginx version and nothing of the database, the file system or a stack trace. A
stalled client is cut off by nginx's own timeouts (client_header_timeout, client_body_timeout,
10 s). Afterwards the same worker processes answer a normal request.

Also here: the shipped nginx files (nosniff in every location that sets its own headers,
server_tokens off, the timeouts), nginx's own 429 and 503, the worker and connector-admin
refusing a config file that others can read when it holds a password, and no password in any log,
/status or /metrics. Requests are built byte by byte on a raw socket."""

import gzip
import json
import os
import re
import socket
import stat
import subprocess
import tempfile
import threading
import time
import unittest
from http.client import HTTPResponse
from pathlib import Path

from fixture import Fixture
from harness import (ADMIN, DB_PASSWORD, REPO, SCRIPTS, WORKER, Headers, Response, Stack,
                     connect, source_for, wait_for)

JSON = "application/json; charset=utf-8"
METRICS = "text/plain; version=0.0.4; charset=utf-8"
NGINX = REPO / "nginx"
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
ACCOUNT = (f"/v1/account?recipient_address={ADDRESS}&recipient_blockchain=unitcore"
           "&deposit_blockchain=unitiot")
# What must never be in an answer: database, file system, exceptions, the nginx version.
LEAKS = [b"SQL", b"sql", b"MariaDB", b"mysql", b"/tmp", b"Exception", b"stack", b"nginx/"]
OUTSIDE = "127.0.0.2"  # a client that is not internal (the health paths allow 127.0.0.1)

stack = None
fixture = Fixture()
before = {}  # what the stack answered and which processes served it, before any hostile request


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=4)
    before["pids"] = worker_pids()
    before["networks"] = stack.get("/v1/networks").body
    before["history"] = stack.get("/v1/history?page_size=3").body
    before["account"] = stack.get(ACCOUNT).body


def tearDownModule():
    stack.stop()


def worker_pids():
    """The worker master and its worker processes (children by /proc/PID/stat's parent field)."""
    master = stack.worker.pid
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == master:
                children.append(int(entry.name))
    return [master, *sorted(children)]


def request_bytes(method, target, headers=(), body=b"", version=b"HTTP/1.1", host=True):
    """One request as bytes: headers is a list of (name, value) (bytes or str) sent as given."""
    lines = [_bytes(method) + b" " + _bytes(target) + b" " + version]
    if host:
        lines.append(f"Host: 127.0.0.1:{stack.port}".encode())
    lines.append(b"Connection: close")
    lines += [_bytes(name) + b": " + _bytes(value) for name, value in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _bytes(value):
    return value if isinstance(value, bytes) else value.encode("latin-1")


def exchange(data, method="GET", source=None, timeout=30):
    """Sends data on a new connection and reads one response (a body nginx does not read is
    still sent in full: nginx reads and discards it before closing). The connection comes from
    `source`, else from harness.source_for() of the request line's target (a client of its own
    for a /v1 path: the shipped per-client limits count each request apart)."""
    target = (data.split(b"\r\n", 1)[0].split(b" ") + [b"", b""])[1]
    with socket.create_connection(("127.0.0.1", stack.port), timeout=timeout,
                                  source_address=(source or source_for(target), 0)) as sock:
        sock.sendall(data)
        response = HTTPResponse(sock, method=method)
        response.begin()
        body = response.read()
        # Checked against docs/openapi.yaml when the stack stops (the target from the request line).
        line = data.split(b"\r\n", 1)[0].split(b" ")
        stack.record(method, line[1] if len(line) > 1 else b"", response.status,
                     response.getheaders(), body)
        return Response(response.status, response.reason, Headers(response.getheaders()), body)


class Checks(unittest.TestCase):
    def check(self, r, status, code=None, method="GET", content_type=JSON, where="", path=None):
        """The answer has exactly this status; its headers say JSON (content_type), nosniff, no
        version; an error body is the contract's shape with code and this request's id; nothing
        leaks anywhere. With path: CORS headers exactly on the answers to /v1 paths, and a
        preflight's headers on a 204."""
        where = f"{where} -> {r.status} {dict(r.headers)} {r.body[:200]!r}"
        self.assertEqual(r.status, status, where)
        self.assertEqual(r.headers.get("X-Content-Type-Options"), "nosniff", where)
        self.assertEqual(r.headers.get("Server"), "nginx", where)
        request_id = r.headers.get("X-Request-Id", "")
        self.assertRegex(request_id, r"^[0-9a-f]{32}$", where)
        if path is not None:
            v1 = re.match(r"^/v1(?:[/?]|$)", path) is not None
            self.assertEqual(r.headers.get("Access-Control-Allow-Origin"), "*" if v1 else None,
                             where)
            self.assertEqual(r.headers.get("Access-Control-Expose-Headers"),
                             "ETag, X-Request-Id, Retry-After" if v1 else None, where)
        if status == 204:  # a CORS preflight
            self.assertEqual((r.body, r.headers["Allow"]), (b"", PREFLIGHT_METHODS), where)
            self.assertEqual(r.headers["Access-Control-Allow-Methods"], PREFLIGHT_METHODS, where)
            return r
        if status != 304:
            self.assertEqual(r.headers["Content-Type"], content_type, where)
        head = "".join(f"{name}: {value}\n" for name, value in r.headers.items()).encode()
        # The internal pages (internal addresses only) name the database servers they read, as
        # configured: here the private MariaDB's socket, which is not a leak.
        body = r.body.replace(str(stack.db_socket).encode(), b"<db socket>")
        for leak in LEAKS:
            self.assertNotIn(leak, body, where)
            self.assertNotIn(leak, head, where)
        if method == "HEAD" or status == 304:
            self.assertEqual(r.body, b"", where)
        elif status >= 400:
            error = json.loads(r.body)["error"]
            self.assertEqual(error["code"], code, where)
            self.assertEqual(error["request_id"], request_id, where)
            self.assertIn(set(error), ({"code", "message", "request_id"},
                                       {"code", "message", "param", "request_id"}), where)
            self.assertTrue(error["message"], where)
        if status == 405:
            v1 = path is None or re.match(r"^/v1(?:[/?]|$)", path) is not None
            self.assertEqual(r.headers["Allow"], PREFLIGHT_METHODS if v1 else "GET, HEAD", where)
        return r


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


PREFLIGHT_METHODS = "GET, HEAD, OPTIONS"


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

def many_headers(count, size):
    return [(f"X-Filler-{i}", "v" * size) for i in range(count)]


# (label, request bytes (a function of nothing: stack.port is known only at run time),
#  status, error code, path of the normal answer a 200 must equal)
def header_cases():
    """(label, request bytes, status, error code) of every header case: the fields, the
    body's framing, then ranges, conditions and the rest."""
    return header_field_cases() + body_framing_cases() + conditional_and_other_header_cases()


def header_field_cases():
    get = lambda headers, **kw: request_bytes("GET", "/v1/networks", headers, **kw)  # noqa: E731
    return [
        ("a 7 kB header", get([("X-Big", "a" * 7000)]), 200, None),
        ("a 7 kB cookie", get([("Cookie", "c=" + "a" * 7000)]), 200, None),
        ("100 headers", get(many_headers(100, 20)), 200, None),
        ("a 9 kB header (over one 8k buffer)", get([("X-Big", "a" * 9000)]), 400,
         "invalid_request"),
        ("1000 headers, 40 kB (over 4 x 8k)", get(many_headers(1000, 30)), 400,
         "invalid_request"),
        # nginx skips an invalid header line (ignore_invalid_headers on, its default).
        ("a header line without a colon", get([]).replace(b"\r\n\r\n", b"\r\nNoColonHere\r\n\r\n"),
         200, None),
        ("a header name in UTF-8", get([(b"X-\xc3\xa9", "a")]), 200, None),
        ("a header with an underscore", get([("Request_Id", "x")]), 200, None),
        ("NUL in a header value", get([("X-A", b"a\x00b")]), 400, "invalid_request"),
        ("CR in a header value", get([("X-A", b"a\rb")]), 400, "invalid_request"),
        ("invalid UTF-8 in a header value", get([("X-A", b"\xff\xfe")]), 200, None),
        ("an obs-fold continuation line", get([("X-A", b"a\r\n b")]), 400, "invalid_request"),
        ("a space before the colon", get([(b"X-A ", "a")]), 400, "invalid_request"),
        ("a 7 kB Host", request_bytes("GET", "/v1/networks", [("Host", "a" * 7000)], host=False),
         200, None),
        ("a Host with a slash", request_bytes("GET", "/v1/networks", [("Host", "a/b")],
                                              host=False), 400, "invalid_request"),
        ("a Host with NUL", request_bytes("GET", "/v1/networks", [("Host", b"a\x00b")],
                                          host=False), 400, "invalid_request"),
        ("no Host on HTTP/1.1", request_bytes("GET", "/v1/networks", host=False), 400,
         "invalid_request"),
        ("two Hosts", get([("Host", "other.example")]), 400, "invalid_request"),
        ("an absolute target naming another host",
         request_bytes("GET", "http://evil.example/v1/networks"), 200, None),
        ("HTTP/1.0 without Host", request_bytes("GET", "/v1/networks", version=b"HTTP/1.0",
                                                host=False), 200, None),
    ]


def body_framing_cases():
    get = lambda headers, **kw: request_bytes("GET", "/v1/networks", headers, **kw)  # noqa: E731
    chunked = [("Transfer-Encoding", "chunked")]
    return [
        ("Content-Length: abc", get([("Content-Length", "abc")]), 400, "invalid_request"),
        ("Content-Length: -1", get([("Content-Length", "-1")]), 400, "invalid_request"),
        ("Content-Length past 2^64", get([("Content-Length", "9" * 25)]), 400,
         "invalid_request"),
        ("two Content-Lengths", get([("Content-Length", "1"), ("Content-Length", "2")],
                                    body=b"xy"), 400, "invalid_request"),
        ("Content-Length and Transfer-Encoding",
         get([("Content-Length", "5"), *chunked], body=b"0\r\n\r\n"), 400, "invalid_request"),
        ("Transfer-Encoding: gzip (nginx's 501)", get([("Transfer-Encoding", "gzip")]), 400,
         "invalid_request"),
        ("Transfer-Encoding: chunked, chunked", get([("Transfer-Encoding", "chunked, chunked")]),
         400, "invalid_request"),
        ("Transfer-Encoding on HTTP/1.0",
         request_bytes("GET", "/v1/networks", chunked, b"0\r\n\r\n", version=b"HTTP/1.0"),
         400, "invalid_request"),
        ("a malformed chunk", get(chunked, body=b"zz\r\n"), 400, "invalid_request"),
        ("an empty chunked body", get(chunked, body=b"0\r\n\r\n"), 200, None),
        ("a 2 kB chunked body", get(chunked, body=b"800\r\n" + b"x" * 2048 + b"\r\n0\r\n\r\n"),
         413, "request_too_large"),
    ]


def conditional_and_other_header_cases():
    get = lambda headers, **kw: request_bytes("GET", "/v1/networks", headers, **kw)  # noqa: E731
    return [
        ("Range", get([("Range", "bytes=0-5")]), 200, None),
        ("many Ranges", get([("Range", "bytes=" + ",".join(f"{i}-{i}" for i in range(500)))]),
         200, None),
        ("a suffix Range past the end", get([("Range", "bytes=-99999999")]), 200, None),
        ("Range junk", get([("Range", "junk=;;")]), 200, None),
        ("If-Range junk", get([("Range", "bytes=0-3"), ("If-Range", "junk")]), 200, None),
        ("If-None-Match junk", get([("If-None-Match", "junk")]), 200, None),
        ("If-None-Match of 7 kB", get([("If-None-Match", '"' + "a" * 7000 + '"')]), 200, None),
        ("If-None-Match commas", get([("If-None-Match", ", , ,")]), 200, None),
        ("If-None-Match: *", get([("If-None-Match", "*")]), 304, None),
        ("If-Modified-Since junk", get([("If-Modified-Since", "junk")]), 200, None),
        # nginx evaluates these itself on answers it caches (every /v1 answer but /v1/account).
        ("If-Match junk", get([("If-Match", '"junk"')]), 412, "precondition_failed"),
        ("If-Unmodified-Since", get([("If-Unmodified-Since", "Sun, 22 Nov 2026 04:36:41 GMT")]),
         412, "precondition_failed"),
        ("If-Match junk on the uncached /v1/account",
         request_bytes("GET", ACCOUNT, [("If-Match", '"junk"')]), 200, None),
        ("X-Forwarded-For junk", get([("X-Forwarded-For", "1.2.3.4, <script>, ::::, 999.1.1.1")]),
         200, None),
        ("X-Real-IP", get([("X-Real-IP", "10.0.0.1")]), 200, None),
        ("a client's X-Request-Id", get([("X-Request-Id", "client-chosen")]), 200, None),
        ("Authorization junk", get([("Authorization", "Basic !!!")]), 200, None),
        ("Expect: 100-continue", get([("Expect", "100-continue")]), 200, None),
        ("Expect junk", get([("Expect", "junk")]), 200, None),
        ("Upgrade: h2c", get([("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQAAP__")]), 200,
         None),
        ("Upgrade: websocket", get([("Upgrade", "websocket"), ("Sec-WebSocket-Key", "x")]), 200,
         None),
        ("Proxy (httpoxy)", get([("Proxy", "http://evil.example:1")]), 200, None),
    ]

def request_line_cases():
    line = lambda text: text + b"\r\n" + _bytes(  # noqa: E731
        f"Host: 127.0.0.1:{stack.port}\r\nConnection: close\r\n\r\n")
    return [
        ("HTTP/2.0 (nginx's 505)", line(b"GET /v1/networks HTTP/2.0"), 400, "invalid_request"),
        ("HTTP/3.0", line(b"GET /v1/networks HTTP/3.0"), 400, "invalid_request"),
        ("the HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "invalid_request"),
        ("a TLS ClientHello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,
         400, "invalid_request"),
        ("OPTIONS *", line(b"OPTIONS * HTTP/1.1"), 400, "invalid_request"),
        ("a space in the target", line(b"GET /v1/net works HTTP/1.1"), 400, "invalid_request"),
        ("a control byte in the target", line(b"GET /v1/net\x01works HTTP/1.1"), 400,
         "invalid_request"),
        ("DEL in the query", line(b"GET /v1/networks?\x7f HTTP/1.1"), 400, "invalid_request"),
        ("%00 in the path", line(b"GET /v1/networks%00 HTTP/1.1"), 400, "invalid_request"),
        ("%zz in the path", line(b"GET /v1/%zz HTTP/1.1"), 400, "invalid_request"),
        ("a path above the root", line(b"GET /../../etc/passwd HTTP/1.1"), 400,
         "invalid_request"),
        ("dot segments that stay inside", line(b"GET /v1/x/../networks HTTP/1.1"), 200, None),
        ("a 100 kB target", line(b"GET /v1/networks?" + b"a" * 100000 + b" HTTP/1.1"), 414,
         "query_too_long"),
        ("blank lines before the request", b"\r\n\r\n" + line(b"GET /v1/networks HTTP/1.1"), 200,
         None),
        ("LF line ends", b"GET /v1/networks HTTP/1.1\nHost: x\nConnection: close\n\n", 200, None),
    ]


def normal_answer(data):
    """What a 200 to this request must be: the answer to a plain GET of its target."""
    target = data.lstrip(b"\r\n").split()[1]
    return before["account"] if target == ACCOUNT.encode() else before["networks"]


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
                    time.sleep(0.03)  # pacing, not a condition: a slow client, a byte at a time
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

def start_nginx(name, socket_path, **env):
    prefix = stack.dir / name
    for _ in range(3):  # the free port can be taken between picking and binding
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        result = subprocess.run([str(SCRIPTS / "nginx-start"), str(prefix), str(port),
                                 str(socket_path)], env=dict(os.environ, **env),
                                capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        if result.returncode == 0:
            return prefix, port
    raise AssertionError(f"nginx-start failed: {result.stdout}{result.stderr}")


def stop_nginx(prefix):
    subprocess.run([str(SCRIPTS / "nginx-stop"), str(prefix)], timeout=60,
                   stdin=subprocess.DEVNULL, capture_output=True)


def get_from(port, target):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        response = HTTPResponse(sock, method="GET")
        response.begin()
        return Response(response.status, response.reason, Headers(response.getheaders()),
                        response.read())


class NginxOwnErrors(Checks):
    def test_429_past_the_rate(self):
        prefix, port = start_nginx("nginx-rate", stack.fcgi_socket, NGINX_CONNECTOR_CACHE="on",
                                   NGINX_CONNECTOR_RATE="1r/m")
        try:
            burst = int(re.search(r"burst=(\d+)", (NGINX / "connector-v1.conf").read_text())[1])
            answers = [get_from(port, "/v1/networks") for _ in range(burst + 2)]
            self.assertEqual([r.status for r in answers], [200] * (burst + 1) + [429])
            self.check(answers[-1], 429, "rate_limited")
            self.assertEqual(answers[-1].headers["Retry-After"], "1")
        finally:
            stop_nginx(prefix)

    def test_503_when_no_worker_listens(self):
        prefix, port = start_nginx("nginx-dead", stack.dir / "no-such.sock",
                                   NGINX_CONNECTOR_CACHE="on")
        try:
            for target in ("/v1/networks", "/v1/account", "/healthz"):
                r = self.check(get_from(port, target), 503, "unavailable", where=target)
                self.assertEqual(r.headers["Retry-After"], "1")
        finally:
            stop_nginx(prefix)


# --- the shipped nginx files ----------------------------------------------------------------

def blocks(text):
    """(header, body) of every `location ... { ... }` block, nested ones included."""
    found, starts = [], []
    for match in re.finditer(r"[{}]", text):
        if match.group() == "{":
            line_start = text.rfind("\n", 0, match.start()) + 1
            starts.append((text[line_start:match.start()].strip(), match.end()))
        else:
            header, start = starts.pop()
            found.append((header, text[start:match.start()]))
    return [(h, b) for h, b in found if h.startswith("location")]


def strip_comments(text):
    """The configuration without comments, and with every quoted string emptied (they hold
    braces and '#')."""
    lines = []
    for line in text.splitlines():
        kept, quote = "", None
        for ch in line:
            if quote:
                if ch == quote:
                    quote = None
                    kept += ch
                continue
            if ch == "#":
                break
            if ch in "'\"":
                quote = ch
            kept += ch
        lines.append(kept)
    return "\n".join(lines)


class ShippedFiles(unittest.TestCase):
    NOSNIFF = "add_header X-Content-Type-Options nosniff always;"

    def test_every_location_with_its_own_headers_repeats_nosniff(self):
        # add_header in a location replaces every add_header of the levels above it.
        checked = 0
        for path in sorted(NGINX.glob("*.conf")):
            text = strip_comments(path.read_text())
            for header, body in blocks(text):
                own = re.sub(r"\{[^{}]*\}", "", body)  # not the nested if-blocks' lines
                if "add_header" in own or "include snippets/connector-v1.conf" in own:
                    with self.subTest(file=path.name, location=header):
                        included = "include snippets/connector-v1.conf" in own
                        self.assertTrue(self.NOSNIFF in own or included, header)
                        checked += 1
        self.assertGreaterEqual(checked, 18)
        self.assertIn(self.NOSNIFF, strip_comments((NGINX / "connector-v1.conf").read_text()))

    def test_server_level_headers_version_and_limits(self):
        text = strip_comments((NGINX / "connector.conf").read_text())
        top = text
        while re.search(r"\{[^{}]*\}", top):
            top = re.sub(r"[^\n;{}]*\{[^{}]*\}", "", top)  # outside every block
        for line in ("server_tokens off;", self.NOSNIFF, "client_header_timeout 10s;",
                     "client_body_timeout 10s;", "send_timeout 10s;",
                     "client_max_body_size 1k;"):
            self.assertIn(line, top)
        self.assertRegex(top, r"error_page 400 494 501 505 =400 /\.connector-error/")
        self.assertIn("max_ranges 0;", (NGINX / "connector-v1.conf").read_text())

    def test_the_running_nginx_uses_them(self):
        rendered = (stack.nginx_prefix / "snippets" / "connector.conf").read_text()
        self.assertIn("client_header_timeout 10s;", rendered)
        self.assertIn("server_tokens off;", rendered)


# --- configuration files holding a password -------------------------------------------------

class ConfigPermissions(unittest.TestCase):
    SECRET = "s3cret-perm-test"

    def run_with(self, program, text, mode, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "connector.conf"
            path.write_text(text)
            path.chmod(mode)
            env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
            result = subprocess.run([str(program), "--config", str(path), *args],
                                    capture_output=True, text=True, timeout=60, env=env,
                                    stdin=subprocess.DEVNULL)
            return path, result

    def refusal(self, path, mode):
        return (f"config file {path} holds a password and is readable by everyone "
                f"(mode {mode:04o}): run chmod 640 (or 600) on it, or move the password to "
                "CONNECTOR_DB_PASSWORD / CONNECTOR_DB_WRITE_PASSWORD")

    def test_the_worker_refuses_a_world_readable_file_with_a_password(self):
        for key in ("db_password", "db_write_password"):
            for args in (["--check-config"], []):  # checking, and starting for real
                with self.subTest(key=key, args=args):
                    path, result = self.run_with(
                        WORKER, f"listen = /nonexistent/fcgi.sock\n{key} = {self.SECRET}\n",
                        0o644, *args)
                    self.assertEqual(result.returncode, 1)
                    self.assertEqual(result.stdout, "")
                    # One line, its time first (stderr is not the journal here).
                    self.assertRegex(result.stderr, r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
                                     r"[0-9]{2}:[0-9]{2}\.[0-9]{3}Z error: " +
                                     re.escape(self.refusal(path, 0o644)) + r"\n\Z")
                    self.assertNotIn(self.SECRET, result.stderr)

    def test_group_readable_or_without_a_password_is_accepted(self):
        for text, mode in ((f"db_password = {self.SECRET}\n", 0o640),
                           (f"db_password = {self.SECRET}\n", 0o600),
                           ("db_password =\nthreads = 3\n", 0o644)):
            with self.subTest(mode=oct(mode), text=text):
                _, result = self.run_with(WORKER, text, mode, "--check-config")
                self.assertEqual((result.returncode, result.stderr), (0, ""))
                self.assertIn("db_password=(", result.stdout)
                self.assertNotIn(self.SECRET, result.stdout)

    def test_connector_admin_refuses_it_too(self):
        path, result = self.run_with(ADMIN, f"db_password = {self.SECRET}\n", 0o604,
                                     "import", "/nonexistent.json")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr,
                         f"connector-admin import: {self.refusal(path, 0o604)}\n")

    def test_the_stack_config_is_private(self):
        mode = stat.S_IMODE(stack.config_path.stat().st_mode)
        self.assertEqual(mode & 0o007, 0, oct(mode))


# --- last: the service is unharmed and keeps its secrets ------------------------------------

class ZzAfterAll(Checks):
    """Runs after the other classes (unittest orders them by name)."""

    def test_the_same_worker_processes_still_answer_normally(self):
        self.assertIsNone(stack.worker.poll())
        self.assertEqual(worker_pids(), before["pids"])
        status = json.loads(stack.get("/status").body)
        self.assertEqual((status["process_crashes"], status["process_recycles"]), (0, 0))
        # With a cache-buster: nginx's cache is skipped, the worker answers now.
        fresh = self.check(stack.get("/v1/networks?after=hostile"), 200)
        self.assertEqual(fresh.headers["X-Cache-Status"], "BYPASS")
        self.assertEqual(fresh.body, before["networks"])
        history = self.check(stack.get("/v1/history?page_size=3&after=hostile"), 200)
        self.assertEqual(history.body, before["history"])

    def test_no_password_in_logs_status_or_metrics(self):
        secret = DB_PASSWORD.encode()
        self.assertTrue(secret)
        texts = {
            "worker log": stack.worker_log.read_bytes(),
            "nginx access log": (stack.nginx_prefix / "access.log").read_bytes(),
            "nginx error log": (stack.nginx_prefix / "error.log").read_bytes(),
            "/status": stack.get("/status").body,
            "/metrics": stack.get("/metrics").body,
        }
        self.assertIn(b"db_password=(set)", texts["worker log"])
        for name, text in texts.items():
            self.assertNotIn(secret, text, name)


if __name__ == "__main__":
    unittest.main()
