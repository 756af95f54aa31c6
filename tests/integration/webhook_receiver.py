#!/usr/bin/env python3
"""A real webhook receiver (issue 37) for the integration tests and scripts/bench-webhooks.

It makes its own CA and a server certificate for 127.0.0.1 and localhost with the openssl CLI
(`ca_file`: the deliverer's webhooks_ca_file), serves HTTPS (or plain http: tls=False) with
HTTP/1.1 keep-alive, and checks every request with docs/webhooks.md's own verify(), executed from
the document, so the code exchanges copy is the code the tests run. A request to a registered
path with a valid signature gets that path's behaviour (a status, 200 unless set; a delay first;
or "drop": read it, then close without answering, a lost acknowledgement); an unknown path gets
400, any other verdict 401. Every request is recorded (DELIVERY_FIELDS).

In a test (an asyncio loop in a thread of the test's process):

    receiver = WebhookReceiver().start()          # WebhookReceiver(tls=False): plain http
    receiver.register("/hooks/a", secret)          # its URL: receiver.url("/hooks/a")
    receiver.set_behaviour("/hooks/a", status=503)  # or delay=10, or drop=True; () is the default
    receiver.wait_deliveries(3)                    # deliveries(), bad_signatures()
    receiver.down(); receiver.up()                 # closed and refused, then back on its port
    receiver.stop()

As a process of its own (the benchmark), one or N processes sharing the port (SO_REUSEPORT):

    python3 webhook_receiver.py --state-dir D [--port P] [--processes N] [--http] [--keep-bodies]

It writes D/ready ({"port", "ca_file", "pids"}) once every process listens, and one JSON line
per request to D/deliveries-<process>.jsonl (read_deliveries(D) merges them in receipt order). It
follows D/control.json, the registered paths, their behaviours and whether it is down: the class
ReceiverProcess (webhook_receiver_process.py) starts it and has the API above. Standard library
and the openssl CLI only."""

import asyncio
import json
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections import namedtuple
from pathlib import Path

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
MAX_BODY = 1 << 20
# What each recorded request holds. verdict: verify()'s ("valid", "malformed", "mismatch",
# "outside_tolerance"), or "unknown_path"; answer: the status sent, or "drop". The body's members
# are None when it is not the JSON of a delivery; body itself is kept with keep_bodies only.
DELIVERY_FIELDS = ("process", "path", "method", "event_id", "timestamp", "content_type",
                   "user_agent", "event", "seq", "subscription", "attempt", "record_hash",
                   "record_status", "verdict", "signature_ok", "answer", "time", "monotonic",
                   "body")

Behaviour = namedtuple("Behaviour", "status delay drop", defaults=(200, 0.0, False))


