"""History at scale: every filter shape of /v1/history is served from an index in both orders
(the plans MariaDB really ran, captured from its general log and EXPLAINed: no filesort, no full
scan of history), and totals from the trigger-kept counters equal a real COUNT(*) after bulk
inserts, status changes and deletes.

The plans are checked with stale statistics: InnoDB's persistent statistics say history is empty
(as after a bulk load, a restored backup or a replica built from a dump), which made MariaDB
plan a full scan before the access paths were forced (db/history_statements.h)."""

import re
import time
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import Stack, endpoint_params

stack = None
fixture = Fixture()
GENERATED = 20000


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)
    result = stack.admin("gen-history", GENERATED, "--seed", "11")
    assert result.returncode == 0, result.stderr
    make_statistics_stale()


def make_statistics_stale():
    """Statistics that say history is empty while it holds every row: analysed while empty,
    with automatic recalculation off, and mariadbd restarted so that the in-memory figures come
    from the persistent ones. The counters' triggers are skipped (@connector_bulk_load), so the
    totals stay exact."""
    rows = stack.sql("SELECT COUNT(*) FROM history")
    stack.sql("ALTER TABLE history STATS_AUTO_RECALC = 0; SET @connector_bulk_load = 1; "
              "CREATE TABLE history_aside AS SELECT * FROM history; DELETE FROM history; "
              "ANALYZE TABLE history; INSERT INTO history SELECT * FROM history_aside; "
              "DROP TABLE history_aside")
    stack.stop_mariadb()
    stack.start_mariadb()
    restarted_ms = time.time() * 1000
    assert stack.sql("SELECT n_rows FROM mysql.innodb_table_stats WHERE database_name = "
                     "'connector' AND table_name = 'history'") == [["0"]]
    assert stack.sql("SELECT COUNT(*) FROM history") == rows
    # The worker reconnects by itself: every process has once each has reloaded its refreshed
    # copies (its refresher shares the circuit breaker its request threads use).
    stack.wait_refreshed(after_unix_ms=restarted_ms)


def tearDownModule():
    stack.stop()


def history(**params):
    r = stack.get("/v1/history?" + urlencode({**params, "nocache": id(params)}))
    assert r.status == 200, r
    return r.json()


def sample_values():
    row = stack.sql("SELECT destination_address, source_deposit_address, source_sender, "
                    "source_tx_hash, destination_tx_hash FROM history "
                    "WHERE destination_tx_hash IS NOT NULL ORDER BY id DESC LIMIT 1")[0]
    return dict(zip(["destination_address", "source_deposit_address", "source_sender",
                     "source_tx_hash", "destination_tx_hash"], row))


def shapes():
    v = sample_values()
    single = [{}, {"status": "Pending"}, {"pair_id": "2"}, {"source_blockchain": "unitiot"},
              {"destination_blockchain": "unitcore"}, {"source_asset_id": "3"},
              {"destination_asset_id": "6"}, *({k: val} for k, val in v.items())]
    pairs = [{"destination_address": v["destination_address"], "status": "Confirmed"},
             {"source_deposit_address": v["source_deposit_address"], "status": "Confirmed"},
             {"source_sender": v["source_sender"], "status": "Confirmed"},
             {"source_blockchain": "unitcore", "status": "Error"},
             {"destination_blockchain": "unitiot", "status": "Deposit"},
             {"pair_id": "1", "status": "Pending"}]
    return single + pairs


CHAIN_IDS = {"unitcore": "1", "unitiot": "2"}  # chains.id of the fixture's slugs


def with_values(statement, params):
    """MariaDB's general log sometimes shows an executed statement with its placeholders rather
    than its values (seen for statements executed again after ANALYZE TABLE); puts the
    request's values back, by column (NULL for an unused filter's residual condition), so the
    statement can be EXPLAINed."""
    columns = {"source_blockchain": "source_chain", "destination_blockchain": "destination_chain"}
    values = {columns.get(k, k): CHAIN_IDS.get(v, v) if k in columns else v
              for k, v in params.items()}
    # The address counters' statement names its address column as a literal.
    counted = re.search(r"address_column = '(\w+)'", statement)
    if counted and counted.group(1) in values:
        values["address"] = values[counted.group(1)]

    def sql_value(column):
        return f"'{values[column]}'" if column in values else "NULL"

    def residual(match):
        column = match.group(1)
        return f"({sql_value(column)} IS NULL OR {column} = {sql_value(column)})"

    statement = re.sub(r"\(\? IS NULL OR (\w+) = \?\)", residual, statement)
    statement = re.sub(r"(\w+) = \?", lambda m: f"{m.group(1)} = {sql_value(m.group(1))}",
                       statement)
    # LIMIT/OFFSET values do not change the plan's shape (index, order, no filesort).
    return statement.replace("LIMIT ? OFFSET ?", "LIMIT 20 OFFSET 0")


