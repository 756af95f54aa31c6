"""The schema and the code agree (db/schema_enums.h): every ENUM and SET column and routine
parameter of the migrated schema has the values the code knows for it, in the same order, and the
code knows no ENUM or SET the schema lacks. A status the code has no value for is a 500 with the
one error body, never a read past an array."""

import hashlib
import json
import re
import subprocess
import unittest

from fixture import Fixture
from harness import BUILD_DIR, Stack

stack = None
fixture = Fixture()
DUMP = BUILD_DIR / "tests" / "schema-enums-dump"


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=2)


def tearDownModule():
    stack.stop()


def enum_values(column_type):
    """["a", "b"] from "enum('a','b')" or "set('a','b')" (no value of this schema holds a
    quote)."""
    match = re.fullmatch(r"(?:enum|set)\((.*)\)", column_type)
    assert match, column_type
    return re.findall(r"'([^']*)'", match.group(1))


class Schema(unittest.TestCase):
    def test_every_enum_of_the_schema_matches_the_code(self):
        columns = stack.sql(
            "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = 'connector' AND DATA_TYPE IN ('enum', 'set')")
        parameters = stack.sql(
            "SELECT SPECIFIC_NAME, PARAMETER_NAME, DTD_IDENTIFIER FROM "
            "information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = 'connector' "
            "AND DATA_TYPE IN ('enum', 'set')")
        schema = {(table, column): enum_values(column_type)
                  for table, column, column_type in columns + parameters}
        dump = json.loads(subprocess.run([str(DUMP)], capture_output=True, check=True,
                                         text=True, timeout=30).stdout)
        code = {(e["table"], e["column"]): e["values"] for e in dump}
        self.assertEqual(len(code), len(dump), "a column listed twice in db/schema_enums.h")
        self.assertEqual(schema, code)
        # The table is not vacuous: the statuses read as indexes are there.
        self.assertEqual(code[("history", "status")], ["Deposit", "Pending", "Confirmed", "Error"])
        self.assertEqual(code[("chain_status", "status")], ["OK", "STUCK", "OFFLINE", "SYNCING"])
        self.assertEqual(schema[("webhook_subscriptions", "statuses")],
                         ["Deposit", "Pending", "Confirmed", "Error"])

    def test_a_status_the_code_does_not_know_is_a_500_error(self):
        # MariaDB stores a value outside an ENUM as index 0 when not in strict mode: the record
        # then holds a status no C++ value names.
        record_id = 990001
        record_hash = hashlib.sha256(b"schema-test").hexdigest()
        stack.copy_history_row(fixture.history[0]["id"], record_id, record_hash)
        stack.sql(f"SET SESSION sql_mode = ''; "
                  f"UPDATE history SET status = 'Refunded' WHERE id = {record_id}")
        self.assertEqual(stack.sql(f"SELECT status + 0 FROM history WHERE id = {record_id}"),
                         [["0"]])
        answer = stack.get(f"/v1/history/hash?hash={record_hash}")
        self.assertEqual((answer.status, answer.json()["error"]["code"]), (500, "internal"))
        self.assertIn("ENUM index 0", stack.worker_log_text())
        # The worker goes on: the other records are answered.
        self.assertEqual(stack.get(f"/v1/history/hash?hash={fixture.history[0]['hash']}").status,
                         200)
        stack.sql(f"DELETE FROM history WHERE id = {record_id}")


if __name__ == "__main__":
    unittest.main()
