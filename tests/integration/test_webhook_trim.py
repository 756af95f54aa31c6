"""The change feed's trim with webhook subscriptions (sql/migrations/0008: the procedure
history_changes_trim_now(), which the event history_changes_trim calls every minute): a day of
changes is kept, and what an enabled subscription has not acknowledged up to 7 days; past that a
change goes anyway, and every subscription (enabled or not) that followed it and had not
acknowledged it gets lost_before_seq, exactly. The feed is built here with old changed_us."""

import unittest

from harness import Stack, await_true

stack = None
event_at_start = None
A = "0x52d9e4ccc9c769f131b6ef0c3729e5d0cd52defe"
B = "0x" + "ab" * 20
C = "0x" + "cd" * 20
DAY_S = 86400
HOUR_S = 3600


def setUpModule():
    global stack, event_at_start
    stack = Stack()  # an empty database: the feed is made by the tests
    event_at_start = stack.sql(
        "SELECT STATUS, INTERVAL_VALUE, INTERVAL_FIELD, EVENT_DEFINITION FROM "
        "information_schema.EVENTS WHERE EVENT_SCHEMA = 'connector' "
        "AND EVENT_NAME = 'history_changes_trim'")
    # The tests trim when they mean to: the event off, and no round of it still running.
    stack.sql("ALTER EVENT history_changes_trim DISABLE")
    await_true(lambda: stack.sql(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() "
        "AND info LIKE '%history_changes_trim_now%'") == [["0"]], 60, what="the event's round")


def tearDownModule():
    stack.stop()


def feed(*changes):
    """Appends changes (age in seconds, destination address, status) to the feed, oldest
    first; returns their seqs."""
    values = ", ".join(f"(1, UNIX_TIMESTAMP() * 1000000 - {age_s} * 1000000, 'h', '{address}', "
                       f"'{status}')" for age_s, address, status in changes)
    stack.sql("INSERT INTO history_changes (history_id, changed_us, hash, destination_address, "
              f"status) VALUES {values}")
    return [int(row[0]) for row in stack.sql(
        f"SELECT seq FROM history_changes ORDER BY seq DESC LIMIT {len(changes)}")][::-1]


def subscription(addresses, statuses="Deposit,Pending,Confirmed,Error", acked_seq=0,
                 enabled=True, replay_from_seq="NULL", lost_before_seq=0):
    stack.sql("INSERT INTO webhook_subscriptions (url, statuses, enabled) VALUES "
              f"('https://trim.example/', '{statuses}', {int(enabled)})")
    (number,), = stack.sql("SELECT MAX(id) FROM webhook_subscriptions")
    stack.sql("INSERT INTO webhook_addresses VALUES " +
              ", ".join(f"({number}, '{address}')" for address in addresses))
    stack.sql("INSERT INTO webhook_queues (subscription_id, acked_seq, replay_from_seq, "
              f"lost_before_seq) VALUES ({number}, {acked_seq}, {replay_from_seq}, "
              f"{lost_before_seq})")
    return int(number)


def trim():
    stack.sql("CALL history_changes_trim_now()")


def remaining():
    return [int(row[0]) for row in stack.sql("SELECT seq FROM history_changes ORDER BY seq")]


def lost():
    """lost_before_seq of every subscription, by id."""
    return {int(i): int(seq) for i, seq in stack.sql(
        "SELECT subscription_id, lost_before_seq FROM webhook_queues")}


