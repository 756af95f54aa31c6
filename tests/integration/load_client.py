"""Our load client for the fault, soak and fleet tests: N concurrent HTTP/1.1 keep-alive
connections to nginx (on 127.0.0.1, or a fleet's address, from chosen source addresses), a
rotation of targets over the seven endpoints, and every response checked and recorded: when it
was sent and answered, the target, the status, whether the body is JSON of the shape expected
for that endpoint and status, Retry-After, the error code and nginx's
X-Cache-Status. Standard library only: asyncio, in a thread of its own, so that a test can
inject a fault while the load runs.

    load = Load(stack.port, all_endpoints(fixture), connections=16)
    with load:                       # starts the load; leaving the block stops it
        ...inject a fault...
    load.summary()                   # sent, ok, statuses, failures by reason, resent, req/s
    [r for r in load.records if not r.ok]

A kept-alive connection that nginx closes while it is idle (nginx -s reload, keepalive_timeout)
is answered by sending the request again, once, on a new connection, as HTTP clients do for
idempotent requests when no byte of the answer came (RFC 9112, 9.3.1). Those resends are counted
(`resent`), never hidden; any other transport failure is a failed request (status 0).
"""

import array
import asyncio
import collections
import itertools
import json
import threading
import time
from urllib.parse import parse_qs, urlsplit

from waits import pace

ENDPOINTS = ("/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history", "/v1/history/hash",
             "/v1/ab", "/v1/account")
# A deposit address request the sample fixture's chains accept (docs/tour.md, GET /v1/account).
ACCOUNT_QUERY = ("recipient_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
                 "&recipient_blockchain=unitcore&deposit_blockchain=unitiot")


# Shared by every Load of a process, so that a unique target is never sent twice.
_unique_numbers = itertools.count()

# nginx's body for a 502/503/504 of its own (@connector_unavailable in nginx/connector.conf);
# the worker's 503 says that the database cannot be reached.
NGINX_UNAVAILABLE = "The service is unavailable; retry shortly."


class Target:
    """One request of the rotation. unique: a parameter the worker ignores (lc=<n>, a
    cache-buster) makes nginx skip its cache, so that each request reaches the worker."""

    __slots__ = ("path", "endpoint", "unique")

    def __init__(self, path, unique=False):
        self.path = path
        self.endpoint = urlsplit(path).path
        self.unique = unique

    def render(self, n):
        if not self.unique:
            return self.path
        return f"{self.path}{'&' if '?' in self.path else '?'}lc={n}"

    def __repr__(self):
        return f"Target({self.path!r}{', unique' if self.unique else ''})"


def all_endpoints(fixture, unique=False):
    """Targets over all seven endpoints, with the fixture's hashes and a few history filters,
    spelled canonically (nginx caches only those)."""
    hashes = [r["hash"] for r in fixture.history[:3]]
    paths = ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history?page_size=5",
             f"/v1/history/hash?hash={hashes[0]}", "/v1/ab", f"/v1/account?{ACCOUNT_QUERY}",
             "/v1/history?page_size=2&status=Confirmed&order=ASC",
             f"/v1/history/hash?hash={hashes[1]}", "/v1/history?page_id=1&page_size=10",
             f"/v1/history/hash?hash={hashes[2]}"]
    return [Target(p, unique) for p in paths]


class Record:
    """One request and what came back. status 0: no HTTP answer (`error` says why)."""

    __slots__ = ("started", "finished", "target", "endpoint", "status", "shape_ok",
                 "retry_after", "code", "message", "cache", "error")

    def __init__(self, started, target, endpoint):
        self.started = started
        self.finished = None
        self.target = target
        self.endpoint = endpoint
        self.status = 0
        self.shape_ok = False
        self.retry_after = None
        self.code = None
        self.message = None
        self.cache = None
        self.error = ""

    @property
    def ok(self):
        return 200 <= self.status < 300 and self.shape_ok

    @property
    def latency(self):
        return self.finished - self.started

    @property
    def from_nginx(self):
        """nginx's own 503: the worker's connection failed (not the worker's 503)."""
        return self.code == "unavailable" and self.message == NGINX_UNAVAILABLE

    @property
    def reason(self):
        """What a failure was, for the figures: "503 unavailable", "connection reset", ..."""
        if self.status == 0:
            return self.error
        if not self.shape_ok:
            return f"{self.status} with a body of the wrong shape"
        if self.from_nginx:
            return f"{self.status} {self.code} (nginx)"
        return f"{self.status} {self.code}" if self.code else str(self.status)

    def __repr__(self):
        return (f"<{self.target} {self.reason or self.status} shape_ok={self.shape_ok} "
                f"retry_after={self.retry_after} cache={self.cache} {self.error} "
                f"{self.latency * 1000:.0f} ms>")


