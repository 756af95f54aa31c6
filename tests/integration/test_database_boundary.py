"""The database boundary (db/connection.h, db/history_statements.h, db/refresher.h,
db/deposit_account_writes.h), against a real MariaDB:

* Bounded statements: every combination of the history filters (2047 of eleven), in both
  orders, is answered 200 and each lists the one record every filter matches, while MariaDB's
  Prepared_stmt_count stays under the fixed set's bound per connection. With
  max_prepared_stmt_count at what is in use right after the worker starts, new shapes answer
  503 (never 500), answers from memory stay 200, and the shapes answer 200 once it is raised.
* A hung database (mariadbd stopped with SIGSTOP) under load: networks and pairs keep
  answering from memory (all 200, p99 under 50 ms, none over 1 s; five sequential requests
  each under 1 s), every history request gets its 503 within the request's time budget (plus
  1 s for nginx and the load client on a loaded machine), and history answers again within
  seconds of SIGCONT. These latency bounds are correctness bounds, measured by the client on a
  machine that may be busy: an answer that waited on the hung server takes the budget
  (2.5 s), one from memory milliseconds; the maximum is bounded well under
  the first, not at what a quiet machine achieves (docs/reliability.md has those figures).
* Account writes proven recorded: a deposit address recorded for another recipient, and an
  insert the database refuses (a chain gone from the database but still in the worker's
  memory), are each a 503, never the address. chains.chain_id is unique.

With CONNECTOR_FAULTS_REPORT=<file>, the SIGSTOP scenario adds its figures to that JSON file
(scripts/faults turns it into docs/reliability.md's table)."""

import itertools
import json
import os
import signal
import time
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import (LOAD_FROM_ONE_CLIENT, Stack, StackError, endpoint_descriptions, hang, pace,
                     wait_for)
from load_client import Load, Target

fixture = Fixture()
THREADS = 6
BUDGET_MS = 2500
DESCRIPTIONS = endpoint_descriptions()
# The fixed statement set of one connection, at most, as tests/endpoints-dump counts it
# (db/statement_set.h): the history statements (db::all_history_statements(); the unit test
# test_history_statements derives their number from the filters) and the others
# (db::other_statements(): the reference tables', the supply's, the readiness probe's, the
# account's, the change feed's). test_endpoint_descriptions holds the documents' counts to these.
STATEMENTS_PER_CONNECTION = DESCRIPTIONS["history_statements"] + DESCRIPTIONS["other_statements"]
STOPPED_SECONDS = 8
# An answer from memory never waits on the hung server, which would cost the request's budget
# (BUDGET_MS, 2.5 s): 1 s separates the two on any machine, however busy.
MEMORY_MAX_S = 1.0
# The filters of /v1/history's description (src/api/history.cpp): a new one is combined with
# all the others here, with its value from fixture.filter_values().
HISTORY = next(e for e in DESCRIPTIONS["endpoints"] if e["path"] == "/v1/history")
FILTERS = tuple(p["name"] for p in HISTORY["params"]
                if p["name"] not in ("page_id", "page_size", "order"))

stack = None


def setUpModule():
    global stack
    # nginx's cache off: the worker's own answers to the database's faults are tested (the
    # cache's STALE answers over them: test_faults).
    stack = Stack(fixture=fixture.path, threads=THREADS, nginx_env=LOAD_FROM_ONE_CLIENT,
                  nginx_cache=False, config={"request_timeout_ms": BUDGET_MS})


def tearDownModule():
    stack.stop()


