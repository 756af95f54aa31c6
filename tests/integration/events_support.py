"""What the events tests share (test_events, test_events_publisher, test_events_clients): their
stack (start_stack() sets it here), a raw EventSource subscriber, long-polls, and the records
they change. Python 3 standard library only."""

import hashlib
import re
import socket
import threading
import time
from itertools import count

from fcgi_client import fcgi_get
from fixture import Fixture
from harness import Stack, await_true, quiet_window

fixture = Fixture()
stack = None
_next_id = count(700001)


def start_stack():
    """The stack every events test module runs on (setUpModule): events on; long-polls with no
    change end after 3 s here (30 s as shipped)."""
    global stack
    stack = Stack(fixture=fixture.path, events=True,
                  nginx_env={"NGINX_CONNECTOR_EVENTS_POLL_S": "3"})
    return stack


class Subscriber:
    """One EventSource connection through nginx, read on a thread of its own and parsed as the
    EventSource grammar says (a line ends at CRLF, LF or a lone CR; `id` is the last one given
    in an event): events holds (id, data bytes) in arrival order."""

    def __init__(self, target, last_event_id=None, origin=None):
        self.events = []
        self.head = b""
        self.status = None
        self._sock = socket.create_connection(("127.0.0.1", stack.port), timeout=30)
        lines = [f"GET {target} HTTP/1.1", "Host: localhost", "Accept: text/event-stream"]
        if last_event_id is not None:
            lines.append(f"Last-Event-ID: {last_event_id}")
        if origin is not None:
            lines.append(f"Origin: {origin}")
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        await_true(lambda: self.status is not None, what=f"the answer to {target}")

    def _read(self):
        buffer = b""
        try:
            while b"\r\n\r\n" not in buffer:
                chunk = self._sock.recv(65536)
                if not chunk:
                    self.status = 0
                    return
                buffer += chunk
            self.head, buffer = buffer.split(b"\r\n\r\n", 1)
            self.status = int(self.head.split(b" ", 2)[1])
            if b"chunked" in self.head.lower():
                self._parse_chunked(buffer)
                return
            # nchan's stream: no length, no chunks, the body until the connection closes.
            while True:
                buffer = self._parse_events(buffer)
                chunk = self._sock.recv(65536)
                if not chunk:
                    return
                buffer += chunk
        except OSError:
            pass

    def _parse_chunked(self, buffer):
        stream = b""
        while True:
            while b"\r\n" not in buffer:
                chunk = self._sock.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            size_line, buffer = buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return
            while len(buffer) < size + 2:
                chunk = self._sock.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            stream += buffer[:size]
            buffer = buffer[size + 2:]
            stream = self._parse_events(stream)

    def _parse_events(self, stream):
        # Events end at a blank line; within one, lines end at CRLF, LF or CR.
        while True:
            ends = [i for i in (stream.find(b"\n\n"), stream.find(b"\r\n\r\n")) if i >= 0]
            if not ends:
                return stream
            end = min(ends)
            block, stream = stream[:end], stream[end:].lstrip(b"\r\n")
            event_id, data = None, []
            for line in block.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
                field, _, value = line.partition(b":")
                value = value[1:] if value.startswith(b" ") else value
                if field == b"id":
                    event_id = value.decode()
                elif field == b"data":
                    data.append(value)
            if data:
                self.events.append((event_id, b"\n".join(data)))

    def wait_events(self, n, seconds=10):
        await_true(lambda: len(self.events) >= n, seconds=seconds,
                   what=f"{n} events (have {self.events})")
        return self.events[:n]

    def close(self):
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


def by_hash(record_hash):
    """What /v1/history/hash answers for the record now: asked past nginx's cache (an unknown
    parameter, which the worker ignores and nginx never stores), as an event is the record as
    its change left it, and the cache keeps an in-flight record's answer for 2 s."""
    response = stack.get(f"/v1/history/hash?hash={record_hash}&now=1")
    assert response.status == 200, response
    return response.body


def newest_seq(history_id):
    return stack.sql(f"SELECT MAX(seq) FROM history_changes WHERE history_id = {history_id}")[0][0]


def new_record(source_id):
    """A copy of history row source_id under a new id and hash (the same addresses): an insert
    the feed records. Returns (id, hash)."""
    new_id = next(_next_id)
    new_hash = hashlib.sha256(f"events-{new_id}".encode()).hexdigest()
    stack.copy_history_row(source_id, new_id, new_hash)
    return new_id, new_hash


def address_in_flight():
    """The deposit address of a record in flight, and the id of a record of it (to copy)."""
    _, _, address = record_in_flight()
    source = stack.sql(f"SELECT MIN(id) FROM history WHERE source_deposit_address = '{address}'")
    return address, int(source[0][0])


def record_in_flight():
    """A record that is not final yet, and so may still change: (id, hash, deposit address)."""
    row = stack.sql("SELECT id, hash, source_deposit_address FROM history "
                    "WHERE status IN ('Deposit', 'Pending') ORDER BY id LIMIT 1")[0]
    return int(row[0]), row[1], row[2]


def wait_published(seq):
    """Until the publisher has published the feed up to seq: what it sent for a change is the
    record as it was then, so a test changes a record again only after that."""
    await_true(lambda: (stack.worker_status()["events"]["cursor"] or 0) >= int(seq),
               what=f"the publisher past change {seq}")


