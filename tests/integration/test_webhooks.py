"""Signed webhooks (issue 37, docs/webhooks.md) end to end: connector-admin adds subscriptions,
connector-webhooks reads the change feed on the primary and delivers to a real HTTPS receiver
(webhook_receiver.py) that verifies every signature with the code docs/webhooks.md gives
exchanges. Retries, a lost acknowledgement, a slow receiver beside a fast one, a receiver down
and back, the address screen, TLS, redirects, the answer cap, and a replay; the takeover by
another node is test_webhooks_fleet."""

import json
import socket
import subprocess
import threading
import unittest

from fixture import Fixture
from harness import Stack, _os_user
from webhook_receiver import WebhookReceiver
from webhook_support import (Deliverer, add_subscription, new_record, queue_row,
                             record_changes, record_sql, set_status)
from waits import await_true

stack = receiver = deliverer = None
fixture = Fixture()
_next_id = [900000]


def setUpModule():
    global stack, receiver, deliverer
    try:
        stack = Stack(fixture=fixture.path, accounts=True)
        receiver = WebhookReceiver().start()
        # A delivery may take 20 s: the slow receiver below answers in 12.
        deliverer = Deliverer(stack, "a", ca_file=receiver.ca_file,
                              settings={"webhooks_timeout_ms": 20000}).start()
        deliverer.wait_holding()
    except BaseException:
        tearDownModule()  # unittest does not call it when this fails: nothing may outlive us
        raise


def tearDownModule():
    try:
        if deliverer is not None:
            assert deliverer.stop() == 0, deliverer.log_text()[-2000:]
    finally:
        if receiver is not None:
            receiver.stop()
        if stack is not None:
            stack.stop()


def fresh_id():
    _next_id[0] += 1
    return _next_id[0]


def recipient():
    return "0x" + f"{fresh_id():040x}"


def subscribe(path, recipients, statuses=None, url=None):
    ident, secret = add_subscription(stack, url or receiver.url(path), recipients, statuses)
    receiver.register(path, secret)
    return ident, secret