class NoAnswer(Exception):
    """The connection ended before the first byte of an answer."""


def _error_shape(doc, request_id):
    error = doc.get("error") if isinstance(doc, dict) else None
    return (isinstance(error, dict) and set(doc) == {"error"}
            and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)
            and error.get("request_id") == request_id)


def _success_shape(endpoint, query, doc):
    if not isinstance(doc, dict):
        return False
    if endpoint in ("/v1/networks", "/v1/connects", "/v1/pairs"):
        key = endpoint.rsplit("/", 1)[1]
        return isinstance(doc.get(key), list) and len(doc[key]) > 0
    if endpoint == "/v1/history":
        return ({"page_id", "page_size", "total_page", "total_history", "list"} <= set(doc)
                and isinstance(doc["list"], list)
                and doc["page_size"] == query.get("page_size", ["20"])[0])
    if endpoint == "/v1/history/hash":
        return doc.get("hash") == query["hash"][0]
    if endpoint == "/v1/ab":
        return isinstance(doc.get("chains"), list) and len(doc["chains"]) > 0
    if endpoint == "/v1/account":
        return (doc.get("recipient_address") == query["recipient_address"][0]
                and str(doc.get("deposit_address", "")).startswith("0x"))
    return False


def check(record, target_path, headers, body):
    """Fills record's shape_ok, code, retry_after and cache from an answer."""
    record.retry_after = headers.get("retry-after")
    record.cache = headers.get("x-cache-status")
    try:
        doc = json.loads(body)
    except ValueError:
        return
    if record.status >= 400:
        record.shape_ok = _error_shape(doc, headers.get("x-request-id"))
        if record.shape_ok:
            record.code = doc["error"]["code"]
            record.message = doc["error"]["message"]
    elif record.status == 200:
        parts = urlsplit(target_path)
        record.shape_ok = _success_shape(parts.path, parse_qs(parts.query), doc)


