"""What clients send to the events endpoints and run against them (issue 25, docs/events.md;
helpers in events_support.py): bad parameters as the usual JSON errors, nchan reached only
through the worker, CORS once per stream; Chromium's EventSource; the typed client's helpers;
the README's subscription and long-poll."""

import http.client
import http.server
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
from functools import partial
from pathlib import Path

import events_support
from events_support import (Subscriber, by_hash, change_list, hand_overs, new_record, newest_seq,
                            readme_record, record_in_flight, wait_published)
from harness import REPO, await_true, chromium_dom, quiet_window

stack = None


def setUpModule():
    global stack
    stack = events_support.start_stack()


def tearDownModule():
    stack.stop()


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

    def test_what_nchan_would_refuse_is_a_json_error_and_publishes_no_initial_state(self):
        """nchan answers a stream without text/event-stream in Accept, or with a WebSocket's
        Upgrade, with a bare 403, and answers no HEAD at all: the worker answers them first,
        and asks the publisher for no record's state for them."""
        # A record of the fixture that nothing has changed or followed: its channel is empty,
        # so a subscriber nchan holds makes the publisher publish its state.
        row = stack.sql("SELECT id, hash FROM history WHERE id < 700000 ORDER BY id DESC LIMIT 1")
        record_hash = row[0][1]
        targets = (f"/v1/history/hash/events?hash={record_hash}",
                   f"/v1/history/events?address=0x{'a' * 40}")
        initial_states = stack.worker_status()["events"]["snapshots_published"]
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
        self.assertEqual(stack.worker_status()["events"]["snapshots_published"], initial_states)
        # The stream nchan holds gets the record first, published for it.
        subscriber = Subscriber(targets[0])
        try:
            self.assertEqual(subscriber.wait_events(1)[0][1], by_hash(record_hash))
            self.assertEqual(stack.worker_status()["events"]["snapshots_published"],
                             initial_states + 1)
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
            self.reload_the_events_nginx(mode)
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

    def reload_the_events_nginx(self, mode):
        """nginx -s reload of the events nginx, under the helper; returns once it is done: its
        old workers, and the helper's connection with them, gone. A stream then comes back,
        after the seq it has: handed over again, nothing having changed since (waited for too).
        A poll comes back the same way, but the test's shortened long-polls (3 s) come back on
        their own too, so no request tells that one apart."""
        master = int((stack.nginx_prefix / "events" / "nginx.pid").read_text())
        old, handed_over = nginx_workers(master), hand_overs()
        os.kill(master, signal.SIGHUP)
        await_true(lambda: not nginx_workers(master) & old, 30,
                   what="the events nginx's old workers gone")
        if mode == "stream":
            await_true(lambda: hand_overs() > handed_over, 30,
                       what="the helper's stream handed over again")

    def test_follow_events_yields_each_change_once_across_a_reconnection(self):
        handovers = hand_overs()
        self.follow("stream", 4)
        # It did come back (its first stream, then at least one more: the worker's answer of
        # the change it missed, if the change came first, and the stream after that).
        self.assertGreaterEqual(hand_overs() - handovers, 2)

    def test_poll_changes_yields_each_change_once_across_a_reload(self):
        self.follow("poll", 6)


def nginx_workers(master):
    """The pids of the nginx master's children (its workers)."""
    return set(Path(f"/proc/{master}/task/{master}/children").read_text().split())


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
            quiet_window(1)
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