class Trim(unittest.TestCase):
    def setUp(self):
        stack.sql("DELETE FROM webhook_subscriptions; DELETE FROM history_changes")

    def test_without_subscriptions_a_day_is_kept(self):
        seqs = feed((3 * DAY_S, A, "Deposit"), (25 * HOUR_S, B, "Pending"),
                    (23 * HOUR_S, A, "Confirmed"), (0, B, "Error"))
        trim()
        self.assertEqual(remaining(), seqs[2:])
        trim()
        self.assertEqual(remaining(), seqs[2:])

    def test_an_enabled_subscription_holds_what_it_has_not_acknowledged(self):
        seqs = feed((6 * DAY_S, A, "Deposit"), (3 * DAY_S, B, "Pending"),
                    (2 * DAY_S, A, "Confirmed"), (0, A, "Deposit"))
        held = subscription([A], acked_seq=seqs[0])
        subscription([C], acked_seq=seqs[3])  # caught up: holds nothing
        trim()
        # What it acknowledged goes; the rest is held, the change it does not follow too (the
        # feed stays one range of seq).
        self.assertEqual(remaining(), seqs[1:])
        self.assertEqual(set(lost().values()), {0})
        stack.sql(f"UPDATE webhook_queues SET acked_seq = {seqs[2]} WHERE subscription_id = {held}")
        trim()
        self.assertEqual(remaining(), seqs[3:])
        self.assertEqual(set(lost().values()), {0})

    def test_past_7_days_each_subscription_that_followed_a_change_is_marked(self):
        seqs = feed((9 * DAY_S, A, "Deposit"), (8 * DAY_S + HOUR_S, B, "Confirmed"),
                    (8 * DAY_S, A, "Confirmed"), (3 * DAY_S, A, "Pending"), (0, A, "Deposit"))
        follows_a = subscription([A], lost_before_seq=1)
        pending_of_b = subscription([B, C], statuses="Pending")
        disabled = subscription([A, B], statuses="Confirmed", enabled=False)
        caught_up = subscription([A, B], acked_seq=seqs[2], lost_before_seq=seqs[4] + 7)
        trim()
        # The cursors at 0 hold the feed, a week at most: the two changes past 8 days go.
        self.assertEqual(remaining(), seqs[3:])
        self.assertEqual(lost(), {follows_a: seqs[2], pending_of_b: 0, disabled: seqs[2],
                                  caught_up: seqs[4] + 7})
        trim()
        self.assertEqual(remaining(), seqs[3:])

    def test_a_disabled_subscription_holds_nothing_and_its_loss_is_marked(self):
        seqs = feed((2 * DAY_S + HOUR_S, A, "Deposit"), (2 * DAY_S, B, "Deposit"),
                    (0, A, "Deposit"))
        disabled = subscription([B], acked_seq=0, enabled=False)
        other = subscription([C], acked_seq=0, enabled=False)
        trim()
        self.assertEqual(remaining(), seqs[2:])
        self.assertEqual(lost(), {disabled: seqs[1], other: 0})

    def test_a_replay_not_yet_applied_holds_from_its_seq(self):
        seqs = feed((2 * DAY_S + 2 * HOUR_S, A, "Deposit"), (2 * DAY_S + HOUR_S, A, "Deposit"),
                    (2 * DAY_S, A, "Deposit"), (0, A, "Deposit"))
        replaying = subscription([A], acked_seq=seqs[3], replay_from_seq=seqs[1])
        trim()
        self.assertEqual(remaining(), seqs[1:])
        self.assertEqual(lost(), {replaying: 0})

    def test_a_round_deletes_at_most_100000_changes(self):
        # Two days old, a microsecond apart, in seq order (MariaDB's sequence engine).
        stack.sql("INSERT INTO history_changes (history_id, changed_us, hash, "
                  "destination_address, status) SELECT seq, UNIX_TIMESTAMP() * 1000000 - "
                  f"{2 * DAY_S} * 1000000 - (100004 - seq), 'h', '{A}', 'Deposit' "
                  "FROM seq_1_to_100003")
        seqs = remaining()
        self.assertEqual(len(seqs), 100003)
        disabled = subscription([A], enabled=False)
        trim()
        self.assertEqual(remaining(), seqs[100000:])
        self.assertEqual(lost(), {disabled: seqs[99999]})
        trim()
        self.assertEqual(remaining(), [])
        self.assertEqual(lost(), {disabled: seqs[-1]})

    def test_nothing_is_trimmed_where_the_server_is_read_only(self):
        seqs = feed((9 * DAY_S, A, "Deposit"), (0, A, "Deposit"))
        disabled = subscription([A], enabled=False)
        stack.sql("SET GLOBAL read_only = 1")
        try:
            trim()
        finally:
            stack.sql("SET GLOBAL read_only = 0")
        self.assertEqual(remaining(), seqs)
        self.assertEqual(lost(), {disabled: 0})

    def test_the_event_calls_the_procedure_every_minute(self):
        (status, value, field, definition), = event_at_start
        self.assertEqual((status, value, field), ("ENABLED", "1", "MINUTE"))
        self.assertIn("CALL history_changes_trim_now();", definition)
        self.assertIn("SET SESSION innodb_lock_wait_timeout = 1;", definition)


if __name__ == "__main__":
    unittest.main()
