"""Database least privilege (scripts/db-accounts, sql/accounts.sql.in and
sql/accounts-webhooks.sql.in): the whole service works through nginx with the worker reading as
connector_reader (SELECT on the database) and writing as connector_writer (SELECT and INSERT on
deposit_accounts); the reader can change nothing, the writer can read no other table and change
no recorded mapping, neither can read the webhooks' secrets database; SHOW GRANTS of each
account, the webhook deliverer's connector_webhooks included, is exactly what the templates
say. What connector_webhooks may do with its grants: test_webhook_admin.py."""

import hashlib
import subprocess
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import (ACCOUNTS_ENV, READ_PASSWORD, READ_USER, SCRIPTS, WEBHOOKS_PASSWORD,
                     WEBHOOKS_USER, WRITE_PASSWORD, WRITE_USER, Stack)

stack = None
fixture = Fixture()
HOSTS = ("localhost", "127.0.0.1")
RECIPIENT = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE"


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, accounts=True, db_port=0)


def tearDownModule():
    stack.stop()


def password_hash(password):
    """MariaDB's mysql_native_password hash, as SHOW GRANTS prints it."""
    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()


def expected_grants(user, host, password):
    """SHOW GRANTS of the account, sorted (the server lists table grants in no fixed order)."""
    usage = f"GRANT USAGE ON *.* TO `{user}`@`{host}` IDENTIFIED BY PASSWORD '{password_hash(password)}'"
    to = f"TO `{user}`@`{host}`"
    if user == READ_USER:
        return sorted([usage, f"GRANT SELECT ON `connector`.* {to}"])
    if user == WEBHOOKS_USER:
        return sorted([usage, f"GRANT SELECT ON `connector`.* {to}",
                       f"GRANT UPDATE ON `connector`.`webhook_queues` {to}",
                       f"GRANT UPDATE ON `connector`.`webhook_lease` {to}",
                       f"GRANT SELECT ON `connector_secrets`.`webhook_secrets` {to}"])
    return sorted([usage, f"GRANT SELECT, INSERT ON `connector`.`deposit_accounts` {to}"])


def grants(user, host):
    return sorted(row[0] for row in stack.sql(f"SHOW GRANTS FOR '{user}'@'{host}'"))


def error_line(result):
    """The client's ERROR line of a failed statement ("" if it did not fail)."""
    if result.returncode == 0:
        return ""
    return next((line for line in result.stderr.splitlines() if line.startswith("ERROR")),
                result.stderr)


def tables():
    return [row[0] for row in stack.sql("SHOW TABLES")]


def first_column(table):
    return stack.sql("SELECT column_name FROM information_schema.columns WHERE "
                     f"table_schema = 'connector' AND table_name = '{table}' "
                     "AND ordinal_position = 1")[0][0]


def checksums():
    """Every table's checksum but the replication heartbeat's, which the primary's event
    rewrites every second (sql/migrations/0005)."""
    return stack.sql("CHECKSUM TABLE " + ", ".join(t for t in tables()
                                                   if t != "replication_heartbeat"))


def worker_accounts():
    """The accounts of the worker's live connections (everything on the database but ours)."""
    return {row[0] for row in stack.sql(
        "SELECT DISTINCT user FROM information_schema.processlist "
        "WHERE db = 'connector' AND id <> CONNECTION_ID()")}


def account(recipient, recipient_blockchain="unitiot", deposit_blockchain="unitcore"):
    return stack.get("/v1/account?" + urlencode({
        "recipient_address": recipient, "recipient_blockchain": recipient_blockchain,
        "deposit_blockchain": deposit_blockchain}))


def recorded(address):
    return stack.sql("SELECT c.slug, a.deposit_address, r.slug, a.recipient_address "
                     "FROM deposit_accounts a JOIN chains c ON c.id = a.deposit_chain "
                     "JOIN chains r ON r.id = a.recipient_chain "
                     f"WHERE a.deposit_address = '{address}'")