def document_verify():
    """verify() as docs/webhooks.md shows it: its one Python block that defines it, executed."""
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```$", DOCUMENT.read_text(), re.S | re.M)
              if "\ndef verify(" in b]
    if len(blocks) != 1:
        raise RuntimeError(f"{DOCUMENT}: {len(blocks)} Python blocks define verify(), not one")
    namespace = {}
    exec(compile(blocks[0], f"{DOCUMENT} (verify)", "exec"), namespace)
    return namespace["verify"]


verify = document_verify()


def make_certificates(directory, hosts=("127.0.0.1", "localhost")):
    """A CA (ca.pem) and a certificate it signs for `hosts` (subjectAltName: IP or DNS entries)
    with its key (server.pem, server.key) in `directory`, made with the openssl CLI; returns the
    three paths. Kept when they are there already (the processes of one receiver share them)."""
    d = Path(directory)
    paths = (d / "ca.pem", d / "server.pem", d / "server.key")
    if all(p.exists() for p in paths):
        return paths
    d.mkdir(parents=True, exist_ok=True)
    san = ",".join(("IP:" if re.fullmatch(r"[0-9.]+|.*:.*", h) else "DNS:") + h for h in hosts)
    (d / "server.ext").write_text(f"subjectAltName={san}\nbasicConstraints=critical,CA:FALSE\n"
                                  "keyUsage=critical,digitalSignature\n"
                                  "extendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for args in (
            ["req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
             "-subj", "/CN=connector tests webhook CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ["req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={hosts[0]}"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "30", "-extfile", "server.ext", "-out", "server.pem"]):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)
    return paths


def _body_members(body):
    """The members of a delivery's body the record keeps (None where the body has none)."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    doc = doc if isinstance(doc, dict) else {}
    record = doc.get("record") if isinstance(doc.get("record"), dict) else {}
    return {"event": doc.get("event"), "seq": doc.get("seq"),
            "subscription": doc.get("subscription"), "attempt": doc.get("attempt"),
            "record_hash": record.get("hash"), "record_status": record.get("status")}


async def _read_body(reader, headers):
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while (size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)) > 0:
            body += (await reader.readexactly(size + 2))[:-2]
            if len(body) > MAX_BODY:
                raise ValueError("body too large")
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
            pass
        return bytes(body)
    length = int(headers.get("content-length", "0"))
    if not 0 <= length <= MAX_BODY:
        raise ValueError("bad Content-Length")
    return await reader.readexactly(length)


REASONS = {200: "OK", 202: "Accepted", 204: "No Content", 400: "Bad Request",
           401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error",
           503: "Service Unavailable"}


class WebhookReceiver:
    """One receiver in this process (see the module's text). reuse_port, log_file and process
    are for a receiver of several processes (main())."""

    def __init__(self, tls=True, port=0, host="127.0.0.1", cert_dir=None, keep_bodies=True,
                 tolerance=300, log_file=None, reuse_port=False, process=0):
        self.tls, self.host, self.port, self.process = tls, host, port, process
        self.keep_bodies, self.tolerance, self.reuse_port = keep_bodies, tolerance, reuse_port
        self._own_dir = None
        self.ca_file = self._ssl = None
        if tls:
            if cert_dir is None:
                cert_dir = self._own_dir = tempfile.mkdtemp(prefix="webhook-receiver-")
            self.ca_file, cert, key = (str(p) for p in make_certificates(cert_dir))
            self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self._ssl.load_cert_chain(cert, key)
        self._secrets, self._behaviours = {}, {}
        self._deliveries, self._bad = [], 0
        self._changed = threading.Condition()
        self._log = open(log_file, "a", encoding="utf-8") if log_file else None
        self._loop = self._thread = self._server = None
        self._connections = {}  # writer: the task serving its connection

    # --- the API --------------------------------------------------------------------------
    def start(self):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="webhook-receiver",
                                        daemon=True)
        self._thread.start()
        self.up()
        return self

    def stop(self):
        if self._loop is not None:
            self._call(self._close(cancel=True))
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()
            self._loop = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None

    def url(self, path):
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}{path}"

    def register(self, path, secret):
        """Deliveries to `path` are verified with `secret` (as `webhook add` printed it)."""
        self._secrets[path] = secret

    def register_all(self, secrets):
        """register() for each path: secret of the dict."""
        self._secrets.update(secrets)

    def set_behaviour(self, path, status=200, delay=0.0, drop=False):
        """How `path` answers a valid delivery from now on: `status` after `delay` seconds, or
        (drop) no answer, the connection closed once the request is read."""
        self._behaviours[path] = Behaviour(status, delay, drop)

    def down(self):
        """Stops listening and closes every connection: connections are refused until up()."""
        self._call(self._close())

    def up(self):
        """Listens again, on the same port (the first time: `port`, or a free one)."""
        self._call(self._listen())

    def deliveries(self, path=None):
        """Every request recorded so far, in receipt order (dicts of DELIVERY_FIELDS)."""
        with self._changed:
            return [d for d in self._deliveries if path is None or d["path"] == path]

    def bad_signatures(self):
        """Requests not verified (unknown path, malformed, mismatched or outside tolerance)."""
        with self._changed:
            return self._bad

    def wait_deliveries(self, count, timeout=60, path=None):
        """The deliveries (to `path`, or all) once there are at least `count`; AssertionError
        when they do not come within `timeout` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.deliveries(path)) >= count, timeout):
                raise AssertionError(f"{len(self.deliveries(path))} deliveries to "
                                     f"{path or 'any path'} in {timeout} s, not {count}")
            return self.deliveries(path)

    # --- the server ----------------------------------------------------------------------
    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(60)

    async def _listen(self):
        if self._server is not None:
            return
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((self.host, self.port))
        sock.listen(1024)
        self.port = sock.getsockname()[1]
        tls = {"ssl": self._ssl, "ssl_handshake_timeout": 30} if self.tls else {}
        self._server = await asyncio.start_server(self._serve, sock=sock, limit=1 << 16, **tls)

    async def _close(self, cancel=False):
        """Closes the listening socket and every connection (stop(): and ends their tasks, a
        delayed answer's included)."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer, task in list(self._connections.items()):
            writer.transport.abort()
            if cancel:
                task.cancel()
        if cancel:
            await asyncio.gather(*self._connections.values(), return_exceptions=True)

    async def _serve(self, reader, writer):
        self._connections[writer] = asyncio.current_task()
        try:
            while await self._one_request(reader, writer):
                pass
        except (OSError, ssl.SSLError, ValueError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError):
            pass  # the client closed, or sent what this receiver does not read
        except asyncio.CancelledError:
            pass  # stop(): ended here, so that asyncio's own callback does not log it
        finally:
            self._connections.pop(writer, None)
            writer.close()

    async def _one_request(self, reader, writer):
        """Reads, records and answers one request; whether the connection stays open."""
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, target, version = head[0].split(" ", 2)
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await _read_body(reader, headers)
        answer, delay = self._record(method, target.split("?", 1)[0], headers, body)
        if delay > 0:
            await asyncio.sleep(delay)
        if answer == "drop":
            writer.transport.abort()
            return False
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        text = b"ok\n" if 200 <= answer < 300 else b"refused\n"
        close = b"" if keep else b"Connection: close\r\n"
        writer.write(f"HTTP/1.1 {answer} {REASONS.get(answer, 'Status')}\r\n"
                     f"Content-Type: text/plain\r\nContent-Length: {len(text)}\r\n".encode()
                     + close + b"\r\n" + text)
        await writer.drain()
        return keep

    def _record(self, method, path, headers, body):
        """Verifies and records a request; returns (its answer, the delay before it)."""
        received = time.time(), time.monotonic()
        secret = self._secrets.get(path)
        verdict = "unknown_path" if secret is None else verify(
            secret, headers.get("connector-timestamp"), headers.get("connector-signature"), body,
            tolerance=self.tolerance)
        behaviour = self._behaviours.get(path, Behaviour())
        if verdict != "valid":
            answer, delay = (400 if secret is None else 401), 0
        else:
            answer, delay = ("drop" if behaviour.drop else behaviour.status), behaviour.delay
        delivery = {"process": self.process, "path": path, "method": method,
                    "event_id": headers.get("connector-event-id"),
                    "timestamp": headers.get("connector-timestamp"),
                    "content_type": headers.get("content-type"),
                    "user_agent": headers.get("user-agent"), **_body_members(body),
                    "verdict": verdict, "signature_ok": verdict == "valid", "answer": answer,
                    "time": received[0], "monotonic": received[1],
                    "body": body.decode("utf-8", "replace") if self.keep_bodies else None}
        with self._changed:
            if self._log is None:
                self._deliveries.append(delivery)
            else:  # a process of several: its file is the record (read_deliveries())
                self._log.write(json.dumps(delivery) + "\n")
                self._log.flush()
            self._bad += verdict != "valid"
            self._changed.notify_all()
        return answer, delay



if __name__ == "__main__":
    import webhook_receiver_process
    webhook_receiver_process.main()