def executed_statements(params):
    """The statements the worker executed for one request, with their values."""
    stack.sql("SET GLOBAL log_output = 'TABLE'; TRUNCATE TABLE mysql.general_log; "
              "SET GLOBAL general_log = 1")
    try:
        history(**params)
    finally:
        stack.sql("SET GLOBAL general_log = 0")
    rows = stack.sql("SELECT argument FROM mysql.general_log WHERE command_type = 'Execute'"
                     " AND argument LIKE '%history%'")
    return [with_values(r[0], params) for r in rows]


class Plans(unittest.TestCase):

    def test_every_filter_shape_uses_an_index_in_both_orders(self):
        # Every filter of /v1/history's description (db/history_filters.h) is in a shape.
        filters = set(endpoint_params()["/v1/history"]) - {"page_id", "page_size", "order"}
        self.assertEqual({name for params in shapes() for name in params}, filters)
        checked = 0
        for params in shapes():
            for order in ("DESC", "ASC"):
                statements = executed_statements({**params, "order": order,
                                                       "page_size": 20})
                # Page 0: one statement, the page with its total (the direct form).
                self.assertEqual(len(statements), 1, (params, statements))
                self.assertIn("LIMIT", statements[0])
                for statement in statements:
                    plan = stack.sql("EXPLAIN " + statement)
                    where = f"{params} {order}: {statement[:160]}"
                    for row in plan:
                        table, access, extra = row[2], row[3], row[-1]
                        self.assertNotIn("filesort", extra, where)
                        if table == "history_address_counts":  # a key lookup or range
                            self.assertIn(access, ("const", "eq_ref", "ref", "range"), where)
                        if table in ("history", "h"):
                            self.assertNotEqual(access, "ALL", where)
                    checked += 1
        self.assertEqual(checked, len(shapes()) * 2)

    def test_the_first_unfiltered_page_reads_whole_rows_in_key_order(self):
        statements = executed_statements({"page_size": 20})
        page = next(s for s in statements if "LIMIT" in s)
        self.assertNotIn("JOIN", page)
        plan = stack.sql("EXPLAIN " + page)
        # The page in key order, and its total from the counters, once (SUBQUERY: not per row).
        self.assertEqual([(row[1], row[2], row[3], row[5]) for row in plan],
                         [("PRIMARY", "h", "index", "PRIMARY"),
                          ("SUBQUERY", "history_counts", "ALL", "NULL")])

    def test_deep_unfiltered_page_skips_its_offset_on_the_narrow_id_index(self):
        statements = executed_statements({"page_id": 500, "page_size": 20})
        page = next(s for s in statements if "LIMIT" in s)
        self.assertIn("FORCE INDEX (ix_history_id)", page)
        derived = [row for row in stack.sql("EXPLAIN " + page) if row[1] == "DERIVED"]
        self.assertEqual([(row[3], row[5]) for row in derived], [("index", "ix_history_id")])


