"""Server-sent events (issue 25, docs/events.md): the real stack with the events drop-ins (nginx
with nchan), the worker publishing the change feed (sql/migrations/0006) to it, and subscribers
that read the raw EventSource stream the way a browser parses it (test_cors_browser.py has a real
Chromium): the record first, every change after it in order and exactly once, each event's data
the bytes /v1/history/hash answers at that moment and its id the change feed's seq."""

import hashlib
import http.client
import http.server
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
from functools import partial
from itertools import count
from pathlib import Path

from fcgi_client import fcgi_get
from fixture import Fixture
from harness import REPO, Stack, await_true, chromium_dom, hang

fixture = Fixture()
stack = None
_next_id = count(700001)


def setUpModule():
    global stack
    # Long-polls with no change end after 3 s here (30 s as shipped).
    stack = Stack(fixture=fixture.path, events=True,
                  nginx_env={"NGINX_CONNECTOR_EVENTS_POLL_S": "3"})


def tearDownModule():
    stack.stop()


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
        time.sleep(1)
        test.assertEqual(stream.events, [expected])
    finally:
        stream.close()


def hand_overs():
    """How many /v1/history/hash/events requests the worker has answered 200 so far (handed
    over to nchan, or answered the changes a returning stream missed)."""
    return stack.worker_log.read_text().count('"endpoint":"/v1/history/hash/events","status":200')


def publisher_pid():
    return stack.worker_status()["events"]["publisher_pid"]


class RecordEvents(unittest.TestCase):
    def test_the_record_first_then_each_change_as_by_hash_answers_it(self):
        history_id, record_hash = new_record(1)
        subscriber = Subscriber(f"/v1/history/hash/events?hash=0x{record_hash.upper()}")
        try:
            self.assertEqual(subscriber.status, 200)
            self.assertIn(b"content-type: text/event-stream", subscriber.head.lower())
            first = subscriber.wait_events(1)[0]
            self.assertEqual(first, (newest_seq(history_id), by_hash(record_hash)))
            changes = []
            for status in ("Pending", "Confirmed"):
                stack.sql(f"UPDATE history SET status = '{status}' WHERE id = {history_id}")
                changes.append((newest_seq(history_id), by_hash(record_hash)))
                wait_published(changes[-1][0])
            self.assertEqual(subscriber.wait_events(3), [first] + changes)
            self.assertIn(b'"status":"Confirmed"', changes[-1][1])
            # An update that changes nothing shown is no change.
            stack.sql(f"UPDATE history SET status = 'Confirmed' WHERE id = {history_id}")
            time.sleep(1)
            self.assertEqual(len(subscriber.events), 3)
        finally:
            subscriber.close()

    def test_a_second_subscriber_gets_the_newest_state_once(self):
        history_id, record_hash = new_record(2)
        stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {history_id}")
        expected = (newest_seq(history_id), by_hash(record_hash))
        wait_published(expected[0])
        first = Subscriber(f"/v1/history/hash/events?hash={record_hash}")
        try:
            self.assertEqual(first.wait_events(1), [expected])
            second = Subscriber(f"/v1/history/hash/events?hash={record_hash}")
            try:
                self.assertEqual(second.wait_events(1), [expected])
                time.sleep(1)  # nothing republished to the first for the second's sake
                self.assertEqual(first.events, [expected])
                self.assertEqual(second.events, [expected])
            finally:
                second.close()
        finally:
            first.close()


    def test_a_reconnection_receives_exactly_the_missed_changes_each_as_it_was(self):
        history_id, record_hash = new_record(3)
        subscriber = Subscriber(f"/v1/history/hash/events?hash={record_hash}")
        try:
            seen = subscriber.wait_events(1)[0]
        finally:
            subscriber.close()
        # Two changes, likely published in one round: each event is the record as its change
        # left it (the feed keeps each state), not as it is when published.
        missed = []
        for status in ("Pending", "Confirmed"):
            stack.sql(f"UPDATE history SET status = '{status}' WHERE id = {history_id}")
            missed.append((newest_seq(history_id), by_hash(record_hash)))
        wait_published(missed[-1][0])
        again = Subscriber(f"/v1/history/hash/events?hash={record_hash}", last_event_id=seen[0])
        try:
            self.assertEqual(again.wait_events(2), missed)
            self.assertIn(b'"status":"Pending"', missed[0][1])
            time.sleep(1)
            self.assertEqual(again.events, missed)  # its state is not sent again
        finally:
            again.close()
        # Nothing missed: handed to the record's channel for its changes only.
        def change():
            stack.sql(f"UPDATE history SET status_message = 'late' WHERE id = {history_id}")
            return newest_seq(history_id), by_hash(record_hash)

        goes_on_after(self, f"/v1/history/hash/events?hash={record_hash}", [seen] + missed,
                      change)


