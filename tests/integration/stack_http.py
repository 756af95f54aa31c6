"""Talking HTTP to a stack through its nginx (harness.py re-exports these): Stack's request(),
get() and the record of every answer for stop()'s OpenAPI check (StackHttp, a part of Stack),
nginx's logs and cache, and the client addresses each request comes from. Python 3 standard
library only."""

import base64
import itertools
import json
import os
import re
import socket
from http.client import HTTPResponse
from pathlib import Path

from harness_base import _run
from nginx_tools import start_nginx
from waits import wait_for


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


class StackHttp:
    """Stack's nginx and the requests sent through it (self.port, self.nginx_prefix, self.dir,
    self.nginx_env and self.nginx_cache are Stack's)."""

    def _start_nginx(self):
        self.port = start_nginx(self.nginx_prefix, self.fcgi_socket,
                                {**self.nginx_env,
                                 "NGINX_CONNECTOR_CACHE": "on" if self.nginx_cache else "off"})

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

    def nginx_access_log(self):
        return (self.nginx_prefix / "access.log").read_text(errors="replace")

    def nginx_error_log_text(self):
        return (self.nginx_prefix / "error.log").read_text(errors="replace")

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

    def reload_nginx(self):
        """nginx -s reload: new nginx workers, the old ones finish what they serve and exit."""
        _run(["nginx", "-p", f"{self.nginx_prefix}/", "-c", self.nginx_prefix / "nginx.conf",
              "-s", "reload"], timeout=30)

    def nginx_pid(self):
        return int((self.nginx_prefix / "nginx.pid").read_text())


def nginx_access_line(prefix, request_id):
    """The access-log line of one request of the nginx in `prefix` (local.conf.in's format).
    nginx writes it after the response, so it may lag the client a little."""
    log = Path(prefix) / "access.log"

    def lines():
        return [line for line in log.read_text().splitlines()
                if f"request_id={request_id} " in line]
    wait_for(lines, 5, 0.02)
    found = lines()
    assert len(found) == 1, (request_id, found)
    return found[0]


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
