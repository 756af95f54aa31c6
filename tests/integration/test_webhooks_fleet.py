"""The webhook deliverers of a fleet (issue 37, docs/webhooks.md "One deliverer per fleet"):
two connector-webhooks processes, as on two nodes, share the lease on the primary; one
delivers. The holder SIGKILLed in the middle of deliveries: the other takes over within the
lease and a poll, and every change reaches the receiver (a repeat only where an acknowledgement
was not stored). The holder hung (SIGSTOP) past its lease: the other takes over, and the old
one, continued, stores nothing over its successor's cursors (the token fences it) and steps
down. The primary hung (SIGSTOP) past the lease, or restarted, under them: delivery resumes by
itself."""

import os
import signal
import time
import unittest

from fixture import Fixture
from harness import Stack
from waits import await_true, hang, pace
from webhook_receiver import WebhookReceiver
from webhook_support import (LEASE_MS, Deliverer, add_subscription, new_record, queue_row,
                             record_changes, set_status)

stack = receiver = None
fixture = Fixture()
_next_id = [800000]


def setUpModule():
    global stack, receiver
    try:
        stack = Stack(fixture=fixture.path, accounts=True)
        receiver = WebhookReceiver().start()
    except BaseException:
        tearDownModule()  # unittest does not call it when this fails
        raise


def tearDownModule():
    try:
        if receiver is not None:
            receiver.stop()
    finally:
        if stack is not None:
            stack.stop()


def fresh_id():
    _next_id[0] += 1
    return _next_id[0]


def pair(test):
    """Two deliverers, the first holding the lease; both stopped when the test ends."""
    first = Deliverer(stack, f"{test.id().rsplit('.', 1)[-1][:20]}-1", ca_file=receiver.ca_file)
    second = Deliverer(stack, f"{test.id().rsplit('.', 1)[-1][:20]}-2", ca_file=receiver.ca_file)
    first.start()
    test.addCleanup(first.stop_checked, test)
    first.wait_holding()
    second.start()
    test.addCleanup(second.stop_checked, test)
    return first, second


def first_receipts(deliveries):
    """seq of each event id's first receipt, in receipt order; and how many were repeats."""
    seen, order = set(), []
    for d in deliveries:
        if d["event_id"] not in seen:
            seen.add(d["event_id"])
            order.append(d["seq"])
    return order, len(deliveries) - len(order)


class Takeover(unittest.TestCase):
    def test_the_holder_killed_mid_delivery_is_replaced_and_nothing_is_lost(self):
        first, second = pair(self)
        to = "0x" + f"{fresh_id():040x}"
        ident, secret = add_subscription(stack, receiver.url("/fleet/kill"), [to])
        receiver.register("/fleet/kill", secret)
        # Slow answers keep a delivery in flight when the holder dies.
        receiver.set_behaviour("/fleet/kill", delay=0.3)
        records = [fresh_id() for _ in range(4)]
        for record_id in records:
            new_record(stack, record_id, to)
        receiver.wait_deliveries(1, path="/fleet/kill")
        killed_at = time.time()
        first.kill(signal.SIGKILL)
        for record_id in records:
            set_status(stack, record_id, "Confirmed")
        second.wait_holding(timeout=LEASE_MS / 1000 + 15)
        changes = record_changes(stack, to, 0)
        await_true(lambda: len(first_receipts(receiver.deliveries("/fleet/kill"))[0]) ==
                   len(changes), 60, what="every change received")
        got = receiver.deliveries("/fleet/kill")
        order, _ = first_receipts(got)
        self.assertEqual(order, [seq for seq, _, _ in changes])
        # A repeat is only of a change the killed holder had sent (its acknowledgement not
        # stored, or in flight): the successor sends each change once.
        first_seen = {}
        for d in got:
            first_seen.setdefault(d["event_id"], d["time"])
        repeated = [e for e in first_seen if sum(d["event_id"] == e for d in got) > 1]
        self.assertEqual([e for e in repeated if first_seen[e] > killed_at], [])
        self.assertEqual(receiver.bad_signatures(), 0)
        self.assertEqual(second.stop(), 0)
        receiver.set_behaviour("/fleet/kill")

    def test_a_hung_holder_is_replaced_and_cannot_move_the_cursors_back(self):
        first, second = pair(self)
        to = "0x" + f"{fresh_id():040x}"
        ident, secret = add_subscription(stack, receiver.url("/fleet/hang"), [to])
        receiver.register("/fleet/hang", secret)
        record_id = fresh_id()
        new_record(stack, record_id, to)
        receiver.wait_deliveries(1, path="/fleet/hang")
        hang(first.process.pid)
        try:
            set_status(stack, record_id, "Pending")
            second.wait_holding(timeout=LEASE_MS / 1000 + 15)
            receiver.wait_deliveries(2, path="/fleet/hang")
            set_status(stack, record_id, "Confirmed")
            receiver.wait_deliveries(3, path="/fleet/hang")
            await_true(lambda: queue_row(stack, ident)["delivered"] == "3", 10, what="stored")
            acked = queue_row(stack, ident)["acked_seq"]
        finally:
            first.kill(signal.SIGCONT)
        await_true(lambda: "lost the lease" in first.log_text(), 15,
                   what="the old holder steps down")
        self.assertEqual(queue_row(stack, ident)["acked_seq"], acked)
        self.assertTrue(second.holds_lease())
        self.assertEqual(first.stop(), 0)

    def test_delivery_resumes_by_itself_after_the_primary_hangs(self):
        first, second = pair(self)
        to = "0x" + f"{fresh_id():040x}"
        ident, secret = add_subscription(stack, receiver.url("/fleet/hung"), [to])
        receiver.register("/fleet/hung", secret)
        primary = int((stack.db_dir / "mysqld.pid").read_text())
        hang(primary)
        try:
            # Longer than the lease: neither deliverer can renew it meanwhile.
            pace(LEASE_MS / 1000 * 2)
        finally:
            os.kill(primary, signal.SIGCONT)
        record_id = fresh_id()
        new_record(stack, record_id, to)
        got = receiver.wait_deliveries(1, path="/fleet/hung", timeout=40)
        self.assertEqual(got[0]["seq"], record_changes(stack, to, 0)[0][0])
        self.assertIsNone(first.process.poll())
        self.assertIsNone(second.process.poll())

    def test_delivery_resumes_by_itself_after_the_primary_restarts(self):
        first, _ = pair(self)
        to = "0x" + f"{fresh_id():040x}"
        ident, secret = add_subscription(stack, receiver.url("/fleet/restart"), [to])
        receiver.register("/fleet/restart", secret)
        stack.stop_mariadb()
        stack.start_mariadb()
        record_id = fresh_id()
        new_record(stack, record_id, to)
        got = receiver.wait_deliveries(1, path="/fleet/restart", timeout=40)
        self.assertEqual(got[0]["seq"], record_changes(stack, to, 0)[0][0])
        await_true(lambda: "runs again" in first.log_text(), 20, what="it says it recovered")


if __name__ == "__main__":
    unittest.main()
