#!/usr/bin/env python3
"""A tiny GRIP backend for scripts/bench-pushpin: it stands in for the C++ FastCGI worker behind
Pushpin, so the figures are Pushpin's own (tests/bench/pushpin/README.md).

GET|HEAD /s/<N>[?previd=X&ka=S&next=1&nextprev=Y&nohold=1]  an SSE stream held on channel c<N>:
    Content-Type: text/event-stream, Grip-Hold: stream, Grip-Channel: c<N>[; prev-id=X], first
    bytes "event: hello\\ndata: first\\n\\n" (a finite answer without Grip-Hold with nohold=1)
GET /p/<N>[?previd=X&timeout=S]  a long-poll held on channel p<N>: Grip-Hold: response,
    Grip-Timeout: 30, the timeout's body {"changes":[]}
Anything else: a JSON 404 (the driver's readiness check asks for one through Pushpin).
Each request without log=0 in its query is appended to STATE/requests.jsonl (method, path, the
headers the design cares about), to see what Pushpin passes to the backend.
Usage: grip_backend.py --state DIR --port N   (DIR may also come from PUSHPIN_BENCH_STATE)
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

WATCH = ("Accept", "If-None-Match", "If-Modified-Since", "Last-Event-ID", "Grip-Sig",
         "Grip-Last", "Grip-Feature", "Connection", "X-Forwarded-For", "Host")


def stream_answer(number, q, grip_last):
    channel = "c" + number
    if "previd" in q:
        channel += "; prev-id=" + q["previd"]
    body = b"event: hello\ndata: first\n\n"
    if grip_last:  # a recovery: Pushpin asks the next link after a prev-id gap or a subscribe
        body = ("event: recover\ndata: %s\n\n" % grip_last).encode()
    headers = [("Content-Type", "text/event-stream")]
    if "nohold" not in q:
        headers += [("Grip-Hold", "stream"), ("Grip-Channel", channel)]
    if "ka" in q:  # a keep-alive comment after every ka seconds of silence
        headers.append(("Grip-Keep-Alive", ":ka\\n\\n; format=cstring; timeout=" + q["ka"]))
    if "next" in q:  # prev-id on a stream hold is honoured only with a next link
        headers.append(("Grip-Link", "</s/%s?previd=%s&next=1>; rel=next"
                        % (number, q.get("nextprev", q.get("previd", "0")))))
    return 200, headers, body


def poll_answer(number, q):
    channel = "p" + number
    if "previd" in q:
        channel += "; prev-id=" + q["previd"]
    headers = [("Content-Type", "application/json"), ("Grip-Hold", "response"),
               ("Grip-Timeout", q.get("timeout", "30")), ("Grip-Channel", channel)]
    return 200, headers, b'{"changes":[]}'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log = None  # the open requests.jsonl, set in main()
    lock = threading.Lock()

    def log_message(self, *args):
        pass  # thousands of streams: stderr stays quiet

    def _record(self, q):
        if q.get("log", "1") == "0":
            return
        record = {"method": self.command, "path": self.path,
                  "headers": {h: self.headers[h] for h in WATCH if self.headers[h] is not None}}
        with self.lock:
            self.log.write(json.dumps(record) + "\n")

    def _answer(self, head_only):
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = url.path.strip("/").split("/")
        self._record(q)
        if len(parts) == 2 and parts[0] == "s":
            status, headers, body = stream_answer(parts[1], q, self.headers["Grip-Last"])
        elif len(parts) == 2 and parts[0] == "p":
            status, headers, body = poll_answer(parts[1], q)
        else:
            status, headers, body = 404, [("Content-Type", "application/json")], \
                b'{"error":"not_found"}'
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def do_GET(self):
        self._answer(False)

    def do_HEAD(self):
        self._answer(True)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # bursts of new subscriptions are bursts of backend requests


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--state", default=os.environ.get("PUSHPIN_BENCH_STATE"))
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    if not a.state:
        p.error("--state DIR (or PUSHPIN_BENCH_STATE) is required")
    Handler.log = open(Path(a.state) / "requests.jsonl", "a", buffering=1)
    Server(("127.0.0.1", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