class Delivery(unittest.TestCase):
    def test_each_change_is_sent_signed_in_order_with_the_record_as_the_api_answers_it(self):
        to = recipient()
        ident, _ = subscribe("/hooks/order", [to])
        record_id = fresh_id()
        record_hash = new_record(stack, record_id, to, "Deposit")
        set_status(stack, record_id, "Pending")
        set_status(stack, record_id, "Confirmed")
        got = receiver.wait_deliveries(3, path="/hooks/order")
        changes = record_changes(stack, to, 0)
        self.assertEqual([(d["seq"], d["event"]) for d in got],
                         [(seq, f"transfer.{status.lower()}") for seq, _, status in changes])
        self.assertEqual([d["event_id"] for d in got], [f"{ident}-{seq}" for seq, _, _ in changes])
        self.assertEqual({(d["signature_ok"], d["attempt"], d["subscription"], d["record_hash"],
                           d["content_type"], d["user_agent"]) for d in got},
                         {(True, 1, ident, record_hash, "application/json",
                           "unit-connector-webhooks/1")})
        self.assertEqual(receiver.bad_signatures(), 0)
        # The last one carries the record as GET /v1/history/hash answers it now.
        answer = stack.get(f"/v1/history/hash?hash=0x{record_hash}")
        self.assertEqual(answer.status, 200)
        self.assertEqual(json.loads(got[-1]["body"])["record"], answer.json())
        await_true(lambda: queue_row(stack, ident)["delivered"] == "3", 10, what="3 stored")
        self.assertEqual(queue_row(stack, ident)["acked_seq"], str(changes[-1][0]))

    def test_only_the_statuses_asked_for_are_sent(self):
        to = recipient()
        subscribe("/hooks/final", [to], statuses="Confirmed,Error")
        record_id = fresh_id()
        new_record(stack, record_id, to, "Deposit")
        set_status(stack, record_id, "Pending")
        set_status(stack, record_id, "Error")
        # A later change it follows, sent after the others in seq order: once it is in, every
        # change before it has been judged.
        sentinel = fresh_id()
        new_record(stack, sentinel, to, "Confirmed")
        got = receiver.wait_deliveries(2, path="/hooks/final")
        self.assertEqual([d["event"] for d in got], ["transfer.error", "transfer.confirmed"])

    def test_a_refusal_is_retried_with_the_same_event_id_until_a_2xx(self):
        to = recipient()
        ident, _ = subscribe("/hooks/retry", [to])
        receiver.set_behaviour("/hooks/retry", status=503)
        record_id = fresh_id()
        new_record(stack, record_id, to)
        receiver.wait_deliveries(2, path="/hooks/retry", timeout=30)  # 1 s, then about 2 s
        receiver.set_behaviour("/hooks/retry", status=204)
        got = receiver.wait_deliveries(3, path="/hooks/retry", timeout=30)
        self.assertEqual([(d["attempt"], d["answer"]) for d in got[:3]],
                         [(1, 503), (2, 503), (3, 204)])
        self.assertEqual(len({d["event_id"] for d in got}), 1)
        await_true(lambda: queue_row(stack, ident)["delivered"] == "1", 10, what="stored")
        row = queue_row(stack, ident)
        self.assertEqual((row["attempt"], row["retried"], row["last_status"]), ("0", "2", "204"))

    def test_a_lost_acknowledgement_sends_the_change_again(self):
        to = recipient()
        subscribe("/hooks/drop", [to])
        receiver.set_behaviour("/hooks/drop", drop=True)
        new_record(stack, fresh_id(), to)
        receiver.wait_deliveries(1, path="/hooks/drop")
        receiver.set_behaviour("/hooks/drop")
        got = receiver.wait_deliveries(2, path="/hooks/drop", timeout=30)
        self.assertEqual(got[0]["event_id"], got[1]["event_id"])
        self.assertEqual([d["attempt"] for d in got[:2]], [1, 2])

    def test_a_slow_receiver_holds_only_its_own_subscription(self):
        slow, fast = recipient(), recipient()
        subscribe("/hooks/slow", [slow])
        subscribe("/hooks/fast", [fast])
        receiver.set_behaviour("/hooks/slow", delay=12)
        new_record(stack, fresh_id(), slow)
        slow_second = fresh_id()
        new_record(stack, slow_second, slow)
        fast_record = fresh_id()
        new_record(stack, fast_record, fast)
        for status in ("Pending", "Confirmed"):
            set_status(stack, fast_record, status)
        fast_got = receiver.wait_deliveries(3, path="/hooks/fast", timeout=10)
        # All three fast ones arrived while the slow receiver still held its first: its second
        # was not sent yet (one in flight per subscription).
        self.assertEqual(len(fast_got), 3)
        self.assertLessEqual(len(receiver.deliveries("/hooks/slow")), 1)
        receiver.set_behaviour("/hooks/slow")
        slow_got = receiver.wait_deliveries(2, path="/hooks/slow", timeout=40)
        self.assertLess(slow_got[0]["seq"], slow_got[1]["seq"])

    def test_a_receiver_down_gets_everything_in_order_when_it_is_back(self):
        to = recipient()
        # A receiver of its own (plain http: 127.0.0.1 is allow-listed), so the others keep
        # theirs.
        own = WebhookReceiver(tls=False).start()
        try:
            ident, secret = add_subscription(stack, own.url("/hooks/back"), [to])
            own.register("/hooks/back", secret)
            own.down()
            record_id = fresh_id()
            new_record(stack, record_id, to)
            for status in ("Pending", "Confirmed"):
                set_status(stack, record_id, status)
            await_true(lambda: int(queue_row(stack, ident)["retried"]) >= 2, 20,
                       what="attempts refused while down")
            self.assertEqual(queue_row(stack, ident)["last_status"], "connect-failed")
            own.up()
            got = own.wait_deliveries(3, path="/hooks/back", timeout=30)
            changes = record_changes(stack, to, 0)
            self.assertEqual([d["seq"] for d in got], [seq for seq, _, _ in changes])
        finally:
            own.stop()


