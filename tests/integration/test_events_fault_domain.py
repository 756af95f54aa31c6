"""The live events in a fault domain of their own (issue 34, docs/events.md): the events nginx
(nchan, a master of its own) killed with SIGKILL, master and workers, under load. The API's
requests (/v1/networks, history pages) never fail; the event paths answer the API's JSON 503
while it is down; it comes back (as connector-events.service's Restart=always does, here
scripts/events-start); and subscribers that reconnect (Last-Event-ID, or a long-poll's after)
receive exactly the changes they missed, in order, each event an `id:` line and a `data:` line
ended by LF."""

import collections
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import unittest
from itertools import count

from fixture import Fixture
from harness import SCRIPTS, Stack, await_true, client_address

fixture = Fixture()
stack = None
_next_id = count(800001)
EVENT = re.compile(rb"id: ([0-9]+)\ndata: (\{[^\n]*\})\n\n")


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, events=True)


def tearDownModule():
    stack.stop()


def events_master():
    return int((stack.nginx_prefix / "events" / "nginx.pid").read_text())


def kill_events_nginx():
    """SIGKILL to the events nginx's workers and master at once: no clean shutdown."""
    master = events_master()
    with open(f"/proc/{master}/task/{master}/children") as children:
        pids = [int(pid) for pid in children.read().split()]
    for pid in [master, *pids]:
        subprocess.run(["kill", "-KILL", str(pid)], check=False)
    await_true(lambda: not _alive(master), what="the events nginx's master gone")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Follower:
    """A stream that reconnects by itself, as an EventSource does: after each end of an answer
    (its last chunk, a cut) it comes back after `retry` with the last id it had. It counts its
    answers: `agains` those that only said to come back shortly, `others` any but a 200 (which
    would end a browser's EventSource for good). Each body, split on LF only, must be events of
    exactly two lines, an id and the JSON (besides the retry line and the ping comment):
    anything else is kept in `malformed`."""

    AGAIN = b"retry: 3000\n: again shortly\n\n"

    def __init__(self, target, retry=0.3):
        self.target, self.retry = target, retry
        self.events, self.malformed, self.others = [], [], []
        self.answers = self.agains = 0
        self.opened = False
        self._stop = threading.Event()
        self._sock = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def ids(self):
        return [event[0] for event in self.events]

    def _run(self):
        while not self._stop.is_set():
            try:
                self._one()
            except OSError:
                pass
            self._stop.wait(self.retry)

    def _one(self):
        lines = [f"GET {self.target} HTTP/1.1", "Host: localhost", "Accept: text/event-stream"]
        if self.events:
            lines.append(f"Last-Event-ID: {self.events[-1][0]}")
        sock = socket.create_connection(("127.0.0.1", stack.port), timeout=120,
                                        source_address=(client_address(), 0))
        self._sock = sock
        data, taken = b"", 0
        with sock:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            while chunk := sock.recv(65536):
                data += chunk
                if b"\r\n\r\n" not in data:
                    continue
                if data.startswith(b"HTTP/1.1 200"):
                    self.opened = True
                    complete = list(EVENT.finditer(_body(data)))
                    self.events += [(m.group(1).decode(), m.group(2)) for m in complete[taken:]]
                    taken = len(complete)
                if _finished(data):
                    break
        self.answers += 1
        if not data.startswith(b"HTTP/1.1 200"):
            self.others.append(data[:200])
            return
        if data.split(b"\r\n\r\n", 1)[1].endswith(self.AGAIN) and not taken:
            self.agains += 1
        rest = EVENT.sub(b"", _body(data))
        if rest and not re.fullmatch(rb"(id: [0-9]+\n(data: [^\n]*)?)?", rest):
            self.malformed.append(rest)  # anything but an event cut short

    def stop(self):
        self._stop.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=10)


def _finished(answer):
    """Whether the answer (head and body so far) is complete: its last chunk came, or its
    Content-Length is there (the worker's own finite answers)."""
    head, body = answer.split(b"\r\n\r\n", 1)
    if b"transfer-encoding: chunked" in head.lower():
        return _dechunk(body)[1]
    length = re.search(rb"(?i)content-length: *([0-9]+)", head)
    return bool(length) and len(body) >= int(length.group(1))


def _body(answer):
    """An answer's body so far, de-chunked, less the worker's retry line and the pings."""
    head, body = answer.split(b"\r\n\r\n", 1)
    if b"transfer-encoding: chunked" in head.lower():
        body = _dechunk(body)[0]
    body = body.replace(b": ping\n\n", b"")
    return re.sub(rb"^retry: 3000\n(: again shortly\n\n)?", b"", body)


def _dechunk(body):
    """The data of a chunked body's complete chunks so far, and whether its last chunk came."""
    out = b""
    while b"\r\n" in body:
        size_line, rest = body.split(b"\r\n", 1)
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            return out, True
        if len(rest) < size + 2:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out, False


