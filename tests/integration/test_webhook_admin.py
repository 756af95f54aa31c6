"""The operator's webhook commands (`connector-admin webhook ...`, src/admin/webhook_commands.cpp)
against a real MariaDB: add prints the secret once and stores exactly it in <db>_secrets, list
never shows it, disable/enable/remove/replay change exactly the rows they name, wrong usage is
status 2 and a refusal status 1, each one line; and the deliverer's account (connector_webhooks)
may do what sql/accounts-webhooks.sql.in grants and nothing more. The feed's trim:
test_webhook_trim.py."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from fixture import Fixture
from harness import ADMIN, WEBHOOKS_PASSWORD, WEBHOOKS_USER, Stack

stack = None
fixture = Fixture()
A = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE"  # EIP-55
B = "0x" + "ab" * 20
SECRET_NOTICE = ("This secret is not shown again: give it to the receiver now (it checks every "
                 "delivery's Connector-Signature with it).")
QUEUE = ("acked_seq, attempt, retrying_since_us, failing_since_us, lost_before_seq, "
         "replay_from_seq, delivered, retried, last_status, last_attempt_us")


def setUpModule():
    global stack
    # accounts: the deliverer's account exists (scripts/db-accounts), as in production.
    stack = Stack(fixture=fixture.path, accounts=True)


def tearDownModule():
    stack.stop()


def admin(*args):
    return subprocess.run([str(ADMIN), *map(str, args)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=stack._env())


def webhook(*args, config=None):
    """`connector-admin --config FILE webhook ARGS`, FILE the stack's admin config (the
    'connector' account, as root would be in production: admin.conf.example)."""
    return admin("--config", config or stack.admin_config_path, "webhook", *args)


def feed_end():
    return int(stack.sql("SELECT COALESCE(MAX(seq), 0) FROM history_changes")[0][0])


def rows_of(subscription):
    """Everything stored for a subscription, in both databases."""
    where = f"WHERE subscription_id = {subscription}"
    return {
        "subscription": stack.sql("SELECT url, statuses, enabled FROM webhook_subscriptions "
                                  f"WHERE id = {subscription}"),
        "addresses": stack.sql(f"SELECT address FROM webhook_addresses {where} ORDER BY address"),
        "queue": stack.sql(f"SELECT {QUEUE} FROM webhook_queues {where}"),
        "secret": stack.sql(f"SELECT secret FROM connector_secrets.webhook_secrets {where}"),
    }


def everything():
    """Every webhook row of both databases, for "nothing else changed"."""
    return [stack.sql(f"SELECT * FROM {table} ORDER BY 1, 2") for table in (
        "webhook_subscriptions", "webhook_addresses", "webhook_queues", "webhook_lease",
        "connector_secrets.webhook_secrets")]


def add(*args):
    """Runs `webhook add`; returns (id, secret) once its output is checked line by line."""
    result = webhook("add", *args)
    assert result.returncode == 0 and result.stderr == "", result
    first, secret, notice = result.stdout.splitlines()
    assert notice == SECRET_NOTICE, result.stdout
    match = re.fullmatch(r"subscription (\d+) added: .*", first)
    assert match and secret.startswith("secret whsec_"), result.stdout
    return int(match.group(1)), secret[len("secret "):]


def listed(subscription):
    """The `webhook list` line of the subscription, as its columns."""
    result = webhook("list")
    assert result.returncode == 0 and result.stderr == "", result
    lines = [line.split() for line in result.stdout.splitlines()]
    return next(line for line in lines[1:] if line[0] == str(subscription))


class Commands(unittest.TestCase):
    def test_add_prints_the_secret_once_and_list_never_shows_it(self):
        end = feed_end()
        result = webhook("add", "--url", "HTTPS://Hooks.Example/connector?x=1", "--recipient", A,
                         "--recipient", B.upper().replace("0X", "0x"), "--statuses",
                         "confirmed, Deposit")
        self.assertEqual((result.returncode, result.stderr), (0, ""), result)
        first, secret_line, notice = result.stdout.splitlines()
        subscription = int(re.fullmatch(r"subscription (\d+) added: .*", first).group(1))
        self.assertEqual(first, f"subscription {subscription} added: "
                         "https://hooks.example/connector?x=1, 2 addresses, statuses "
                         f"Deposit,Confirmed, the changes after seq {end}")
        self.assertRegex(secret_line, r"^secret whsec_[0-9a-f]{64}$")
        self.assertEqual(notice, SECRET_NOTICE)
        secret = secret_line[len("secret "):]
        self.assertEqual(rows_of(subscription), {
            "subscription": [["https://hooks.example/connector?x=1", "Deposit,Confirmed", "1"]],
            "addresses": [[A.lower()], [B]],
            "queue": [[str(end), "0", "NULL", "NULL", "0", "NULL", "0", "0", "NULL", "NULL"]],
            "secret": [[secret]]})
        shown = webhook("list")
        self.assertEqual((shown.returncode, shown.stderr), (0, ""))
        self.assertNotIn("whsec_", shown.stdout)
        self.assertNotIn(secret[len("whsec_"):], shown.stdout)
        self.assertEqual(shown.stdout.splitlines()[0].split(), [
            "id", "enabled", "statuses", "addresses", "acked_seq", "lag", "delivered", "retried",
            "failing_since", "lost_before_seq", "replay_from", "last_status", "last_attempt",
            "url"])
        self.assertEqual(listed(subscription), [
            str(subscription), "yes", "Deposit,Confirmed", "2", str(end), "0", "0", "0", "-",
            "0", "-", "-", "-", "https://hooks.example/connector?x=1"])

    def test_list_shows_the_queue_as_the_deliverer_leaves_it(self):
        subscription, _ = add("--url", "https://list.example/", "--recipient", A)
        end = feed_end()
        stack.sql("UPDATE webhook_queues SET acked_seq = 1, delivered = 41, retried = 7, "
                  "failing_since_us = 1714564800123456, lost_before_seq = 3, "
                  "last_status = 'timeout', last_attempt_us = 1714568400000000 "
                  f"WHERE subscription_id = {subscription}")
        self.assertEqual(listed(subscription), [
            str(subscription), "yes", "Deposit,Pending,Confirmed,Error", "1", "1", str(end - 1),
            "41", "7", "2024-05-01T12:00:00Z", "3", "-", "timeout", "2024-05-01T13:00:00Z",
            "https://list.example/"])

    def test_an_address_file_one_a_line(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "recipients.txt"
            path.write_text(f"# the exchange's hot wallets\r\n{A}\r\n\n  {B}  # cold\n"
                            f"{A.lower()}\n")
            subscription, _ = add("--url", "https://file.example/", "--addresses", path)
            self.assertEqual(rows_of(subscription)["addresses"], [[A.lower()], [B]])
            before = everything()
            path.write_text(f"{A}\n\n# next\n0x1234\n")
            self.assert_refused(["add", "--url", "https://file.example/", "--addresses", path], 1,
                                f"connector-admin webhook add: {path}, line 4: '0x1234' is not "
                                "an address (0x and 40 hex digits); nothing written")
            path.write_text("# nobody yet\n")
            self.assert_refused(["add", "--url", "https://file.example/", "--addresses", path], 1,
                                f"connector-admin webhook add: {path}, no address in it; "
                                "nothing written")
            path.write_text("#" * (8 << 20) + "\n")
            self.assert_refused(["add", "--url", "https://file.example/", "--addresses", path], 1,
                                f"connector-admin webhook add: {path} is larger than 8 MiB, the "
                                "most an --addresses file may be")
            self.assertEqual(everything(), before)

    def test_http_only_to_an_allow_listed_host(self):
        with tempfile.TemporaryDirectory() as scratch:
            config = Path(scratch) / "admin.conf"
            config.write_text(Path(stack.admin_config_path).read_text() +
                              "webhooks_allow_hosts = other.test, Receiver.Test\n")
            config.chmod(0o600)
            result = webhook("add", "--url", "http://receiver.test:8080/h", "--recipient", A,
                             config=config)
            self.assertEqual((result.returncode, result.stderr), (0, ""), result)
            subscription = int(result.stdout.split()[1])
            self.assertEqual(rows_of(subscription)["subscription"],
                             [["http://receiver.test:8080/h", "Deposit,Pending,Confirmed,Error",
                               "1"]])
        self.assert_refused(["add", "--url", "http://receiver.test:8080/h", "--recipient", A], 2,
                            "connector-admin webhook add: --url refused: http to a host not in "
                            "webhooks_allow_hosts; use https (see connector-admin webhook add "
                            "--help)")

    def test_disable_and_enable_change_that_flag_only(self):
        subscription, _ = add("--url", "https://toggle.example/", "--recipient", A)
        other, _ = add("--url", "https://other.example/", "--recipient", A)
        before, other_rows = rows_of(subscription), rows_of(other)
        for command, output, enabled in (
                ("disable", f"subscription {subscription} disabled", "0"),
                ("disable", f"subscription {subscription} was already disabled", "0"),
                ("enable", f"subscription {subscription} enabled", "1"),
                ("enable", f"subscription {subscription} was already enabled", "1")):
            result = webhook(command, subscription)
            self.assertEqual((result.returncode, result.stdout, result.stderr),
                             (0, output + "\n", ""), command)
            expected = dict(before, subscription=[before["subscription"][0][:2] + [enabled]])
            self.assertEqual(rows_of(subscription), expected, command)
            self.assertEqual(rows_of(other), other_rows)

    def test_remove_deletes_its_rows_in_both_databases(self):
        subscription, _ = add("--url", "https://remove.example/", "--recipient", A,
                              "--recipient", B)
        other, _ = add("--url", "https://stays.example/", "--recipient", A)
        other_rows = rows_of(other)
        result = webhook("remove", subscription)
        self.assertEqual((result.returncode, result.stdout, result.stderr), (
            0, f"subscription {subscription} removed, with its addresses, queue and secret\n", ""))
        self.assertEqual(rows_of(subscription),
                         {"subscription": [], "addresses": [], "queue": [], "secret": []})
        self.assertEqual(rows_of(other), other_rows)
        self.assert_refused(["remove", subscription], 1,
                            f"connector-admin webhook remove: no subscription {subscription}")

    def test_replay_from_a_seq_still_in_the_feed(self):
        subscription, _ = add("--url", "https://replay.example/", "--recipient", A)
        stack.sql("UPDATE webhook_queues SET lost_before_seq = 5 "
                  f"WHERE subscription_id = {subscription}")
        # The feed's first change trimmed, so that one before the oldest is a seq at all.
        stack.sql("DELETE FROM history_changes ORDER BY seq LIMIT 1")
        oldest, newest = map(int, stack.sql("SELECT MIN(seq), MAX(seq) FROM history_changes")[0])
        self.assertGreater(newest, oldest + 1)
        # Its cursor at the oldest change: a replay may go back, not past the cursor's next.
        stack.sql(f"UPDATE webhook_queues SET acked_seq = {oldest} "
                  f"WHERE subscription_id = {subscription}")
        before = rows_of(subscription)
        for since, line in (
                (oldest - 1, f"seq {oldest - 1} is no longer in the change feed: its oldest "
                             f"change is seq {oldest}"),
                (newest + 1, f"seq {newest + 1} is past the newest change of the feed, seq "
                             f"{newest}"),
                (oldest + 2, f"seq {oldest + 2} is ahead of the subscription's cursor, seq "
                             f"{oldest}: a replay goes back (forward, it would skip changes not "
                             "sent)")):
            self.assert_refused(["replay", subscription, "--since", since], 1,
                                f"connector-admin webhook replay: {line}")
        self.assertEqual(rows_of(subscription), before)
        result = webhook("replay", subscription, "--since", oldest)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertEqual(result.stdout, f"subscription {subscription}: the changes it follows "
                         f"from seq {oldest} on are sent again (the deliverer starts at its next "
                         "round); lost_before_seq cleared\n")
        queue = before["queue"][0]
        queue[4:6] = ["0", str(oldest)]  # lost_before_seq, replay_from_seq
        self.assertEqual(rows_of(subscription), dict(before, queue=[queue]))
        self.assertEqual(listed(subscription)[9:11], ["0", str(oldest)])

    def assert_refused(self, args, status, line):
        before = everything()
        result = webhook(*args)
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (status, "", line + "\n"), args)
        self.assertEqual(everything(), before, args)


class Usage(unittest.TestCase):
    def test_wrong_usage_is_status_2_with_one_line(self):
        see = " (see connector-admin webhook {} --help)"
        cases = [
            (["bogus"], "connector-admin webhook: unknown command 'bogus' (see connector-admin "
             "webhook --help)"),
            ([], "connector-admin webhook: needs a command (see connector-admin webhook --help)"),
            (["add", "--recipient", A], "connector-admin webhook add: needs --url URL" +
             see.format("add")),
            (["add", "--url", "https://x.example/"], "connector-admin webhook add: needs "
             "--addresses FILE or --recipient ADDR" + see.format("add")),
            (["add", "--url", "https://x.example/", "--addresses", "f", "--recipient", A],
             "connector-admin webhook add: --addresses and --recipient exclude each other" +
             see.format("add")),
            (["add", "--url", "https://x.example/", "--url", "https://y.example/", "--recipient",
              A], "connector-admin webhook add: --url is given twice" + see.format("add")),
            (["add", "--url", "https://x.example/", "--recipient", "0x1"], "connector-admin "
             "webhook add: --recipient: '0x1' is not an address (0x and 40 hex digits)" +
             see.format("add")),
            (["add", "--url", "https://x.example/", "--recipient", A.replace("E4", "e4")],
             "connector-admin webhook add: --recipient: '" + A.replace("E4", "e4") + "' is in "
             "mixed case but not its EIP-55 checksum (" + A + "): a typo?" + see.format("add")),
            (["add", "--url", "https://x.example/", "--recipient", A, "--statuses", "Refunded"],
             "connector-admin webhook add: --statuses: unknown status 'Refunded' (the statuses: "
             "Deposit,Pending,Confirmed,Error)" + see.format("add")),
            (["add", "--url", "ftp://x.example/", "--recipient", A], "connector-admin webhook "
             "add: --url refused: only https (or http to an allow-listed host)" +
             see.format("add")),
            (["list", "extra"], "connector-admin webhook list: takes no arguments besides its "
             "options" + see.format("list")),
            (["disable", "x"], "connector-admin webhook disable: ID must be a whole number, got "
             "'x'" + see.format("disable")),
            (["enable"], "connector-admin webhook enable: needs exactly one argument" +
             see.format("enable")),
            (["replay", "1"], "connector-admin webhook replay: needs --since SEQ" +
             see.format("replay")),
            (["replay", "1", "--since", "0"], "connector-admin webhook replay: --since must be "
             "at least 1" + see.format("replay")),
        ]
        for args, line in cases:
            with self.subTest(args=args):
                before = everything()
                result = webhook(*args)
                self.assertEqual((result.returncode, result.stdout, result.stderr),
                                 (2, "", line + "\n"))
                self.assertEqual(everything(), before)

    def test_a_subscription_that_is_not_there_is_status_1(self):
        for command, args in (("disable", []), ("enable", []), ("remove", []),
                              ("replay", ["--since", "1"])):
            result = webhook(command, 999999, *args)
            self.assertEqual((result.returncode, result.stdout, result.stderr), (
                1, "", f"connector-admin webhook {command}: no subscription 999999\n"))

    def test_every_command_has_its_help(self):
        for command in ("add", "list", "disable", "enable", "remove", "replay"):
            for args in (["webhook", command, "--help"], ["help", "webhook", command]):
                result = admin(*args)
                self.assertEqual((result.returncode, result.stderr), (0, ""), args)
                self.assertTrue(result.stdout.startswith(
                    f"usage: connector-admin [--config FILE] webhook {command}"), result.stdout)
        group = admin("webhook", "--help")
        self.assertEqual(group.returncode, 0)
        self.assertIn("  connector-admin [--config FILE] webhook replay ID --since SEQ\n",
                      group.stdout)


class DelivererAccount(unittest.TestCase):
    """connector_webhooks (sql/accounts-webhooks.sql.in): reads the service database and the
    secrets, writes the queues and the lease, and nothing else."""

    def run_as_deliverer(self, statement):
        return stack.sql_as(WEBHOOKS_USER, WEBHOOKS_PASSWORD, statement)

    def test_it_reads_subscriptions_and_their_secrets(self):
        subscription, secret = add("--url", "https://deliverer.example/", "--recipient", A)
        result = self.run_as_deliverer(
            "SELECT s.url, a.address, q.acked_seq, k.secret FROM webhook_subscriptions s "
            "JOIN webhook_addresses a ON a.subscription_id = s.id "
            "JOIN webhook_queues q ON q.subscription_id = s.id "
            "JOIN connector_secrets.webhook_secrets k ON k.subscription_id = s.id "
            f"WHERE s.id = {subscription}")
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertEqual(result.stdout,
                         f"https://deliverer.example/\t{A.lower()}\t{feed_end()}\t{secret}\n")

    def test_it_writes_its_queues_and_the_lease(self):
        subscription, _ = add("--url", "https://deliverer.example/", "--recipient", A)
        for statement in (
                "UPDATE webhook_queues SET delivered = delivered + 1, last_status = '200' "
                f"WHERE subscription_id = {subscription}",
                "UPDATE webhook_lease SET holder = 'test 1', token = token + 1 WHERE id = 1"):
            result = self.run_as_deliverer(statement)
            self.assertEqual((result.returncode, result.stderr), (0, ""), statement)
        self.assertEqual(stack.sql("SELECT delivered, last_status FROM webhook_queues "
                                   f"WHERE subscription_id = {subscription}"), [["1", "200"]])
        self.assertEqual(stack.sql("SELECT holder FROM webhook_lease"), [["test 1"]])

    def test_it_can_do_nothing_else(self):
        subscription, _ = add("--url", "https://deliverer.example/", "--recipient", A)
        before = everything()
        who = f"'{WEBHOOKS_USER}'@'localhost'"
        for command, table, statement in (
                ("UPDATE", "webhook_subscriptions", "UPDATE webhook_subscriptions SET enabled = 0"),
                ("INSERT", "webhook_subscriptions",
                 "INSERT INTO webhook_subscriptions (url, statuses) "
                 "VALUES ('https://x/', 'Error')"),
                ("DELETE", "webhook_subscriptions", "DELETE FROM webhook_subscriptions"),
                ("INSERT", "webhook_addresses",
                 f"INSERT INTO webhook_addresses VALUES ({subscription}, '{B}')"),
                ("DELETE", "webhook_addresses", "DELETE FROM webhook_addresses"),
                ("UPDATE", "webhook_addresses", "UPDATE webhook_addresses SET address = address"),
                ("INSERT", "webhook_queues",
                 "INSERT INTO webhook_queues (subscription_id, acked_seq) VALUES (999999, 0)"),
                ("DELETE", "webhook_queues", "DELETE FROM webhook_queues"),
                ("INSERT", "webhook_lease", "INSERT INTO webhook_lease (id) VALUES (2)"),
                ("DELETE", "webhook_lease", "DELETE FROM webhook_lease"),
                ("INSERT", "history", "INSERT INTO history () VALUES ()"),
                ("UPDATE", "history", "UPDATE history SET status = 'Confirmed'"),
                ("DELETE", "history_changes", "DELETE FROM history_changes"),
                ("CREATE", "extra", "CREATE TABLE extra (a INT)")):
            self.assertEqual(error_line(self.run_as_deliverer(statement)),
                             f"ERROR 1142 (42000) at line 1: {command} command denied to user "
                             f"{who} for table `connector`.`{table}`", statement)
        secrets = "for table `connector_secrets`.`webhook_secrets`"
        for command, statement in (
                ("UPDATE", "UPDATE connector_secrets.webhook_secrets SET secret = 'x'"),
                ("INSERT", "INSERT INTO connector_secrets.webhook_secrets VALUES (999999, 'x')"),
                ("DELETE", "DELETE FROM connector_secrets.webhook_secrets")):
            self.assertEqual(error_line(self.run_as_deliverer(statement)),
                             f"ERROR 1142 (42000) at line 1: {command} command denied to user "
                             f"{who} {secrets}", statement)
        self.assertEqual(error_line(self.run_as_deliverer("CALL history_changes_trim_now()")),
                         "ERROR 1370 (42000) at line 1: execute command denied to user "
                         f"{who} for routine 'connector.history_changes_trim_now'")
        self.assertEqual(everything(), before)


def error_line(result):
    """The client's ERROR line of a failed statement ("" if it did not fail)."""
    if result.returncode == 0:
        return ""
    return next((line for line in result.stderr.splitlines() if line.startswith("ERROR")),
                result.stderr)