def global_status(name):
    return int(stack.sql(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def the_matched_record():
    """A fixture record with every filter's field set, and the filter values that match it."""
    r = fixture.matched_record()
    values = fixture.filter_values(HISTORY, r)
    return str(r["id"]), {name: values[name] for name in FILTERS}


class BoundedStatements(unittest.TestCase):
    def test_a_every_filter_combination_in_both_orders(self):
        record_id, values = the_matched_record()
        answered = 0
        for size in range(1, len(FILTERS) + 1):
            for names in itertools.combinations(FILTERS, size):
                for order in ("ASC", "DESC"):
                    query = {name: values[name] for name in names}
                    r = stack.get("/v1/history?" + urlencode(
                        {**query, "order": order, "page_size": 100}))
                    self.assertEqual(r.status, 200, (query, r))
                    self.assertIn(record_id, [x["id"] for x in r.json()["list"]], query)
                    answered += 1
        self.assertEqual(answered, 2 * (2 ** len(FILTERS) - 1))
        # The reader connection of each thread, the refresher's and the writers' (unused here).
        in_use = global_status("Prepared_stmt_count")
        self.assertLessEqual(in_use, (THREADS + 1) * STATEMENTS_PER_CONNECTION)

    def test_b_a_full_statement_cache_is_503_and_recovers(self):
        stack.stop_worker()
        stack.start_worker()
        self.assertTrue(wait_for(lambda: stack.get("/v1/networks").status == 200, 10))
        limit = global_status("Prepared_stmt_count")
        saved = stack.sql("SELECT @@GLOBAL.max_prepared_stmt_count")[0][0]
        _, values = the_matched_record()
        shapes = [dict(zip(names, (values[n] for n in names)))
                  for names in itertools.combinations(FILTERS, 2)][:30]
        stack.sql(f"SET GLOBAL max_prepared_stmt_count = {limit}")
        try:
            answers = [stack.get("/v1/history?" + urlencode(shape)) for shape in shapes]
            self.assertEqual({r.status for r in answers}, {503})
            for r in answers:
                self.assertEqual((r.json()["error"]["code"], r.headers["Retry-After"]),
                                 ("unavailable", "1"))
            self.assertEqual(stack.get("/v1/networks").status, 200)  # from memory
        finally:
            stack.sql(f"SET GLOBAL max_prepared_stmt_count = {saved}")
        again = [stack.get("/v1/history?" + urlencode(shape)).status for shape in shapes]
        self.assertEqual(again, [200] * len(shapes))


class HungDatabase(unittest.TestCase):
    def test_sigstop_under_load(self):
        pid = int((stack.db_dir / "mysqld.pid").read_text())
        _, values = the_matched_record()
        memory = Load(stack.port, [Target("/v1/networks"), Target("/v1/pairs")], connections=3)
        database = Load(stack.port, [
            Target("/v1/history?page_size=5"),
            Target("/v1/history?" + urlencode({"status": "Confirmed", "page_size": 2})),
            Target("/v1/history/hash?hash=" + fixture.history[0]["hash"])], connections=2)
        sequential = []
        with memory, database:
            pace(1)  # the loads running before the hang
            stopped = hang(pid)
            try:
                pace(STOPPED_SECONDS - 1)  # the database hung for a while under the loads
                for _ in range(5):
                    started = time.monotonic()
                    r = stack.get("/v1/networks")
                    sequential.append((r.status, time.monotonic() - started))
            finally:
                os.kill(pid, signal.SIGCONT)
                resumed = time.monotonic()
            history_back = wait_for(
                lambda: stack.get("/v1/history?page_size=1").status == 200, 10)
            recovered_after = time.monotonic() - resumed
        while_stopped = memory.between(stopped, resumed)
        self.assertGreater(len(while_stopped), 100)
        latencies = sorted(r.latency for r in while_stopped)
        p99 = latencies[int(len(latencies) * 0.99) - 1]
        # History requests sent while stopped that had their whole budget inside the stop.
        refused = [r for r in database.records
                   if stopped <= r.started <= resumed - BUDGET_MS / 1000]
        self.assertGreater(len(refused), 10)
        report(memory, database, while_stopped, refused, sequential, recovered_after)

        self.assertEqual([r for r in while_stopped if not r.ok], [])
        self.assertLess(p99, 0.050)
        self.assertLess(latencies[-1], MEMORY_MAX_S)
        self.assertEqual([status for status, _ in sequential], [200] * 5)
        self.assertLess(max(seconds for _, seconds in sequential), MEMORY_MAX_S)
        for r in refused:
            self.assertEqual((r.status, r.code, r.retry_after), (503, "unavailable", "1"), r)
            self.assertLess(r.latency, BUDGET_MS / 1000 + 1, r)
        self.assertTrue(history_back)
        self.assertLess(recovered_after, 5)


def report(memory, database, while_stopped, refused, sequential, recovered_after):
    path = os.environ.get("CONNECTOR_FAULTS_REPORT")
    if not path:
        return
    latencies = sorted(r.latency for r in while_stopped)
    refusals = sorted(r.latency for r in refused)
    figures = {
        "budget_ms": BUDGET_MS, "stopped_s": STOPPED_SECONDS,
        "memory_answers_while_stopped": len(latencies),
        "memory_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1),
        "memory_max_ms": round(latencies[-1] * 1000, 1),
        "sequential_networks_ms": [round(s * 1000, 1) for _, s in sequential],
        "history_503s": len(refusals),
        "history_503_median_ms": round(refusals[len(refusals) // 2] * 1000, 1),
        "history_503_max_ms": round(refusals[-1] * 1000, 1),
        "history_back_after_sigcont_s": round(recovered_after, 2),
        "memory": memory.summary(), "database": database.summary()}
    try:
        with open(path) as f:
            everything = json.load(f)
    except (OSError, ValueError):
        everything = {}
    everything["database hung (SIGSTOP) under load"] = figures
    with open(path, "w") as f:
        json.dump(everything, f, indent=2)


class AccountWrites(unittest.TestCase):
    RECIPIENT = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

    def account(self, recipient, recipient_chain="unitcore", deposit_chain="unitiot"):
        return stack.get("/v1/account?" + urlencode({
            "recipient_address": recipient, "recipient_blockchain": recipient_chain,
            "deposit_blockchain": deposit_chain}))

    def assert_unavailable(self, r):
        self.assertEqual((r.status, r.json()["error"]["code"], r.headers["Retry-After"]),
                         (503, "unavailable", "1"), r)
        self.assertNotIn(b"deposit_address", r.body)

    def test_an_address_recorded_for_another_recipient_is_503(self):
        recipient = "0x" + "12" * 20
        first = self.account(recipient, "unitiot", "unitcore")
        self.assertEqual(first.status, 200, first)
        deposit = first.json()["deposit_address"]
        stack.sql("UPDATE deposit_accounts SET recipient_address = '0x" + "34" * 20 +
                  f"' WHERE deposit_address = '{deposit}'")
        self.assert_unavailable(self.account(recipient, "unitiot", "unitcore"))

    def test_an_insert_the_database_refuses_is_503(self):
        """A deposit chain that is still in the worker's reference data but no longer in the
        database: the insert fails its foreign key (INSERT IGNORE answered 200 with nothing
        recorded). A stack of its own whose reference data is loaded once, at start (refresh
        interval 1 h): the test deletes the chain only once every process states (in /status) a
        copy loaded after the chain was inserted."""
        with Stack(fixture=fixture.path, threads=2, nginx_cache=False,  # as the module's stack
                   config={"reference_refresh_ms": 3600000}) as s:
            s.sql("INSERT INTO chains (slug, network, chain_id, base_chain, deposit_factory, "
                  "deposit_init_code_hash) SELECT 'unitiottestnet', 'UNITIoTTestnet', 1007, "
                  "'SideBase', deposit_factory, deposit_init_code_hash FROM chains "
                  "WHERE slug = 'unitiot'; INSERT INTO connects (chain_a, chain_b) SELECT "
                  "(SELECT id FROM chains WHERE slug = 'unitcore'), id FROM chains "
                  "WHERE slug = 'unitiottestnet'")
            inserted_by_ms = time.time() * 1000
            s.stop_worker()
            s.start_worker(wait_loaded=False)
            # Every process's reference data holds the new chain: its load began after the insert.
            s.wait_refreshed(after_unix_ms=inserted_by_ms)
            s.sql("DELETE FROM connects WHERE chain_b = (SELECT id FROM chains WHERE slug = "
                  "'unitiottestnet'); DELETE FROM chains WHERE slug = 'unitiottestnet'")
            r = s.get("/v1/account?" + urlencode({
                "recipient_address": self.RECIPIENT, "recipient_blockchain": "unitcore",
                "deposit_blockchain": "unitiottestnet"}))
            self.assert_unavailable(r)
            self.assertEqual(s.sql("SELECT COUNT(*) FROM deposit_accounts"),
                             s.sql("SELECT COUNT(*) FROM deposit_accounts a JOIN chains c "
                                   "ON c.id = a.deposit_chain"))

    def test_chain_ids_are_unique(self):
        with self.assertRaises(StackError) as refused:
            stack.sql("INSERT INTO chains (slug, network, chain_id, base_chain) "
                      "VALUES ('copy', 'Copy', 36888, 'MainBase')")
        self.assertIn("Duplicate entry '36888' for key 'uq_chains_chain_id'",
                      str(refused.exception))


if __name__ == "__main__":
    unittest.main()