class AddressEvents(unittest.TestCase):
    def test_nothing_until_the_next_change_then_each_record_of_the_address(self):
        address, source = address_in_flight()
        subscriber = Subscriber(f"/v1/history/events?address={address.lower()}")
        try:
            self.assertEqual(subscriber.status, 200)
            time.sleep(1)
            self.assertEqual(subscriber.events, [])
            expected = []
            for _ in range(3):
                history_id, record_hash = new_record(source)
                expected.append((newest_seq(history_id), by_hash(record_hash)))
            self.assertEqual(subscriber.wait_events(3), expected)
        finally:
            subscriber.close()

    def test_curl_subscribers_get_each_change_of_the_address(self):
        """Two curl -N subscribers on one address, in its EIP-55 and lower-case spellings (one
        channel): each gets the next record of the address, as by-hash answers it."""
        address, source = address_in_flight()
        processes = [subprocess.Popen(
            ["curl", "-sS", "-N", "-m", "60", "-D", "-", "-H", "Accept: text/event-stream",
             f"{stack.base_url}/v1/history/events?address={spelling}"], stdout=subprocess.PIPE)
            for spelling in (address, address.lower())]
        outputs = [b"", b""]

        def read_until(i, pattern):
            while not re.search(pattern, outputs[i], re.M):
                ready, _, _ = select.select([processes[i].stdout], [], [], 30)
                self.assertTrue(ready, f"curl {i}: {outputs[i]!r}")
                chunk = os.read(processes[i].stdout.fileno(), 65536)
                self.assertTrue(chunk, f"curl {i} ended: {outputs[i]!r}")
                outputs[i] += chunk

        try:
            for i in (0, 1):  # subscribed: nchan sent the stream's head
                read_until(i, rb"\r\n\r\n")
                self.assertIn(b"HTTP/1.1 200", outputs[i])
            history_id, record_hash = new_record(source)
            expected = (newest_seq(history_id), by_hash(record_hash))
            for i in (0, 1):
                read_until(i, rb"^data: .*\n\n")
                # The body, split on LF only (as grep or a hand-written parser would): the
                # event's id line, then its data line holding the JSON alone; nothing else but
                # the keep-alive comment.
                body = outputs[i].split(b"\r\n\r\n", 1)[1].replace(b": ping\n\n", b"")
                self.assertEqual(body, f"id: {expected[0]}\ndata: ".encode() + expected[1] + b"\n\n")
        finally:
            for process in processes:
                process.kill()
                process.wait()
                process.stdout.close()

    def test_a_reconnection_receives_exactly_the_missed_events(self):
        address, source = address_in_flight()
        subscriber = Subscriber(f"/v1/history/events?address={address}")
        try:
            new_record(source)
            seen = subscriber.wait_events(1)[0]
        finally:
            subscriber.close()
        missed = []
        for _ in range(2):
            history_id, record_hash = new_record(source)
            missed.append((newest_seq(history_id), by_hash(record_hash)))
        wait_published(missed[-1][0])
        # The worker answers them from the feed, and the answer ends: the client reconnects with
        # the last id, and that stream, handed to nchan, gets what changes next.
        again = Subscriber(f"/v1/history/events?address={address}", last_event_id=seen[0])
        try:
            self.assertEqual(again.status, 200)
            self.assertIn(b"content-type: text/event-stream", again.head.lower())
            self.assertEqual(again.wait_events(2), missed)
            time.sleep(1)
            self.assertEqual(again.events, missed)
        finally:
            again.close()
        def change():
            history_id, record_hash = new_record(source)
            return newest_seq(history_id), by_hash(record_hash)

        goes_on_after(self, f"/v1/history/events?address={address}", [seen] + missed, change)

    def test_a_reconnection_after_a_bad_id_is_a_json_400(self):
        address, _ = address_in_flight()
        for last_event_id in ("1700000000:0", "-1", "99999999999999999999"):
            response = stack.get(f"/v1/history/events?address={address}",
                                 headers={"Accept": "text/event-stream",
                                          "Last-Event-ID": last_event_id})
            self.assertEqual(response.status, 400, last_event_id)
            self.assertEqual(response.json()["error"]["code"], "invalid_parameter")
            self.assertEqual(response.json()["error"]["param"], "Last-Event-ID")


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