class ApiLoad:
    """Threads asking /v1/networks and history pages as fast as they are answered, each request
    from a client address of its own (the shipped per-client limits stay on); every status
    counted."""

    TARGETS = ["/v1/networks", "/v1/history?page_size=5", "/v1/history?page_size=20&status=Pending"]

    def __init__(self, threads=4):
        self.statuses = collections.Counter()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def _run(self, i):
        n = i
        while not self._stop.is_set():
            target = self.TARGETS[n % len(self.TARGETS)]
            n += 1
            # Not stack.get: its record of every answer (checked against docs/openapi.yaml at
            # the end) would grow by hundreds of megabytes here.
            connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=30,
                                                    source_address=(client_address(), 0))
            try:
                connection.request("GET", f"{target}{'&' if '?' in target else '?'}load={n}")
                response = connection.getresponse()
                response.read()
                status = response.status
            except OSError as e:
                status = repr(e)
            finally:
                connection.close()
            self.statuses[status] += 1

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        return self.statuses


def new_record(source_id):
    new_id = next(_next_id)
    new_hash = hashlib.sha256(f"fault-domain-{new_id}".encode()).hexdigest()
    stack.copy_history_row(source_id, new_id, new_hash)
    return new_id, new_hash


def seqs_of(history_id):
    return [row[0] for row in stack.sql(
        f"SELECT seq FROM history_changes WHERE history_id = {history_id} ORDER BY seq")]


def published(seq):
    await_true(lambda: (stack.worker_status()["events"]["cursor"] or 0) >= int(seq),
               what=f"the publisher past change {seq}")