def db_accounts(*args, without=(), **env):
    """scripts/db-accounts with the stack's passwords, `env` over them, `without` left out."""
    passwords = {k: v for k, v in {**ACCOUNTS_ENV, **env}.items() if k not in without}
    return subprocess.run([str(SCRIPTS / "db-accounts"), "--socket", str(stack.db_socket), *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env=stack._env(passwords))


def refused_on_the_secrets(run_as, user):
    """What the account gets for each way into the webhooks' secrets database."""
    who = f"'{user}'@'localhost'"
    table = "for table `connector_secrets`.`webhook_secrets`"
    return {statement: (error_line(run_as(statement)), error) for statement, error in (
        ("SELECT * FROM connector_secrets.webhook_secrets",
         f"ERROR 1142 (42000) at line 1: SELECT command denied to user {who} {table}"),
        ("SELECT COUNT(*) FROM connector_secrets.webhook_secrets",
         f"ERROR 1142 (42000) at line 1: SELECT command denied to user {who} {table}"),
        ("UPDATE connector_secrets.webhook_secrets SET secret = 'x'",
         f"ERROR 1142 (42000) at line 1: UPDATE command denied to user {who} {table}"),
        ("USE connector_secrets",
         f"ERROR 1044 (42000) at line 1: Access denied for user {who} to database "
         "'connector_secrets'"),
        ("SHOW TABLES FROM connector_secrets",
         f"ERROR 1044 (42000) at line 1: Access denied for user {who} to database "
         "'connector_secrets'"))}


class ServiceWithLeastPrivilege(unittest.TestCase):
    def test_every_endpoint_answers_through_nginx(self):
        h0 = fixture.history[0]
        answers = {target: stack.get(target) for target in (
            "/v1/networks", "/v1/connects", "/v1/pairs", "/v1/ab", "/v1/history?page_size=100",
            f"/v1/history/hash?hash={h0['hash']}",
            "/v1/history?status=pending&order=ASC&page_size=3")}
        self.assertEqual({t: r.status for t, r in answers.items()}, {t: 200 for t in answers})
        self.assertEqual(answers["/v1/history?page_size=100"].json()["list"], fixture.records())
        self.assertEqual(answers[f"/v1/history/hash?hash={h0['hash']}"].json(),
                         fixture.record(h0, with_status_message=True))
        self.assertEqual(answers["/v1/networks"].json()["networks"],
                         [fixture.network("unitcore"), fixture.network("unitiot")])
        self.assertEqual(len(answers["/v1/ab"].json()["chains"]), 2)
        r = account(RECIPIENT)
        self.assertEqual(r.status, 200, r)
        # The worker holds connections as exactly the two service accounts, never 'connector'.
        self.assertEqual(worker_accounts(), {READ_USER, WRITE_USER})

    def test_account_records_the_mapping_once_with_select_and_insert_only(self):
        recipient = "0x" + "44" * 20
        first = account(recipient)
        self.assertEqual(first.status, 200, first)
        deposit = first.json()["deposit_address"]
        self.assertEqual(recorded(deposit), [["unitcore", deposit, "unitiot", recipient]])
        again = account(recipient)  # the row exists: read back, nothing else needed
        self.assertEqual((again.status, again.json()["deposit_address"]), (200, deposit))
        self.assertEqual(recorded(deposit), [["unitcore", deposit, "unitiot", recipient]])
        other = account(RECIPIENT, recipient_blockchain="unitcore", deposit_blockchain="unitiot")
        self.assertEqual(other.status, 200, other)
        self.assertEqual(recorded(other.json()["deposit_address"]),
                         [["unitiot", other.json()["deposit_address"], "unitcore", RECIPIENT]])


class Reader(unittest.TestCase):
    def run_as_reader(self, statement, tcp=False):
        return stack.sql_as(READ_USER, READ_PASSWORD, statement, tcp=tcp)

    def test_reader_can_select_every_table(self):
        for table in tables():
            result = self.run_as_reader(f"SELECT COUNT(*) FROM `{table}`")
            self.assertEqual(result.returncode, 0, (table, result.stderr))
        self.assertEqual(self.run_as_reader("SELECT COUNT(*) FROM history").stdout.strip(),
                         str(len(fixture.history)))

    def test_reader_cannot_insert_update_or_delete_anything(self):
        before = checksums()
        self.assertIn("history", tables())
        self.assertIn("deposit_accounts", tables())
        for table in tables():
            column = first_column(table)
            for command, statement in (
                    ("INSERT", f"INSERT INTO `{table}` () VALUES ()"),
                    ("INSERT", f"INSERT INTO `{table}` SELECT * FROM `{table}`"),
                    ("UPDATE", f"UPDATE `{table}` SET `{column}` = `{column}`"),
                    ("DELETE", f"DELETE FROM `{table}`"),
                    ("INSERT, DELETE", f"REPLACE INTO `{table}` SELECT * FROM `{table}`"),
                    ("DROP", f"TRUNCATE TABLE `{table}`"),
                    ("DROP", f"DROP TABLE `{table}`"),
                    ("ALTER", f"ALTER TABLE `{table}` ADD COLUMN extra INT")):
                self.assertEqual(
                    error_line(self.run_as_reader(statement)),
                    f"ERROR 1142 (42000) at line 1: {command} command denied to user "
                    f"'{READ_USER}'@'localhost' for table `connector`.`{table}`", statement)
        self.assertEqual(checksums(), before)

    def test_reader_cannot_create_grant_or_reach_other_databases(self):
        who = f"'{READ_USER}'@'localhost'"
        for statement, error in (
                ("CREATE TABLE extra (a INT)",
                 f"ERROR 1142 (42000) at line 1: CREATE command denied to user {who} "
                 "for table `connector`.`extra`"),
                ("CREATE TEMPORARY TABLE extra (a INT)",
                 f"ERROR 1044 (42000) at line 1: Access denied for user {who} "
                 "to database 'connector'"),
                ("LOCK TABLES history WRITE",
                 f"ERROR 1044 (42000) at line 1: Access denied for user {who} "
                 "to database 'connector'"),
                ("DROP DATABASE connector",
                 f"ERROR 1044 (42000) at line 1: Access denied for user {who} "
                 "to database 'connector'"),
                (f"GRANT INSERT ON connector.* TO '{READ_USER}'@'localhost'",
                 f"ERROR 1044 (42000) at line 1: Access denied for user {who} "
                 "to database 'connector'"),
                ("SELECT * FROM mysql.user",
                 f"ERROR 1142 (42000) at line 1: SELECT command denied to user {who} "
                 "for table `mysql`.`user`"),
                ("SELECT id FROM history INTO OUTFILE '/tmp/connector-reader-outfile'",
                 "ERROR 1227 (42000) at line 1: Access denied; you need (at least one of) "
                 "the FILE privilege(s) for this operation")):
            self.assertEqual(error_line(self.run_as_reader(statement)), error, statement)

    def test_reader_cannot_read_the_webhook_secrets(self):
        # A secret there, so that a refusal is not an empty table.
        stack.sql("INSERT INTO connector_secrets.webhook_secrets VALUES (424242, 'whsec_x')")
        try:
            for statement, (got, error) in refused_on_the_secrets(self.run_as_reader,
                                                                  READ_USER).items():
                self.assertEqual(got, error, statement)
        finally:
            stack.sql("DELETE FROM connector_secrets.webhook_secrets "
                      "WHERE subscription_id = 424242")

    def test_same_over_loopback_tcp(self):
        who = self.run_as_reader("SELECT CURRENT_USER()", tcp=True)
        self.assertEqual(who.returncode, 0, who.stderr)
        self.assertIn(who.stdout.strip(), {f"{READ_USER}@{host}" for host in HOSTS})
        self.assertRegex(error_line(self.run_as_reader("DELETE FROM history", tcp=True)),
                         r"^ERROR 1142 \(42000\) at line 1: DELETE command denied to user "
                         rf"'{READ_USER}'@'(localhost|127\.0\.0\.1)' for table "
                         r"`connector`.`history`$")


class Writer(unittest.TestCase):
    def run_as_writer(self, statement):
        return stack.sql_as(WRITE_USER, WRITE_PASSWORD, statement)

    def test_writer_reads_only_deposit_accounts(self):
        result = self.run_as_writer("SELECT COUNT(*) > 0 FROM deposit_accounts")
        self.assertEqual((result.returncode, result.stdout), (0, "1\n"), result.stderr)
        for table in tables():
            if table == "deposit_accounts":
                continue
            self.assertEqual(
                error_line(self.run_as_writer(f"SELECT * FROM `{table}` LIMIT 1")),
                f"ERROR 1142 (42000) at line 1: SELECT command denied to user "
                f"'{WRITE_USER}'@'localhost' for table `connector`.`{table}`", table)

    def test_writer_cannot_change_or_delete_mappings_nor_write_elsewhere(self):
        account(RECIPIENT)
        before = checksums()
        who = f"'{WRITE_USER}'@'localhost'"
        for command, table, statement in (
                ("UPDATE", "deposit_accounts", "UPDATE deposit_accounts SET recipient_address = "
                 "'0x0000000000000000000000000000000000000000'"),
                ("DELETE", "deposit_accounts", "DELETE FROM deposit_accounts"),
                ("DROP", "deposit_accounts", "TRUNCATE TABLE deposit_accounts"),
                # Upserts need UPDATE or DELETE; only the plain insert-if-absent is allowed.
                ("UPDATE", "deposit_accounts",
                 "INSERT INTO deposit_accounts (deposit_chain, deposit_address, recipient_chain, "
                 "recipient_address) VALUES (1, '0x" + "55" * 20 + "', 2, '0x" + "66" * 20
                 + "') ON DUPLICATE KEY UPDATE recipient_address = VALUES(recipient_address)"),
                ("DELETE", "deposit_accounts",
                 "REPLACE INTO deposit_accounts (deposit_chain, deposit_address, recipient_chain, "
                 "recipient_address) VALUES (1, '0x" + "55" * 20 + "', 2, '0x" + "66" * 20 + "')"),
                ("INSERT", "history", "INSERT INTO history () VALUES ()"),
                ("UPDATE", "history", "UPDATE history SET status = 'Confirmed'"),
                ("DELETE", "history", "DELETE FROM history"),
                ("INSERT", "chains", "INSERT INTO chains () VALUES ()")):
            self.assertEqual(
                error_line(self.run_as_writer(statement)),
                f"ERROR 1142 (42000) at line 1: {command} command denied to user {who} "
                f"for table `connector`.`{table}`", statement)
        self.assertEqual(checksums(), before)

    def test_writer_cannot_read_the_webhook_secrets(self):
        for statement, (got, error) in refused_on_the_secrets(self.run_as_writer,
                                                              WRITE_USER).items():
            self.assertEqual(got, error, statement)

    def test_writer_can_insert_if_absent(self):
        chains = dict(stack.sql("SELECT slug, id FROM chains"))
        address = "0x" + "77" * 20
        statement = ("INSERT IGNORE INTO deposit_accounts (deposit_chain, deposit_address, "
                     f"recipient_chain, recipient_address) VALUES ({chains['unitcore']}, "
                     f"'{address}', {chains['unitiot']}, '{RECIPIENT}')")
        for _ in range(2):
            result = self.run_as_writer(statement)
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(recorded(address), [["unitcore", address, "unitiot", RECIPIENT]])


class Grants(unittest.TestCase):
    def assert_exact(self):
        for host in HOSTS:
            for user, password in ((READ_USER, READ_PASSWORD), (WRITE_USER, WRITE_PASSWORD),
                                   (WEBHOOKS_USER, WEBHOOKS_PASSWORD)):
                self.assertEqual(grants(user, host), expected_grants(user, host, password))

    def test_show_grants_is_exactly_the_documented_list(self):
        self.assert_exact()
        self.assertEqual(sorted(stack.sql(
            "SELECT user, host FROM mysql.user WHERE user LIKE 'connector\\_%'")),
            sorted([[user, host] for user in (READ_USER, WRITE_USER, WEBHOOKS_USER)
                    for host in HOSTS]))

    def test_rerun_changes_nothing_and_exact_revokes_extras(self):
        result = db_accounts()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_exact()
        stack.sql(f"GRANT UPDATE ON connector.history TO '{READ_USER}'@'localhost'")
        try:
            self.assertEqual(db_accounts().returncode, 0)
            self.assertIn(f"GRANT UPDATE ON `connector`.`history` TO `{READ_USER}`@`localhost`",
                          grants(READ_USER, "localhost"))  # plain reruns only add
            result = db_accounts("--exact")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("other privileges revoked", result.stdout)
        finally:
            db_accounts("--exact")
        self.assert_exact()
        self.assertEqual(stack.get("/v1/history?page_size=1").status, 200)
        self.assertEqual(account(RECIPIENT).status, 200)

    def test_the_webhooks_account_is_left_alone_without_its_password(self):
        extra = f"GRANT INSERT ON `connector`.`history` TO `{WEBHOOKS_USER}`@`localhost`"
        stack.sql(f"GRANT INSERT ON connector.history TO '{WEBHOOKS_USER}'@'localhost'")
        try:
            result = db_accounts("--exact", without=["CONNECTOR_DB_WEBHOOKS_PASSWORD"])
            self.assertEqual((result.returncode, result.stderr), (0, ""))
            self.assertEqual(result.stdout, "db-accounts: connector_reader (SELECT on "
                             "connector.*) and connector_writer (SELECT, INSERT on "
                             "connector.deposit_accounts) ready, other privileges revoked\n")
            self.assertIn(extra, grants(WEBHOOKS_USER, "localhost"))  # not touched
            result = db_accounts("--exact")
            self.assertEqual((result.returncode, result.stderr), (0, ""))
            self.assertEqual(result.stdout, "db-accounts: connector_reader (SELECT on "
                             "connector.*), connector_writer (SELECT, INSERT on "
                             "connector.deposit_accounts) and connector_webhooks (SELECT on "
                             "connector.* and connector_secrets.webhook_secrets, UPDATE on "
                             "connector.webhook_queues and connector.webhook_lease) ready, "
                             "other privileges revoked\n")
        finally:
            db_accounts("--exact")
        self.assert_exact()

    def test_an_empty_webhooks_password_is_refused(self):
        result = db_accounts(CONNECTOR_DB_WEBHOOKS_PASSWORD="")
        self.assertEqual((result.returncode, result.stderr),
                         (2, "db-accounts: CONNECTOR_DB_WEBHOOKS_PASSWORD is set but empty\n"))
        self.assert_exact()

    def test_rerun_with_new_passwords_changes_them(self):
        try:
            result = db_accounts(CONNECTOR_DB_READ_PASSWORD="new-read 'pass\\word&|",
                                 CONNECTOR_DB_WRITE_PASSWORD="new-write")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(grants(READ_USER, "localhost"),
                             expected_grants(READ_USER, "localhost", "new-read 'pass\\word&|"))
            old = stack.sql_as(READ_USER, READ_PASSWORD, "SELECT 1")
            self.assertRegex(error_line(old), r"^ERROR 1045 \(28000\): Access denied for user "
                                              rf"'{READ_USER}'@'localhost'")
            new = stack.sql_as(READ_USER, "new-read 'pass\\word&|", "SELECT 1")
            self.assertEqual((new.returncode, new.stdout), (0, "1\n"), new.stderr)
        finally:
            self.assertEqual(db_accounts().returncode, 0)
        self.assert_exact()

    def test_script_never_invents_passwords(self):
        env = {k: v for k, v in stack._env().items() if not k.startswith("CONNECTOR_DB_")}
        result = subprocess.run([str(SCRIPTS / "db-accounts"), "--socket", str(stack.db_socket)],
                                capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL, env=env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("set CONNECTOR_DB_READ_PASSWORD and CONNECTOR_DB_WRITE_PASSWORD",
                      result.stderr)

    def test_script_refuses_a_database_without_the_schema(self):
        result = db_accounts("--database", "no_such_db")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr,
                         "db-accounts: no table no_such_db.deposit_accounts: run scripts/migrate "
                         "first\n")
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM mysql.db WHERE db = 'no_such_db'"),
                         [["0"]])


if __name__ == "__main__":
    unittest.main()
