"""Server-sent events (issue 25, docs/events.md): the real stack with the events drop-ins (nginx
with nchan), the worker publishing the change feed (sql/migrations/0006) to it, and subscribers
that read the raw EventSource stream the way a browser parses it (test_cors_browser.py has a real
Chromium): the record first, every change after it in order and exactly once, each event's data
the bytes /v1/history/hash answers at that moment and its id the change feed's seq; long-polls
the same. The publisher under faults: test_events_publisher.py; what clients send and run
(bad parameters, a browser, the typed client, the README's example): test_events_clients.py."""

import os
import re
import select
import subprocess
import unittest

import events_support
from events_support import (Poll, Subscriber, address_in_flight, by_hash, change_list,
                            goes_on_after, new_record, newest_seq, poll_changes,
                            poll_headers_are_the_apis, record_in_flight, wait_published)
from harness import quiet_window

stack = None


def setUpModule():
    global stack
    stack = events_support.start_stack()


def tearDownModule():
    stack.stop()


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
            quiet_window(1)
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
                quiet_window(1)  # nothing republished to the first for the second's sake
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
            quiet_window(1)
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
            quiet_window(1)
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
            quiet_window(1)
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


if __name__ == "__main__":
    unittest.main()