class Totals(unittest.TestCase):
    def check_totals(self):
        coarse = [{}, {"status": "Confirmed"}, {"pair_id": "1"}, {"pair_id": "3", "status": "Error"},
                  {"source_blockchain": "unitiot"}, {"destination_blockchain": "unitiot",
                                                     "status": "Pending"},
                  {"source_asset_id": "5", "destination_asset_id": "6"},
                  {"source_blockchain": "unitcore", "pair_id": "2", "status": "Deposit"}]
        columns = {"status": "status", "pair_id": "pair_id", "source_asset_id": "source_asset_id",
                   "destination_asset_id": "destination_asset_id"}
        chains = {"unitcore": 1, "unitiot": 2}
        for params in coarse:
            conditions = []
            for key, value in params.items():
                if key in columns:
                    conditions.append(f"{columns[key]} = '{value}'")
                else:
                    column = "source_chain" if key == "source_blockchain" else "destination_chain"
                    conditions.append(f"{column} = {chains[value]}")
            where = " WHERE " + " AND ".join(conditions) if conditions else ""
            real = stack.sql("SELECT COUNT(*) FROM history" + where)[0][0]
            self.assertEqual(history(**params)["total_history"], real, params)
        # One address, alone or with a status (history_address_counts), in each address
        # column: the busiest of each, and one written in upper case (addresses compare
        # case-insensitively, as the index does).
        for column in ("source_deposit_address", "source_sender", "destination_address"):
            (address,), = stack.sql(f"SELECT {column} FROM history GROUP BY {column} "
                                    "ORDER BY COUNT(*) DESC LIMIT 1")
            for status in (None, "Confirmed", "Pending"):
                params = {column: address.lower() if status else "0x" + address[2:].upper()}
                where = f" WHERE {column} = '{address}'"
                if status:
                    params["status"] = status
                    where += f" AND status = '{status}'"
                real = stack.sql("SELECT COUNT(*) FROM history" + where)[0][0]
                self.assertEqual(history(**params)["total_history"], real, params)

    def test_totals_equal_count_after_inserts_status_changes_and_deletes(self):
        self.check_totals()
        stack.sql("UPDATE history SET status = 'Confirmed' WHERE id % 7 = 0 AND status <> 'Confirmed'")
        stack.sql("UPDATE history SET status = 'Error', pair_id = pair_id WHERE id % 13 = 0")
        # Records inserted one by one (the insert triggers), with an address re-cased and one
        # address in two columns; an address moved (-1/+1), and one only re-cased (no change).
        stack.sql("CREATE TEMPORARY TABLE copies AS SELECT * FROM history WHERE id % 23 = 0; "
                  "UPDATE copies SET id = id + 100000000, hash = SHA2(CONCAT('copy-', id), 256), "
                  "destination_address = CONCAT('0x', UPPER(SUBSTRING(destination_address, 3))), "
                  "source_sender = destination_address; "
                  "INSERT INTO history SELECT * FROM copies")
        self.check_totals()
        stack.sql("UPDATE history SET destination_address = source_sender WHERE id % 17 = 0")
        stack.sql("UPDATE history SET source_sender = "
                  "CONCAT('0x', UPPER(SUBSTRING(source_sender, 3))) WHERE id % 19 = 0")
        self.check_totals()
        stack.sql("DELETE FROM history WHERE id % 11 = 0")
        self.check_totals()
        result = stack.admin("gen-history", 1000, "--seed", "12")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.check_totals()
        for counters in ("history_counts", "history_address_counts"):
            self.assertEqual(stack.sql(f"SELECT COUNT(*) FROM {counters} WHERE records < 0"),
                             [["0"]])


class DeepPages(unittest.TestCase):
    """Pages past offset 10,000 may be read from the other end of the index (db/page_walk.h):
    the records must be exactly those of the plain query, in the order asked."""

    def expected_ids(self, where, order, offset, limit):
        return [row[0] for row in stack.sql(
            f"SELECT id FROM history{where} ORDER BY id {order} LIMIT {limit} OFFSET {offset}")]

    def test_deep_pages_from_either_end_equal_the_plain_query(self):
        checked = 0
        for params, where in (({}, ""), ({"status": "Confirmed"}, " WHERE status = 'Confirmed'")):
            total = int(stack.sql(f"SELECT COUNT(*) FROM history{where}")[0][0])
            self.assertGreater(total, 10000 + 100)
            last_page = (total - 1) // 100
            for order in ("DESC", "ASC"):
                for page_id in (100, last_page - 2, last_page - 1, last_page):
                    if page_id * 100 < 10000:
                        continue
                    body = history(**params, order=order, page_size=100, page_id=page_id)
                    where_ = f"{params} {order} page {page_id}"
                    self.assertEqual(body["total_history"], str(total), where_)
                    self.assertEqual([r["id"] for r in body["list"]],
                                     self.expected_ids(where, order, page_id * 100, 100), where_)
                    checked += 1
        self.assertGreaterEqual(checked, 10)

    def test_a_deep_desc_page_is_read_forwards(self):
        statements = executed_statements({"page_id": 900, "page_size": 20})
        page = next(s for s in statements if "LIMIT" in s)
        self.assertIn("ORDER BY id ASC", page)


if __name__ == "__main__":
    unittest.main()