class LongPolling(unittest.TestCase):
    def test_a_record_poll_is_its_state_then_each_change_from_the_feed(self):
        history_id, record_hash = new_record(5)
        wait_published(newest_seq(history_id))
        path = f"/v1/history/hash/changes?hash={record_hash}"
        first = stack.get(path)
        poll_headers_are_the_apis(self, first)
        after = first.json()["after"]
        self.assertGreaterEqual(int(after), int(newest_seq(history_id)))
        self.assertEqual(first.body, change_list((newest_seq(history_id), by_hash(record_hash)),
                                                 after=after))
        # Nothing after it: nginx holds the poll until the record changes (an empty list: the
        # client asks again), and the next poll gets the change from the feed.
        poll = Poll(f"{path}&after={after}")
        stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {history_id}")
        change = (newest_seq(history_id), by_hash(record_hash))
        poll_headers_are_the_apis(self, poll.answer())
        # nginx's wake-up, or (the change published before the worker read the feed) the change.
        self.assertIn(poll.answer().body, (b'{"changes":[]}', change_list(change)))
        poll_changes(self, path, after, [change])
        # Two changes at once: both, in order, each as it left the record.
        stack.sql(f"UPDATE history SET status = 'Deposit' WHERE id = {history_id}")
        both = [(newest_seq(history_id), by_hash(record_hash))]
        stack.sql(f"UPDATE history SET status = 'Confirmed' WHERE id = {history_id}")
        both.append((newest_seq(history_id), by_hash(record_hash)))
        poll_changes(self, path, change[0], both)

    def test_an_address_poll_starts_where_the_node_is_then_gets_each_change(self):
        address, source = address_in_flight()
        path = f"/v1/history/changes?address={address.lower()}"
        first = stack.get(path)
        poll_headers_are_the_apis(self, first)
        after = first.json()["after"]
        self.assertEqual(first.body, b'{"changes":[],"after":"%s"}' % after.encode())
        missed = []
        for _ in range(2):
            history_id, record_hash = new_record(source)
            missed.append((newest_seq(history_id), by_hash(record_hash)))
        poll_changes(self, path, after, missed)
        history_id, record_hash = new_record(source)
        poll_changes(self, path, missed[-1][0], [(newest_seq(history_id), by_hash(record_hash))])

    def test_no_change_is_an_empty_list_and_nchans_ids_never_reach_it(self):
        """A poll with nothing to say ends with an empty list (after 3 s here). nchan's resume
        headers are refused by the worker (400), and the proxy removes them in any case: nginx's
        workers all live on."""
        _, record_hash, address = record_in_flight()
        end = stack.worker_status()["events"]["cursor"]
        polls = [Poll(f"/v1/history/changes?address=0x{'7' * 40}&after={end}",
                      {"Origin": "https://wallet.example"}),
                 Poll(f"/v1/history/hash/changes?hash={record_hash}&after=99999999999")]
        for poll in polls:
            answer = poll.answer(seconds=15)
            poll_headers_are_the_apis(self, answer)
            self.assertEqual(answer.body, b'{"changes":[]}')
        # nchan reads them when present: an empty one is refused too.
        resume = [("If-Modified-Since", "Thu, 26 Nov 2026 19:17:10 GMT"),
                  ("If-None-Match", "0"), ("If-None-Match", ""), ("If-Modified-Since", "")]
        for target in (f"/v1/history/changes?address={address}&after={end}",
                       f"/v1/history/hash/changes?hash={record_hash}",
                       f"/v1/history/events?address={address}",
                       f"/v1/history/hash/events?hash={record_hash}"):
            for name, value in resume:
                for last_event_id in (None, "1"):
                    response = stack.get(target, headers={
                        name: value, "Last-Event-ID": last_event_id,
                        "Accept": "text/event-stream"})
                    self.assertEqual(response.status, 400, (target, name))
                    self.assertEqual(response.json()["error"]["param"], name)
        self.assertNotIn("exited on signal", stack.nginx_error_log_text())

    def test_bad_parameters_are_the_usual_json_errors(self):
        _, record_hash, _ = record_in_flight()
        cases = [("/v1/history/hash/changes", 400, "missing_parameter", "hash"),
                 (f"/v1/history/hash/changes?hash={record_hash}&after=x", 400,
                  "invalid_parameter", "after"),
                 (f"/v1/history/hash/changes?hash={'0' * 64}", 404, "not_found", "hash"),
                 (f"/v1/history/changes?address=0x{'a' * 39}", 400, "invalid_parameter",
                  "address"),
                 (f"/v1/history/changes?address=0x{'a' * 40}&after=-1", 400,
                  "invalid_parameter", "after")]
        for target, status, code, param in cases:
            response = stack.get(target)
            self.assertEqual(response.status, status, target)
            error = response.json()["error"]
            self.assertEqual((error["code"], error.get("param")), (code, param), target)
            self.assertEqual(response.headers["Cache-Control"], "no-store", target)