async def _read_response(reader):
    """(status, headers with lower-case names, body); NoAnswer if nothing at all came."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            raise NoAnswer() from None
        raise ConnectionError("connection closed inside the response head") from None
    except ConnectionResetError:
        raise NoAnswer() from None
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            body += await reader.readexactly(size + 2)
            del body[-2:]
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers from nginx: the final CRLF
                break
        body = bytes(body)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = await reader.read()
    return status, headers, body


class Load:
    """Closed-loop load: each connection sends its next request when the previous one is
    answered. keep_records=False keeps counters only (for long soaks)."""

    def __init__(self, port, targets, connections=16, timeout=30.0, keep_records=True,
                 host="127.0.0.1", sources=(), interval=0.0):
        """host: where to connect (a fleet's node or front); sources: loopback addresses the
        connections send from, in turn (so a fleet's per-client limits see several clients);
        interval: the least time between two requests of one connection (0: none)."""
        self.port = port
        self.host = host
        self.sources = list(sources)
        self.interval = interval
        self.targets = list(targets)
        self.connections = connections
        self.timeout = timeout
        self.keep_records = keep_records
        self.records = []
        self.statuses = collections.Counter()
        self.failures = collections.Counter()  # reason -> count
        self.latencies = array.array("f")
        self.sent = 0
        self.ok = 0
        self.resent = 0
        self.in_flight = 0
        self.started = self.stopped = None
        self._rotation = itertools.cycle(self.targets)
        self._stopping = False
        self._thread = None
        self._crash = None

    # --- control (from the test's thread) ---------------------------------------------------

    def start(self):
        self._stopping = False
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="load", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stops sending; waits (bounded by the request timeout) for the answers in flight."""
        self._stopping = True
        self._thread.join(self.timeout + 10)
        if self._thread.is_alive():
            raise RuntimeError("the load did not stop")
        self.stopped = time.monotonic()
        if self._crash is not None:
            raise RuntimeError("the load client failed") from self._crash

    def run_for(self, seconds):
        self.start()
        pace(seconds)  # the load left running for a while
        self.stop()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # --- results ----------------------------------------------------------------------------

    def between(self, t0, t1):
        """Records of requests sent at or after t0 and answered at or before t1."""
        return [r for r in self.records if r.started >= t0 and r.finished <= t1]

    def summary(self):
        latencies = sorted(self.latencies)
        duration = (self.stopped or time.monotonic()) - self.started

        def percentile(p):
            return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))] * 1000, 1)

        return {
            "connections": self.connections,
            "duration_s": round(duration, 1),
            "sent": self.sent,
            "ok": self.ok,
            "failed": sum(self.failures.values()),
            "failures": dict(sorted(self.failures.items())),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "resent_after_idle_close": self.resent,
            "requests_per_s": round(self.sent / duration) if duration > 0 else 0,
            "latency_ms": ({"p50": percentile(0.5), "p99": percentile(0.99),
                            "max": round(latencies[-1] * 1000, 1)} if latencies else {}),
        }

    # --- the load itself (the load thread) --------------------------------------------------

    def _run(self):
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported by stop()
            self._crash = e

    async def _main(self):
        await asyncio.gather(*(self._connection(i) for i in range(self.connections)))

    async def _connection(self, index):
        streams = None
        source = self.sources[index % len(self.sources)] if self.sources else None
        while not self._stopping:
            target = next(self._rotation)
            path = target.render(next(_unique_numbers))
            request = (f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                       f"User-Agent: connector-load-client\r\n\r\n").encode("latin-1")
            record = Record(time.monotonic(), path, target.endpoint)
            self.sent += 1
            self.in_flight += 1
            try:
                streams = await asyncio.wait_for(
                    self._exchange(streams, request, record, source), self.timeout)
            except asyncio.TimeoutError:
                record.error = f"no answer within {self.timeout:g} s"
                streams = self._close(streams)
            except (OSError, ConnectionError, asyncio.IncompleteReadError, NoAnswer,
                    ValueError) as e:
                record.error = _describe(e)
                streams = self._close(streams)
            finally:
                self.in_flight -= 1
            record.finished = time.monotonic()
            self._count(record)
            if self.interval > 0:
                await asyncio.sleep(max(0.0, record.started + self.interval - time.monotonic()))
        self._close(streams)

    async def _exchange(self, streams, request, record, source=None):
        """Sends one request and reads its answer, on the kept connection if there is one;
        returns the connection to keep (None when the answer closed it)."""
        for attempt in range(2):
            fresh = streams is None
            if fresh:
                streams = await asyncio.open_connection(
                    self.host, self.port, local_addr=(source, 0) if source else None)
            reader, writer = streams
            try:
                writer.write(request)
                await writer.drain()
                status, headers, body = await _read_response(reader)
                break
            except (NoAnswer, ConnectionResetError, BrokenPipeError):
                streams = self._close(streams)
                if fresh or attempt == 1:
                    raise NoAnswer()
                self.resent += 1  # nginx closed the idle kept connection: send again, once
        record.status = status
        check(record, request.split(b" ", 2)[1].decode("latin-1"), headers, body)
        if headers.get("connection", "").lower() == "close":
            streams = self._close(streams)
        return streams

    @staticmethod
    def _close(streams):
        if streams is not None:
            streams[1].close()
        return None

    def _count(self, record):
        self.statuses[record.status] += 1
        self.latencies.append(record.latency)
        if record.ok:
            self.ok += 1
        else:
            self.failures[record.reason] += 1
        if self.keep_records:
            self.records.append(record)


def _describe(e):
    if isinstance(e, NoAnswer):
        return "connection closed before an answer"
    if isinstance(e, ConnectionResetError):
        return "connection reset"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    return f"{type(e).__name__}: {e}"