def newer_than(seq, events):
    """The events after seq, in arrival order."""
    return [event for event in events if int(event[0]) > int(seq)]


def goes_on_after(test, target, had, change):
    """A stream that comes back after the last of `had` (the events it received) and missed
    nothing: right away, it is told to come back shortly (what it had may still be among the
    channel's recent messages, docs/events.md); once that is gone, it is handed over, and
    change() makes the next change and returns its event: the stream gets it, and only it."""
    early = Subscriber(target, last_event_id=had[-1][0])
    early.close()
    await_true(lambda: stack.worker_status()["events"]["settled_cursor"] >= int(had[-1][0]),
               what="the last event gone from the recent messages")
    stream = Subscriber(target, last_event_id=had[-1][0])
    try:
        expected = change()
        await_true(lambda: expected in stream.events, what="the next change")
        quiet_window(1)  # and nothing after it
        test.assertEqual(stream.events, [expected])
    finally:
        stream.close()


def hand_overs():
    """How many /v1/history/hash/events requests the worker has answered 200 so far (handed
    over to nchan, or answered the changes a returning stream missed)."""
    return stack.worker_log.read_text().count('"endpoint":"/v1/history/hash/events","status":200')


def publisher_pid():
    return stack.worker_status()["events"]["publisher_pid"]


class Poll:
    """One long-poll, sent at once and answered on a thread of its own."""

    def __init__(self, target, headers=None):
        self.response = None
        self._thread = threading.Thread(target=self._get, args=(target, headers), daemon=True)
        self._thread.start()

    def _get(self, target, headers):
        self.response = stack.get(target, headers=headers)

    def answer(self, seconds=10):
        self._thread.join(seconds)
        assert self.response is not None, "no answer to the long-poll"
        return self.response


def change_list(*changes, after=None):
    """A long-poll's body: each (seq, record bytes as /v1/history/hash answers them), then where
    to poll from (the last seq unless given)."""
    items = [b'{"seq":"%s","record":%s}' % (str(seq).encode(), record) for seq, record in changes]
    after = changes[-1][0] if after is None else after
    return b'{"changes":[' + b",".join(items) + b'],"after":"%s"}' % str(after).encode()


def poll_headers_are_the_apis(test, response):
    test.assertEqual(response.status, 200)
    test.assertEqual(response.headers["Content-Type"], "application/json; charset=utf-8")
    test.assertEqual(response.headers["Cache-Control"], "no-store")
    test.assertEqual(response.headers["Access-Control-Allow-Origin"], "*")  # once
    test.assertIsNone(response.headers.get("Access-Control-Allow-Credentials"))
    test.assertTrue(response.headers.get("X-Request-Id"))
    # None of nchan's message ids (it would otherwise send both, and Vary on them).
    test.assertIsNone(response.headers.get("ETag"))
    test.assertIsNone(response.headers.get("Last-Modified"))
    test.assertNotIn("If-None-Match", response.headers.get("Vary", ""))


def poll_changes(test, path, after, expected, seconds=30):
    """Polls as a client does, from `after`, until it has len(expected) changes; checks each
    answer's bytes: an empty list without `after` (nginx's wake-up, or its 3 s here), or the
    changes it has, each as `expected` ((seq, record bytes) in order) has it, and the last one's
    seq as `after`. Sent from a browser's origin."""
    known = {str(seq): record for seq, record in expected}
    received = []
    deadline = time.monotonic() + seconds
    while len(received) < len(expected) and time.monotonic() < deadline:
        response = stack.get(f"{path}&after={after}", headers={"Origin": "https://wallet.example"})
        poll_headers_are_the_apis(test, response)
        seqs = [change["seq"] for change in response.json()["changes"]]
        if not seqs:
            test.assertEqual(response.body, b'{"changes":[]}')
            continue
        test.assertTrue(set(seqs) <= set(known), (seqs, known.keys()))
        test.assertEqual(response.body, change_list(*[(seq, known[seq]) for seq in seqs]))
        received += seqs
        after = seqs[-1]
    test.assertEqual(received, [str(seq) for seq, _ in expected])


def events_figure(name):
    """One of the publisher's counters, as /status has it (and /metrics, checked too)."""
    value = stack.worker_status()["events"][name]
    status, _, metrics = fcgi_get(stack.fcgi_socket, "/metrics")
    assert status == 200, status
    metrics = metrics.decode() if isinstance(metrics, bytes) else metrics
    exposed = re.search(rf"^connector_events_{name}_total ([0-9]+)$", metrics, re.M).group(1)
    assert int(exposed) == value, (name, exposed, value)
    return value


def readme_record(record_hash):
    """The README's transfer, put in place as the demo's data has it (a Pending record) the
    first time; its id."""
    found = stack.sql(f"SELECT id FROM history WHERE hash = '{record_hash}'")
    if found:
        return int(found[0][0])
    pending = stack.sql("SELECT id FROM history WHERE status = 'Pending' ORDER BY id LIMIT 1")
    new_id = next(_next_id)
    stack.copy_history_row(int(pending[0][0]), new_id, record_hash)
    return new_id