class LateCommit(unittest.TestCase):
    def test_a_change_committed_after_a_later_one_is_still_delivered(self):
        # One writer's change takes its seq, and its transaction commits 4 s later; another
        # writer's change to another recipient of the same subscription commits at once with
        # the next seq. The deliverer passes over the first position after events_gap_wait_ms
        # (2 s), delivers the second, then finds the first when it commits: sent behind it.
        late_to, early_to = recipient(), recipient()
        ident, _ = subscribe("/hooks/late", [late_to, early_to])
        late_id, early_id = fresh_id(), fresh_id()
        writer = subprocess.Popen(
            ["mariadb", "--no-defaults", f"--socket={stack.db_socket}", "-u", _os_user(),
             "connector"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        writer.stdin.write("BEGIN; " + record_sql(late_id, late_to, "Pending") +
                           " SELECT SLEEP(4); COMMIT;\n")
        writer.stdin.flush()
        await_true(lambda: stack.sql("SELECT COUNT(*) FROM information_schema.innodb_trx")[0][0]
                   != "0", 10, what="the late writer's transaction open")
        new_record(stack, early_id, early_to)
        writer.stdin.close()
        self.assertEqual(writer.wait(30), 0)
        late = record_changes(stack, late_to, 0)[0][0]
        early = record_changes(stack, early_to, 0)[0][0]
        self.assertLess(late, early)
        got = receiver.wait_deliveries(2, path="/hooks/late", timeout=30)
        self.assertEqual([d["seq"] for d in got], [early, late])
        self.assertIn(f"found change {late}, committed after later ones", deliverer.log_text())
        await_true(lambda: int(queue_row(stack, ident)["acked_seq"]) >= early, 10,
                   what="the cursor past both, stored")


class Screen(unittest.TestCase):
    def test_a_name_that_resolves_to_loopback_is_refused_unless_allow_listed(self):
        # localhost is not in webhooks_allow_hosts (127.0.0.1 is): its address is screened
        # when the connection is opened, and nothing reaches the receiver.
        to = recipient()
        url = receiver.url("/hooks/screened").replace("127.0.0.1", "localhost")
        ident, _ = subscribe("/hooks/screened", [to], url=url)
        new_record(stack, fresh_id(), to)
        await_true(lambda: queue_row(stack, ident)["last_status"] == "refused-address", 15,
                   what="refused-address stored")
        self.assertEqual(receiver.deliveries("/hooks/screened"), [])

    def test_a_certificate_from_another_ca_fails_tls(self):
        other = WebhookReceiver().start()  # its own CA, which the deliverer does not trust
        try:
            to = recipient()
            ident, secret = add_subscription(stack, other.url("/hooks/tls"), [to])
            other.register("/hooks/tls", secret)
            new_record(stack, fresh_id(), to)
            await_true(lambda: queue_row(stack, ident)["last_status"] == "tls-failed", 15,
                       what="tls-failed stored")
            self.assertEqual(other.deliveries(), [])
        finally:
            other.stop()

    def test_a_redirect_is_not_followed(self):
        to = recipient()
        ident, _ = subscribe("/hooks/moved", [to])
        receiver.set_behaviour("/hooks/moved", status=302)
        new_record(stack, fresh_id(), to)
        await_true(lambda: int(queue_row(stack, ident)["retried"]) >= 1, 15, what="a failure")
        self.assertEqual(queue_row(stack, ident)["last_status"], "302")
        self.assertEqual({d["answer"] for d in receiver.deliveries("/hooks/moved")}, {302})
        self.assertEqual(stack.admin("webhook", "disable", str(ident)).returncode, 0)

    def test_a_long_answer_is_read_to_4_kib_only(self):
        # A plain-http receiver of our own (127.0.0.1 is allow-listed for http) that answers
        # 200 with 32 MiB (more than the two sockets' buffers hold): the deliverer stops reading
        # at 4 KiB, which the sender sees as the connection closed before it could send it all;
        # the 2xx still acknowledges.
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        outcome = {}

        def serve():
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(20)
                conn.recv(65536)
                size = 32 << 20
                answer = f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode() + b"x" * size
                try:
                    conn.sendall(answer)
                    outcome["sent"] = "all"
                except OSError as e:
                    outcome["sent"] = type(e).__name__

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        to = recipient()
        ident, _ = add_subscription(stack, f"http://127.0.0.1:{port}/hooks/long", [to])
        new_record(stack, fresh_id(), to)
        server.join(30)
        listener.close()
        self.assertIn(outcome.get("sent"), ("ConnectionResetError", "BrokenPipeError"))
        await_true(lambda: queue_row(stack, ident)["delivered"] == "1", 10, what="acknowledged")


class Replay(unittest.TestCase):
    def test_replay_sends_again_from_a_seq_with_the_same_event_ids(self):
        to = recipient()
        ident, _ = subscribe("/hooks/replay", [to])
        record_id = fresh_id()
        new_record(stack, record_id, to)
        set_status(stack, record_id, "Confirmed")
        first = receiver.wait_deliveries(2, path="/hooks/replay")
        await_true(lambda: queue_row(stack, ident)["delivered"] == "2", 10, what="stored")
        result = stack.admin("webhook", "replay", str(ident), "--since", str(first[0]["seq"]))
        self.assertEqual(result.returncode, 0, result.stderr)
        again = receiver.wait_deliveries(4, path="/hooks/replay", timeout=20)
        self.assertEqual([d["event_id"] for d in again[2:]], [d["event_id"] for d in first])
        await_true(lambda: queue_row(stack, ident)["replay_from_seq"] == "NULL", 10,
                   what="the replay applied and cleared")


class Metrics(unittest.TestCase):
    def test_the_holder_writes_each_subscriptions_figures_disabled_ones_included(self):
        to = recipient()
        ident, _ = subscribe("/hooks/metrics", [to])
        new_record(stack, fresh_id(), to)
        receiver.wait_deliveries(1, path="/hooks/metrics")
        # A disabled subscription whose changes the trim dropped (as the trim marks it).
        gone, _ = subscribe("/hooks/gone", [recipient()])
        self.assertEqual(stack.admin("webhook", "disable", str(gone)).returncode, 0)
        stack.sql(f"UPDATE webhook_queues SET lost_before_seq = 42 WHERE subscription_id = {gone}")

        def series():
            text = deliverer.metrics.read_text()
            return {line.split(" ")[0]: line.split(" ")[1] for line in text.splitlines()
                    if line and not line.startswith("#")}

        await_true(lambda: series().get(
            f'connector_webhook_lost_before_seq{{subscription="{gone}"}}') == "42", 15,
            what="the disabled subscription's loss mark in the metrics file")
        await_true(lambda: series().get(
            f'connector_webhook_delivered_total{{subscription="{ident}"}}') == "1", 15,
            what="its delivery counted")
        got = series()
        self.assertEqual(got["connector_webhook_deliverer_holding"], "1")
        self.assertEqual(got[f'connector_webhook_failing{{subscription="{ident}"}}'], "0")
        self.assertEqual(got[f'connector_webhook_lag_seconds{{subscription="{ident}"}}'], "0.000")


class Secrets(unittest.TestCase):
    def test_secrets_never_reach_the_log_the_metrics_or_the_list(self):
        to = recipient()
        ident, secret = subscribe("/hooks/secret", [to])
        new_record(stack, fresh_id(), to)
        receiver.wait_deliveries(1, path="/hooks/secret")
        await_true(lambda: f'subscription="{ident}"' in deliverer.metrics.read_text(), 10,
                   what="its metrics written")
        listing = stack.admin("webhook", "list")
        self.assertEqual(listing.returncode, 0, listing.stderr)
        for text in (deliverer.log_text(), deliverer.metrics.read_text(), listing.stdout,
                     listing.stderr):
            self.assertNotIn(secret, text)
            self.assertNotIn(secret[6:], text)


if __name__ == "__main__":
    unittest.main()