class Validation(unittest.TestCase):
    def test_bad_parameters_are_the_usual_json_errors(self):
        cases = [
            ("/v1/history/hash/events", 400, "missing_parameter"),
            ("/v1/history/hash/events?hash=zz", 400, "invalid_parameter"),
            ("/v1/history/hash/events?hash=" + "a" * 64 + "&hash=" + "a" * 64, 400,
             "duplicate_parameter"),
            ("/v1/history/hash/events?hash=" + "0" * 64, 404, "not_found"),
            ("/v1/history/events", 400, "missing_parameter"),
            ("/v1/history/events?address=0x12", 400, "invalid_parameter"),
        ]
        for target, status, code in cases:
            response = stack.get(target, headers={"Accept": "text/event-stream"})
            self.assertEqual((response.status, response.json()["error"]["code"]), (status, code),
                             target)
            self.assertEqual(response.headers["Cache-Control"], "no-store", target)

    def test_nchan_is_reached_only_through_the_worker(self):
        """The subscriber locations are internal (only the worker's X-Accel-Redirect enters
        them) and the public server has no publisher location: from outside, a channel can be
        neither read by its nchan name nor published to."""
        _, record_hash, _ = record_in_flight()
        for target in (f"/connector-events/record/{record_hash}",
                       f"/connector-events/address/0x{'a' * 40}",
                       f"/connector-events/record-changes/{record_hash}",
                       f"/connector-events/address-changes/0x{'a' * 40}",
                       f"/connector-events/poll-record/{record_hash}",
                       f"/connector-events/poll-address/0x{'a' * 40}",
                       f"/poll/record/{record_hash}",
                       f"/publish/recent?channels=r:{record_hash}",
                       f"/publish/polls?channels=ph:{record_hash}"):
            for method, body in (("GET", b""), ("POST", b'{"forged": true}')):
                response = stack.request(method, target, headers={
                    "Accept": "text/event-stream", "Content-Type": "application/json"}, body=body)
                self.assertEqual(response.status, 404, (method, target))
                self.assertEqual(response.json()["error"]["code"], "not_found", (method, target))
        # Nothing was published: a subscriber's first event is still the record as it is.
        subscriber = Subscriber(f"/v1/history/hash/events?hash={record_hash}")
        try:
            await_true(lambda: subscriber.events, what="the record's first event")
            self.assertEqual(subscriber.events[0][1],
                             stack.get(f"/v1/history/hash?hash={record_hash}").body)
        finally:
            subscriber.close()

    def test_what_nchan_would_refuse_is_a_json_error_and_publishes_no_snapshot(self):
        """nchan answers a stream without text/event-stream in Accept, or with a WebSocket's
        Upgrade, with a bare 403, and answers no HEAD at all: the worker answers them first,
        and asks the publisher for no record's state for them."""
        # A record of the fixture that nothing has changed or followed: its channel is empty,
        # so a subscriber nchan holds makes the publisher publish its state.
        row = stack.sql("SELECT id, hash FROM history WHERE id < 700000 ORDER BY id DESC LIMIT 1")
        record_hash = row[0][1]
        targets = (f"/v1/history/hash/events?hash={record_hash}",
                   f"/v1/history/events?address=0x{'a' * 40}")
        snapshots = stack.worker_status()["events"]["snapshots_published"]
        cases = [({"Accept": None}, 406, "not_acceptable", "Accept"),
                 ({"Accept": "application/json"}, 406, "not_acceptable", "Accept"),
                 ({"Accept": "TEXT/EVENT-STREAM"}, 406, "not_acceptable", "Accept"),
                 ({"Accept": "text/event-stream", "Connection": "Upgrade",
                   "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, 400, "invalid_parameter",
                  "Upgrade")]
        for target in targets:
            for headers, status, code, param in cases:
                response = stack.get(target, headers=headers)
                self.assertEqual(response.status, status, (target, headers))
                error = response.json()["error"]
                self.assertEqual((error["code"], error["param"]), (code, param), target)
                self.assertEqual(response.headers["Content-Type"],
                                 "application/json; charset=utf-8", target)
                self.assertEqual(response.headers["Cache-Control"], "no-store", target)
            head = stack.request("HEAD", target, headers={"Accept": "text/event-stream"},
                                 timeout=10)
            self.assertEqual(head.status, 200, target)
            self.assertEqual(head.headers["Content-Type"], "text/event-stream; charset=utf-8")
            self.assertEqual(head.headers["Cache-Control"], "no-store")
            self.assertIsNone(head.headers.get("Content-Length"))
            self.assertEqual(head.body, b"")
        # A publisher round after those requests: none of them asked for the record's state.
        asked = int(time.time() * 1000)
        await_true(lambda: stack.worker_status()["events"]["last_round_unix_ms"] > asked + 200,
                   what="a publisher round")
        self.assertEqual(stack.worker_status()["events"]["snapshots_published"], snapshots)
        # The stream nchan holds gets the record first, published for it.
        subscriber = Subscriber(targets[0])
        try:
            self.assertEqual(subscriber.wait_events(1)[0][1], by_hash(record_hash))
            self.assertEqual(stack.worker_status()["events"]["snapshots_published"],
                             snapshots + 1)
        finally:
            subscriber.close()

    def test_a_stream_sends_cors_once(self):
        _, record_hash, _ = record_in_flight()
        subscriber = Subscriber(f"/v1/history/hash/events?hash={record_hash}",
                                origin="https://wallet.example")
        try:
            head = subscriber.head.decode().lower()
            self.assertEqual(head.count("access-control-allow-origin: *"), 1, head)
            self.assertNotIn("access-control-allow-credentials", head)
        finally:
            subscriber.close()


class Publisher(unittest.TestCase):
    def test_a_killed_publisher_and_a_hung_database_under_writes_lose_nothing(self):
        address, source = address_in_flight()
        subscriber = Subscriber(f"/v1/history/events?address={address}")
        expected = []

        def write(n):
            for _ in range(n):
                history_id, _ = new_record(source)
                expected.append(newest_seq(history_id))
                time.sleep(0.05)

        def writing(n):
            writer = threading.Thread(target=write, args=(n,))
            writer.start()
            return writer

        try:
            write(3)
            subscriber.wait_events(len(expected))
            # The publisher's process killed while changes are being written.
            writer = writing(10)
            time.sleep(0.2)
            old = publisher_pid()
            stack.tripwire.expect("killed by Killed", "the publisher's process, killed here")
            os.kill(old, signal.SIGKILL)
            writer.join(60)
            await_true(lambda: publisher_pid() not in (0, old), seconds=20,
                       what="another process publishing")
            # The database hung for longer than the publisher's lease, writes queued behind it.
            mariadb = int((stack.db_dir / "mysqld.pid").read_text())
            hang(mariadb)
            try:
                writer = writing(5)
                time.sleep(6)
            finally:
                os.kill(mariadb, signal.SIGCONT)
            writer.join(60)
            write(3)
            subscriber.wait_events(len(expected), seconds=30)
            time.sleep(1)
            self.assertEqual(len(expected), 21)
            # Every change, in order. Delivery is at least once across a killed holder (docs/
            # events.md): the change it was publishing at that instant may come again, with the
            # same id, which a client passes over; nothing else repeats.
            seen, repeats = [], []
            for event_id, _ in subscriber.events:
                (repeats if event_id in seen else seen).append(event_id)
            self.assertEqual(seen, expected)
            self.assertLessEqual(len(repeats), 1, repeats)
        finally:
            subscriber.close()

    def test_a_client_holds_at_most_twenty_streams(self):
        _, record_hash, _ = record_in_flight()
        streams = [Subscriber(f"/v1/history/hash/events?hash={record_hash}") for _ in range(20)]
        try:
            self.assertEqual({s.status for s in streams}, {200})
            refused = stack.get(f"/v1/history/hash/events?hash={record_hash}",
                                headers={"Accept": "text/event-stream"}, source="127.0.0.1")
            self.assertEqual((refused.status, refused.json()["error"]["code"]),
                             (429, "rate_limited"))
        finally:
            for stream in streams:
                stream.close()
        # Closed streams free their places.
        def one_more():
            stream = Subscriber(f"/v1/history/hash/events?hash={record_hash}")
            stream.close()
            return stream.status == 200
        await_true(one_more, what="a stream once the others closed")


PAGE = """<!doctype html><html><body><pre id="out">pending</pre><script>
const events = [];
const source = new EventSource("API/v1/history/hash/events?hash=HASH");
source.onmessage = async (e) => {
  events.push({id: e.lastEventId, data: e.data});
  if (events.length === 1) await fetch("/change");  // the test changes the record now
  if (events.length === 2) {
    source.close();
    document.getElementById("out").textContent = JSON.stringify(events);
  }
};
source.onerror = () => { document.getElementById("out").textContent = "error " + events.length; };
</script></body></html>
"""


def events_figure(name):
    """One of the publisher's counters, as /status has it (and /metrics, checked too)."""
    value = stack.worker_status()["events"][name]
    status, _, metrics = fcgi_get(stack.fcgi_socket, "/metrics")
    assert status == 200, status
    metrics = metrics.decode() if isinstance(metrics, bytes) else metrics
    exposed = re.search(rf"^connector_events_{name}_total ([0-9]+)$", metrics, re.M).group(1)
    assert int(exposed) == value, (name, exposed, value)
    return value


class PassedOver(unittest.TestCase):
    def test_a_row_no_channel_can_be_named_for_is_counted_and_the_next_change_goes_out(self):
        """A history row whose address holds a character outside [0-9a-z] (the columns have no
        check; a comma would even split nchan's channel list): its change is passed over and
        counted once, and the changes after it are published as ever."""
        address, source = address_in_flight()
        self.assertEqual(events_figure("changes_unpublishable"), 0)
        subscriber = Subscriber(f"/v1/history/events?address={address.lower()}")
        try:
            bad_id = next(_next_id)
            bad_hash = hashlib.sha256(f"events-{bad_id}".encode()).hexdigest()
            stack.sql(f"CREATE TEMPORARY TABLE copy AS SELECT * FROM history WHERE id = {source}; "
                      f"UPDATE copy SET id = {bad_id}, hash = '{bad_hash}', "
                      f"source_sender = '0x{'c' * 38},-'; "
                      "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy")
            bad_seq = newest_seq(bad_id)
            history_id, record_hash = new_record(source)
            expected = (newest_seq(history_id), by_hash(record_hash))
            self.assertGreater(int(expected[0]), int(bad_seq))
            self.assertEqual(subscriber.wait_events(1), [expected])
            wait_published(expected[0])
            self.assertEqual(events_figure("changes_unpublishable"), 1)
            self.assertEqual(events_figure("publishes_refused"), 0)
            time.sleep(1)
            self.assertEqual(subscriber.events, [expected])
        finally:
            subscriber.close()


class NchanMemoryFull(unittest.TestCase):
    """nchan's shared memory full (a stack of its own, with 128k of it): each message nchan
    refuses for good (507; 500 for a publish to several channels) is passed over and counted,
    and the publisher goes on with the next change instead of retrying it for ever."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(fixture=fixture.path, events=True,
                          nginx_env={"NGINX_CONNECTOR_EVENTS_MEMORY": "128k"})
        # nchan's memory is filled on purpose here: nginx logs each failed allocation.
        cls.stack.tripwire.expect(r"\[crit\] .*ngx_slab_alloc\(\) failed: no memory",
                                  "nchan's shared memory filled on purpose", times=10**6)
        # A subscriber nchan took, then ran out of room for, after its headers went out: nchan
        # ends the stream with an error nginx can no longer send (the client reconnects).
        cls.stack.tripwire.expect(r"\[alert\] .*header already sent, .*/v1/history/hash/events",
                                  "subscribers while nchan's memory is full", times=10**6)

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def figure(self, name):
        return self.stack.worker_status()["events"][name]

    def test_the_publisher_passes_over_what_nchan_has_no_room_for(self):
        # Each record's channel keeps its message for an hour: 200 of them cannot all fit.
        statements = []
        for n in range(200):
            new_id = 900001 + n
            new_hash = hashlib.sha256(f"full-{new_id}".encode()).hexdigest()
            statements.append(
                f"CREATE TEMPORARY TABLE copy AS SELECT * FROM history WHERE id = 1; "
                f"UPDATE copy SET id = {new_id}, hash = '{new_hash}'; "
                "INSERT INTO history SELECT * FROM copy; DROP TEMPORARY TABLE copy")
        self.stack.sql("; ".join(statements))
        end = int(self.stack.sql("SELECT MAX(seq) FROM history_changes")[0][0])
        await_true(lambda: (self.figure("cursor") or 0) >= end, seconds=30,
                   what=f"the publisher past change {end} ({self.stack.worker_status()})")
        self.assertGreater(self.figure("publishes_refused"), 0)  # the memory was full indeed
        self.assertEqual(self.figure("publish_failures"), 0)  # and nothing was retried
        # Logged (once a minute at most, the counter says how many).
        self.assertIn("the event publisher passed over a message: nchan refused a message for",
                      self.stack.worker_log_text())
        # Subscribers to records whose channels are empty, while the memory is full: their
        # states cannot be asked about or published, and that holds no change back.
        hashes = [row[0] for row in self.stack.sql(
            "SELECT hash FROM history WHERE id > 900100 ORDER BY id LIMIT 20")]
        # nchan answers a subscriber it has no room for with an empty 507, which ends a browser's
        # EventSource: while it refuses messages (the last 30 s), the worker hands nothing over
        # and tells each new stream to come back shortly instead, asking for no state.
        requested = self.figure("snapshots_published")
        for record_hash in hashes:
            with socket.create_connection(("127.0.0.1", self.stack.port), timeout=30) as sock:
                sock.sendall(f"GET /v1/history/hash/events?hash={record_hash} HTTP/1.1\r\n"
                             "Host: localhost\r\nAccept: text/event-stream\r\n"
                             "Connection: close\r\n\r\n".encode())
                response = http.client.HTTPResponse(sock, method="GET")
                response.begin()
                self.assertEqual((response.status, response.read()),
                                 (200, b"retry: 3000\n: again shortly\n\n"), record_hash)
                self.assertEqual(response.getheader("Content-Type"),
                                 "text/event-stream; charset=utf-8")
        self.stack.sql("UPDATE history SET status_message = 'after' WHERE id = 900001")
        end = int(self.stack.sql("SELECT MAX(seq) FROM history_changes")[0][0])
        await_true(lambda: (self.figure("cursor") or 0) >= end, seconds=30,
                   what=f"the publisher past change {end} ({self.stack.worker_status()})")
        self.assertEqual(self.figure("snapshots_published"), requested)


class Browser(unittest.TestCase):
    def test_chromium_follows_a_record_with_eventsource(self):
        """A page of another origin subscribes with EventSource; a status change written to
        MariaDB reaches it; each event equals the by-hash answer, its lastEventId the seq."""
        history_id, record_hash = new_record(3)
        stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {history_id}")
        before = (newest_seq(history_id), by_hash(record_hash))
        wait_published(before[0])
        changed = []

        class Site(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/change":
                    stack.sql(f"UPDATE history SET status = 'Confirmed' WHERE id = {history_id}")
                    changed.append((newest_seq(history_id), by_hash(record_hash)))
                    self.send_response(204)
                    self.end_headers()
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        site = Path(tempfile.mkdtemp(prefix="connector-origin-"))
        (site / "index.html").write_text(
            PAGE.replace("API", stack.base_url).replace("HASH", record_hash))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                 partial(Site, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            dom = chromium_dom(f"http://127.0.0.1:{server.server_address[1]}/index.html", 20000)
        finally:
            server.shutdown()
            shutil.rmtree(site, ignore_errors=True)
        text = re.search(r'<pre id="out">([^<]*)</pre>', dom)
        self.assertIsNotNone(text, dom[-2000:])
        events = json.loads(text.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        self.assertEqual([(e["id"], e["data"].encode()) for e in events], [before] + changed)


class TypedClientHelper(unittest.TestCase):
    """tools/client/events.mts, compiled strictly with the types of docs/openapi.yaml, follows a
    record by its stream (followEvents) and by long-polling (pollChanges): its state, then a
    change; the events nginx reloads (every stream and poll closed, every buffer emptied), the
    helper comes back after the seq it has and gets the next change, once."""

    @classmethod
    def setUpClass(cls):
        client = REPO / "tools" / "client"
        modules = client / "node_modules"
        cls.work = Path(tempfile.mkdtemp(prefix="connector-events-client-"))
        (cls.work / "node_modules").symlink_to(modules)
        gen = cls.work / "gen"
        gen.mkdir()
        subprocess.run(["node", modules / "openapi-typescript" / "bin" / "cli.js",
                        REPO / "docs" / "openapi.yaml", "-o", gen / "schema.d.ts"],
                       check=True, capture_output=True, timeout=120)
        (cls.work / "tsconfig.json").write_text(json.dumps({
            "extends": str(client / "tsconfig.json"),
            "compilerOptions": {"rootDirs": [str(client), str(gen)], "rootDir": str(client),
                                "outDir": str(cls.work / "js")},
            "files": [str(client / "events-test.mts"), str(gen / "schema.d.ts")]}))
        cls.built = subprocess.run(["node", modules / "typescript" / "bin" / "tsc", "-p",
                                    cls.work / "tsconfig.json"], capture_output=True, text=True,
                                   timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def follow(self, mode, source_id):
        self.assertEqual(self.built.returncode, 0, self.built.stdout + self.built.stderr)
        history_id, record_hash = new_record(source_id)
        stack.sql(f"UPDATE history SET status = 'Deposit' WHERE id = {history_id}")
        wait_published(newest_seq(history_id))
        follower = subprocess.Popen(["node", self.work / "js" / "events-test.mjs",
                                     stack.base_url, record_hash, "3", mode],
                                    stdout=subprocess.PIPE, text=True)

        def next_line():
            ready, _, _ = select.select([follower.stdout], [], [], 30)
            self.assertTrue(ready, "no change from the helper within 30 s")
            return json.loads(follower.stdout.readline())

        try:
            lines = [next_line()]
            stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {history_id}")
            lines.append(next_line())
            seqs = [newest_seq(history_id)]
            os.kill(int((stack.nginx_prefix / "events" / "nginx.pid").read_text()),
                    signal.SIGHUP)
            time.sleep(2)  # the helper comes back, after the seq it has
            stack.sql(f"UPDATE history SET status = 'Confirmed' WHERE id = {history_id}")
            seqs.append(newest_seq(history_id))
            lines.append(next_line())
            self.assertEqual(follower.wait(timeout=30), 0)
        finally:
            follower.kill()
            follower.stdout.close()
        self.assertEqual([line["status"] for line in lines], ["Deposit", "Pending", "Confirmed"])
        self.assertEqual([str(line["seq"]) for line in lines[1:]], seqs)
        self.assertEqual({line["hash"] for line in lines}, {record_hash})

    def test_follow_events_yields_each_change_once_across_a_reconnection(self):
        handovers = hand_overs()
        self.follow("stream", 4)
        # It did come back (its first stream, then at least one more: the worker's answer of
        # the change it missed, if the change came first, and the stream after that).
        self.assertGreaterEqual(hand_overs() - handovers, 2)

    def test_poll_changes_yields_each_change_once_across_a_reload(self):
        self.follow("poll", 6)


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


class ReadmeExample(unittest.TestCase):
    def test_the_readme_subscription_receives_the_change_of_its_sql_statement(self):
        """README.md's curl -N and its one SQL statement, run as written (the demo's address
        replaced by this stack's, the record put in place first as the demo's data has it)."""
        readme = (REPO / "README.md").read_text()
        section = readme.split("## Following a transfer live", 1)[1].split("\n## ", 1)[0]
        blocks = re.findall(r"```sh\n(.*?)\n```", section, re.S)
        self.assertEqual(len(blocks), 2, section)
        curl, sql = blocks
        record_hash = re.search(r"hash=([0-9a-f]{64})'", curl).group(1)
        statement = re.search(r'-e "(.*)"$', sql).group(1)
        self.assertIn(record_hash, statement)
        new_id = readme_record(record_hash)
        stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {new_id}")
        wait_published(newest_seq(new_id))
        command = curl.replace("curl -N", "curl -sS -N -m 60").replace(
            "http://127.0.0.1:8080", stack.base_url)
        process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE)
        output = b""
        try:
            # The record as it is first; then the README's statement, then its change.
            for expect in (1, 2):
                while len(re.findall(rb"^data: .*\n\n", output, re.M)) < expect:
                    ready, _, _ = select.select([process.stdout], [], [], 30)
                    self.assertTrue(ready, f"event {expect} not within 30 s: {output!r}")
                    output += os.read(process.stdout.fileno(), 65536)
                if expect == 1:
                    stack.sql(statement)
                    changed = (newest_seq(new_id), by_hash(record_hash))
        finally:
            process.kill()
            process.wait()
            process.stdout.close()
        # Split on LF only, the stream is events of exactly two lines, the id and the JSON
        # (and the keep-alive comment, any time).
        events = re.findall(rb"id: ([0-9]+)\ndata: (.*)\n\n",
                            output.replace(b": ping\n\n", b""))
        self.assertEqual(b"".join(b"id: %s\ndata: %s\n\n" % event for event in events),
                         output.replace(b": ping\n\n", b""))
        self.assertEqual(len(events), 2, output)
        self.assertIn(b'"status":"Pending"', events[0][1])
        self.assertEqual((events[1][0].decode(), events[1][1]), changed)
        self.assertIn(b'"status":"Confirmed"', changed[1])

    def test_the_readme_long_poll_waits_for_the_change(self):
        """README.md's three long-poll commands, run as written (this stack's address, the first
        answer's after for <after>)."""
        readme = (REPO / "README.md").read_text()
        section = readme.split("## Following a transfer without EventSource", 1)[1]
        block = re.findall(r"```sh\n(.*?)\n```", section.split("\n## ", 1)[0], re.S)[0]
        first, second, third = [line.replace("curl -s", "curl -sS -m 60").replace(
            "http://127.0.0.1:8080", stack.base_url) for line in block.splitlines()]
        self.assertEqual(second, third)
        record_hash = re.search(r"hash=([0-9a-f]{64})'", first).group(1)
        history_id = readme_record(record_hash)
        wait_published(newest_seq(history_id))

        def run(command):
            return subprocess.run(["bash", "-c", command], capture_output=True, check=True,
                                  timeout=60).stdout

        now = json.loads(run(first))
        [state] = now["changes"]
        self.assertEqual(json.dumps(state["record"], separators=(",", ":")).encode(),
                         by_hash(record_hash))
        waiting = second.replace("<after>", now["after"])
        process = subprocess.Popen(["bash", "-c", waiting], stdout=subprocess.PIPE)
        try:
            time.sleep(1)
            self.assertIsNone(process.poll())  # waiting in nginx
            stack.sql(f"UPDATE history SET status_message = 'readme' WHERE id = {history_id}")
            changed = (newest_seq(history_id), by_hash(record_hash))
            output, _ = process.communicate(timeout=30)
        finally:
            process.kill()
            process.stdout.close()
        # nginx's wake-up, or the change itself when it was published before the worker's read.
        self.assertIn(output, (b'{"changes":[]}', change_list(changed)))
        wait_published(changed[0])
        self.assertEqual(run(third.replace("<after>", now["after"])), change_list(changed))

if __name__ == "__main__":
    unittest.main()
