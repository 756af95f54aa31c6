"""What the tests of nginx in front of the service share (test_nginx, test_nginx_cache): their
stack (start_stack() sets it here: nginx as shipped, cache and limits on), requests to it or to
another nginx on its worker (send, get), how nginx logged a request (upstream_status) and the
JSON error body nginx and the worker answer. Each /v1 request comes from a loopback address of
its own (harness.source_for), so the per-client limits count each apart; OUTSIDE stands for a
client that is not internal (the health paths allow 127.0.0.1 only on loopback, and limit_req
keys on the client address). Python 3 standard library only."""

import socket
from http.client import HTTPResponse

from fixture import Fixture
from harness import (REPO, Headers, Response, Stack, endpoint_descriptions, nginx_contract,
                     source_for)
from harness import upstream_status as logged_upstream_status

JSON = "application/json; charset=utf-8"
NGINX = REPO / "nginx"
HISTORY = "/v1/history?page_size=3"
ACCOUNT = ("/v1/account?recipient_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
           "&recipient_blockchain=unitcore&deposit_blockchain=unitiot")
OUTSIDE = "127.0.0.2"
# The endpoint descriptions (src/api/endpoints.h, by path), and what nginx never stores
# (scripts/nginx-contract, from them): the event streams, and the deposit addresses
# (CachePolicy::front_cached).
DESCRIPTIONS = {e["path"]: e for e in endpoint_descriptions()["endpoints"]}
EVENT_STREAMS = {path for path, e in DESCRIPTIONS.items() if e["body"] != "json"}
NOT_FRONT_CACHED = {path for path, e in DESCRIPTIONS.items()
                    if not nginx_contract().front_cached(e)}

fixture = Fixture()
stack = None


def start_stack():
    """The stack of a test module of nginx (setUpModule)."""
    global stack
    stack = Stack(fixture=fixture.path, threads=4)
    return stack


def send(port, method, target, headers=None, body=b"", source=None, timeout=30):
    """One HTTP/1.1 request to the nginx on 127.0.0.1:port (the stack's, or another on its
    worker) from the loopback address `source` (default: harness.source_for(target), a client of
    its own for a /v1 path). The answer is checked against docs/openapi.yaml when the stack
    stops."""
    source = source or source_for(target)
    headers = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if body:
        headers["Content-Length"] = str(len(body))
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        sock.sendall(head.encode("latin-1") + body)
        response = HTTPResponse(sock, method=method)
        response.begin()
        data = response.read()
        stack.record(method, target, response.status, response.getheaders(), data)
        return Response(response.status, response.reason, Headers(response.getheaders()), data)


def get(target, headers=None, source=None):
    return send(stack.port, "GET", target, headers, source=source)


def upstream_status(request_id, prefix=None):
    """The worker's status for a request as nginx logged it; "-" when it never reached it."""
    return logged_upstream_status(prefix or stack.nginx_prefix, request_id)


def error_body(response, code, message):
    """The JSON error body of an answer: its code, its message and the answer's request id."""
    return {"error": {"code": code, "message": message,
                      "request_id": response.headers["X-Request-Id"]}}