class EventsNginxKilled(unittest.TestCase):
    def test_the_api_never_fails_and_subscribers_get_exactly_what_they_missed(self):
        with stack.tripwire.expecting(
                r"\[crit\] .*connect\(\) to unix:.*/events/subscribe\.sock failed \(2: No such file",
                "the events nginx restarting: its socket is removed, then made again"):
            self.kill_under_load()

    def assert_answers_while_down(self, record_hash, address):
        """A new stream is told to come back shortly; a long-poll with nothing to answer from
        the feed gets the API's JSON 503."""
        fresh = stack.get(f"/v1/history/hash/events?hash={record_hash}",
                          headers={"Accept": "text/event-stream"})
        self.assertEqual((fresh.status, fresh.body, fresh.headers.get("Content-Type")),
                         (200, Follower.AGAIN, "text/event-stream; charset=utf-8"))
        poll = stack.get(f"/v1/history/changes?address={address}&after=999999999")
        self.assertEqual((poll.status, poll.json()["error"]["code"],
                          poll.headers.get("Content-Type")),
                         (503, "unavailable", "application/json; charset=utf-8"))

    def restart_events_nginx(self):
        """What systemd does (Restart=always): the events nginx started again."""
        started = subprocess.run(
            [str(SCRIPTS / "events-start"), str(stack.nginx_prefix / "events")],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(started.returncode, 0, started.stderr)

    def kill_under_load(self):
        record_id, record_hash = new_record(4)
        stack.sql(f"UPDATE history SET status = 'Deposit' WHERE id = {record_id}")
        published(seqs_of(record_id)[-1])
        address = stack.sql(f"SELECT LOWER(source_deposit_address) FROM history "
                            f"WHERE id = {record_id}")[0][0]
        record = Follower(f"/v1/history/hash/events?hash={record_hash}")
        await_true(lambda: record.events, what="the record's state on its stream")
        by_address = Follower(f"/v1/history/events?address={address}")
        await_true(lambda: by_address.opened, what="the address's stream open")
        load = ApiLoad()
        try:
            statuses = ["Pending", "Confirmed"]
            stack.sql(f"UPDATE history SET status = '{statuses[0]}' WHERE id = {record_id}")
            await_true(lambda: len(record.events) >= 2 and by_address.events,
                       what="the first change on both streams, before the kill")
            answers = (record.answers, by_address.answers)
            kill_events_nginx()
            # While it is down: the changes go on; the streams end, and each comes back (after
            # the missed changes the worker answers from the feed) to be told to come back
            # shortly, never an error status (it would end a browser's EventSource); a new
            # stream is told the same, and a long-poll with nothing to answer from the feed
            # gets the API's JSON 503.
            stack.sql(f"UPDATE history SET status = '{statuses[1]}' WHERE id = {record_id}")
            second_id, _ = new_record(record_id)
            await_true(lambda: record.agains and by_address.agains,
                       what="both streams told to come back shortly")
            self.assertGreater(record.answers, answers[0])
            self.assertGreater(by_address.answers, answers[1])
            self.assert_answers_while_down(record_hash, address)
            self.restart_events_nginx()
            third_id, _ = new_record(record_id)
            expected_record = seqs_of(record_id)[1:]  # from the state when it subscribed
            expected_address = sorted(seqs_of(record_id) + seqs_of(second_id) +
                                      seqs_of(third_id), key=int)
            published(max(expected_address, key=int))
            await_true(lambda: [e[0] for e in record.events][-1:] == expected_record[-1:],
                       seconds=30, what=f"the record's changes ({record.events})")
            await_true(lambda: [e[0] for e in by_address.events][-1:] == expected_address[-1:],
                       seconds=30, what=f"the address's changes ({by_address.events})")
        finally:
            api = load.stop()
            record.stop()
            by_address.stop()
        # Not one API request failed, through the kill and the restart.
        self.assertEqual(set(api), {200}, api)
        self.assertGreater(api[200], 100)
        # Each subscriber: every change exactly once, in order, each event two clean lines.
        self.assertEqual([e[0] for e in record.events], expected_record)
        self.assertEqual([json.loads(e[1])["status"] for e in record.events],
                         ["Deposit", "Pending", "Confirmed"])
        self.assertEqual([e[0] for e in by_address.events],
                         [s for s in expected_address if int(s) > int(expected_record[0])])
        self.assertEqual((record.malformed, by_address.malformed), ([], []))
        self.assertEqual((record.others, by_address.others), ([], []))


class EventsNginxHung(unittest.TestCase):
    def test_the_api_answers_while_it_is_stopped_and_streams_resume(self):
        """The events nginx stopped (SIGSTOP: a hung process) while a stream is held and the
        API is under load: every API request is answered; once the publisher found it silent, a
        new stream is told to come back shortly at once (not held for the proxy's minute); once
        it runs again, the stream gets the change made meanwhile, once."""
        record_id, record_hash = new_record(4)
        published(seqs_of(record_id)[-1])
        follower = Follower(f"/v1/history/hash/events?hash={record_hash}")
        load = None
        master = events_master()
        with open(f"/proc/{master}/task/{master}/children") as children:
            processes = [master, *(int(pid) for pid in children.read().split())]
        try:
            await_true(lambda: follower.events, what="the record's state")
            load = ApiLoad()
            for pid in processes:
                os.kill(pid, signal.SIGSTOP)
            failures = stack.worker_status()["events"]["publish_failures"]
            stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {record_id}")
            await_true(lambda: stack.worker_status()["events"]["publish_failures"] > failures,
                       what="the publisher's request unanswered")
            fresh = stack.get(f"/v1/history/hash/events?hash={record_hash}",
                              headers={"Accept": "text/event-stream"})
            self.assertEqual((fresh.status, fresh.body), (200, Follower.AGAIN))
            api = load.stop()
            load = None
            for pid in processes:
                os.kill(pid, signal.SIGCONT)
            await_true(lambda: [e[0] for e in follower.events][-1:] == seqs_of(record_id)[-1:],
                       seconds=30, what=f"the change after the resume ({follower.events})")
        finally:
            for pid in processes:
                os.kill(pid, signal.SIGCONT)
            if load is not None:
                load.stop()
            follower.stop()
        self.assertEqual(set(api), {200}, api)
        self.assertGreater(api[200], 20)
        # Each change once, in order, the stream going on or coming back (nchan may end it as it
        # resumes; the worker then answers what it missed from the feed), never an error status.
        self.assertEqual(json.loads(follower.events[-1][1])["status"], "Pending")
        self.assertEqual(follower.ids(), seqs_of(record_id)[-2:])
        self.assertEqual((follower.others, follower.malformed), ([], []))


class ApiNginxReloaded(unittest.TestCase):
    def test_old_workers_close_held_streams_and_the_streams_come_back(self):
        """A reload of the API's nginx (what an operator does for a certificate): its old
        workers would hold the streams for ever (pings keep them open); worker_shutdown_timeout
        (connector-events-main.conf, 10 s) closes them, and the stream comes back, missing
        nothing."""
        record_id, record_hash = new_record(4)
        published(seqs_of(record_id)[-1])
        follower = Follower(f"/v1/history/hash/events?hash={record_hash}")
        try:
            await_true(lambda: follower.events, what="the record's state")
            master = stack.nginx_pid()
            with open(f"/proc/{master}/task/{master}/children") as children:
                old = [int(pid) for pid in children.read().split()]
            os.kill(master, signal.SIGHUP)
            await_true(lambda: not any(_alive(pid) for pid in old), seconds=30,
                       what="the old workers gone")
            await_true(lambda: follower.answers >= 1, what="the stream cut")
            stack.sql(f"UPDATE history SET status = 'Pending' WHERE id = {record_id}")
            expected = seqs_of(record_id)[-2:]
            await_true(lambda: [e[0] for e in follower.events] == expected,
                       what=f"the change after the reload ({follower.events})")
        finally:
            follower.stop()


if __name__ == "__main__":
    unittest.main()
