"""What the hostile battery (test_hostile_requests) is made of: its stack (start_stack() sets it
here, with what the service answered before any hostile request), requests built byte by byte
and sent on a raw socket (request_bytes, exchange), what every answer must be (Checks.check),
the cases of absurd headers and request lines, and the checks that end the module whatever
order its tests ran in (stop_stack: the same worker processes still answer as before, and no
password anywhere). Python 3 standard library only."""

import json
import re
import socket
import unittest
from http.client import HTTPResponse
from pathlib import Path

from fixture import Fixture
from harness import DB_PASSWORD, Headers, Response, Stack, source_for

JSON = "application/json; charset=utf-8"
METRICS = "text/plain; version=0.0.4; charset=utf-8"
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
ACCOUNT = (f"/v1/account?recipient_address={ADDRESS}&recipient_blockchain=unitcore"
           "&deposit_blockchain=unitiot")
# What must never be in an answer: database, file system, exceptions, the nginx version.
LEAKS = [b"SQL", b"sql", b"MariaDB", b"mysql", b"/tmp", b"Exception", b"stack", b"nginx/"]
OUTSIDE = "127.0.0.2"  # a client that is not internal (the health paths allow 127.0.0.1)
PREFLIGHT_METHODS = "GET, HEAD, OPTIONS"

stack = None
fixture = Fixture()
before = {}  # what the stack answered and which processes served it, before any hostile request


def start_stack():
    """The battery's stack (setUpModule), and what it answers before any hostile request."""
    global stack
    stack = Stack(fixture=fixture.path, threads=4)
    before["pids"] = worker_pids()
    before["networks"] = stack.get("/v1/networks").body
    before["history"] = stack.get("/v1/history?page_size=3").body
    before["account"] = stack.get(ACCOUNT).body
    return stack


def stop_stack():
    """tearDownModule: once every test of the module has run, in whatever order, the service is
    unharmed and kept its secrets; then the stack stops. A failed check fails the run (unittest
    reports an error in tearDownModule)."""
    try:
        checks = Checks()
        the_same_worker_processes_still_answer_normally(checks)
        no_password_in_logs_status_or_metrics(checks)
    finally:
        stack.stop()


def the_same_worker_processes_still_answer_normally(checks):
    checks.assertIsNone(stack.worker.poll())
    checks.assertEqual(worker_pids(), before["pids"])
    status = json.loads(stack.get("/status").body)
    checks.assertEqual((status["process_crashes"], status["process_recycles"]), (0, 0))
    # With a cache-buster: nginx's cache is skipped, the worker answers now.
    fresh = checks.check(stack.get("/v1/networks?after=hostile"), 200)
    checks.assertEqual(fresh.headers["X-Cache-Status"], "BYPASS")
    checks.assertEqual(fresh.body, before["networks"])
    history = checks.check(stack.get("/v1/history?page_size=3&after=hostile"), 200)
    checks.assertEqual(history.body, before["history"])


def no_password_in_logs_status_or_metrics(checks):
    secret = DB_PASSWORD.encode()
    checks.assertTrue(secret)
    texts = {
        "worker log": stack.worker_log.read_bytes(),
        "nginx access log": (stack.nginx_prefix / "access.log").read_bytes(),
        "nginx error log": (stack.nginx_prefix / "error.log").read_bytes(),
        "/status": stack.get("/status").body,
        "/metrics": stack.get("/metrics").body,
    }
    checks.assertIn(b"db_password=(set)", texts["worker log"])
    for name, text in texts.items():
        checks.assertNotIn(secret, text, name)


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



# --- absurd headers and request lines -------------------------------------------------------

def many_headers(count, size):
    return [(f"X-Filler-{i}", "v" * size) for i in range(count)]


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
