"""A fleet's replicas and primary (fleet_support.py: the fleet, scripts/fleet): a lagging
replica is passed over within db_replica_max_lag_s (4 s here) plus a probe interval, and taken
back; losing the primary leaves reads working and new recipients recover with it; a lost
primary replaced by a promoted replica as docs/operations-fleet.md says (last: the fleet keeps
the new topology)."""

import json
import re
import time
import unittest
from pathlib import Path

from fleet_support import (MAX_LAG_S, Fleet, admin_sql, doc_blocks, found, get, new_recipient,
                           replica_state, unique)
from harness import REPO, await_true, prometheus
from load_client import ACCOUNT_QUERY

# The bound on a lagging replica's staleness is MAX_LAG_S plus one probe interval; a loaded
# machine gets a few seconds more before the test calls it a failure.
SHOWN_WITHIN_S = MAX_LAG_S + 1 + 5

fleet = None


def setUpModule():
    global fleet
    fleet = Fleet("fleet-primary")


def tearDownModule():
    problems = fleet.stop()
    assert not problems, f"the fleet's stop, or beside the last test: {problems}"


class Document(unittest.TestCase):
    def test_the_procedures_have_the_blocks_the_tests_run(self):
        # A block lost to a formatting slip would otherwise go untested silently.
        self.assertEqual([len(doc_blocks(6, "sql")), len(doc_blocks(6, "sh"))], [2, 2])
        promote = doc_blocks(6, "sql")[0]
        self.assertTrue(promote.startswith("USE connector;\n"), promote)


class ReplicaLag(unittest.TestCase):
    def tearDown(self):
        for node in fleet.nodes:
            fleet.replica_sql(node, "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 0; START SLAVE")
        fleet.wait_replicas_caught_up()
        for node in fleet.nodes:
            await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)

    def test_a_stopped_replica_is_passed_over_within_the_bound_and_taken_back(self):
        node, other = fleet.nodes[0], fleet.nodes[1]
        existing = fleet.new_record()
        fleet.wait_replicas_caught_up()
        fleet.replica_sql(node, "STOP SLAVE SQL_THREAD")
        record = fleet.new_record()
        fleet.sql(f"UPDATE history SET status = 'Error' WHERE hash = '{existing}'")
        changed_at = time.monotonic()
        await_true(lambda: found(node, record), seconds=SHOWN_WITHIN_S, step=0.2)
        shown_after = time.monotonic() - changed_at
        # The status change too, by every process of the node (each reads the rotation from
        # the pool's scoreboard at each request).
        for _ in range(6):
            status, _, body = get(node["url"], unique(f"/v1/history/hash?hash={existing}"))
            self.assertEqual((status, json.loads(body)["status"]), (200, "Error"))
        print(f"\nfleet: a stopped replica's node showed a new record after {shown_after:.1f} s "
              f"(db_replica_max_lag_s {MAX_LAG_S})", flush=True)
        state = replica_state(node)
        self.assertFalse(state["in_rotation"])
        self.assertGreater(state["lag_seconds"], MAX_LAG_S)
        metrics = prometheus(get(node["url"], "/metrics")[2].decode())
        self.assertEqual(metrics[("connector_db_server_in_rotation",
                                  frozenset({("server", f"unix:{node['replica_socket']}")}))], 0)
        # The other nodes' replicas are current: they stay in rotation.
        self.assertTrue(replica_state(other)["in_rotation"])

        fleet.replica_sql(node, "START SLAVE SQL_THREAD")
        fleet.wait_replicas_caught_up([node])
        await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)
        # Reads are back on the replica: a row only it has is found, by every process.
        only_there = fleet.new_record(replica_only_on=node)
        for _ in range(6):
            self.assertTrue(found(node, only_there))

    def test_a_delayed_replica_is_out_while_behind(self):
        node = fleet.nodes[1]
        fleet.replica_sql(node, "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 60; START SLAVE")
        await_true(lambda: not replica_state(node)["in_rotation"], seconds=SHOWN_WITHIN_S)
        self.assertGreater(replica_state(node)["lag_seconds"], MAX_LAG_S)
        # Every process of the node reads the primary from then on (db/replica_monitor.h).
        record = fleet.new_record()
        for _ in range(6):
            self.assertTrue(found(node, record))


class PrimaryLost(unittest.TestCase):
    def test_reads_answer_from_the_replicas_and_new_recipients_recover_with_the_primary(self):
        recorded = json.loads(get(fleet.nodes[0]["url"], f"/v1/account?{ACCOUNT_QUERY}")[2])
        fleet.wait_replicas_caught_up()
        fleet.run_script(fleet.state_dir / "stop-primary")
        self.assertIsNone(fleet.current_state()["primary"]["pid"])
        try:
            new_path = (f"/v1/account?recipient_address={new_recipient()}"
                        "&recipient_blockchain=unitiot&deposit_blockchain=unitcore")
            for node in fleet.nodes:
                for path in sample_targets_from(node):
                    with self.subTest(node=node["name"], path=path):
                        status, _, body = get(node["url"], unique(path))
                        self.assertEqual(status, 200, body[:300])
                self.assertTrue(replica_state(node)["in_rotation"], node["name"])
                # A recorded recipient is still answered (from the replica).
                status, _, body = get(node["url"], unique(f"/v1/account?{ACCOUNT_QUERY}"))
                self.assertEqual((status, json.loads(body)), (200, recorded))
                status, headers, body = get(node["url"], new_path)
                self.assertEqual(status, 503, body[:300])
                self.assertEqual(json.loads(body)["error"]["code"], "unavailable")
                self.assertIsNotNone(headers.get("Retry-After"))
        finally:
            fleet.run_script(fleet.state_dir / "start-primary")
        for node in fleet.nodes:
            await_true(lambda: get(node["url"], new_path)[0] == 200, seconds=30, step=0.5)
        fleet.wait_replicas_caught_up()


def sample_targets_from(node):
    status, _, body = get(node["url"], unique("/v1/history?page_size=2"))
    assert status == 200, body
    record_hash = json.loads(body)["list"][0]["hash"]
    return ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/history?page_size=5",
            f"/v1/history/hash?hash={record_hash}", "/v1/ab"]


class PrimaryReplaced(unittest.TestCase):
    """Losing the primary for good, and replacing it as docs/operations-fleet.md (section 6)
    says, its blocks run as printed: promote the most advanced replica with MariaDB's own
    statements, keep it writable across a restart, point the others and the writers at it,
    SIGHUP the workers. Runs last: the fleet keeps the new topology."""

    def test_a_promoted_replica_takes_the_writes_and_the_others_follow_it(self):
        promote, follow = doc_blocks(6, "sql")
        writable, writers = doc_blocks(6, "sh")
        fleet.wait_replicas_caught_up()
        fleet.run_script(fleet.state_dir / "stop-primary")
        # 1. The most advanced replica (all are equal here: they had caught up).
        positions = {n["name"]: fleet.replica_sql(n, "SELECT @@gtid_slave_pos")[0][0]
                     for n in fleet.nodes}
        self.assertEqual(len(set(positions.values())), 1, positions)
        new_primary, others = fleet.nodes[0], fleet.nodes[1:]
        # 2. Promote it, and keep it writable across a restart.
        admin_sql(new_primary["replica_socket"], promote)
        fleet.run_doc_block(writable, node=new_primary["dir"])
        # 3. The other replicas follow it, from the GTID position they have reached.
        for node in others:
            admin_sql(node["replica_socket"], follow.replace("<new primary>", "127.0.0.1")
                      .replace("<its port>", str(new_primary["replica_port"])))
        # 4. The writers (and the last resort for reads) point at it; SIGHUP each worker.
        old = f"db_port = {fleet.state['primary']['port']}\n"
        for node in fleet.nodes:
            self.assertIn(old, Path(node["config"]).read_text())
        fleet.run_doc_block(writers, node=new_primary["dir"])
        for node in fleet.nodes:
            self.assertIn(f"db_port = {new_primary['replica_port']}\n",
                          Path(node["config"]).read_text())

        recipient = self.recorded_through_every_node(new_primary)
        # The others replicate from the new primary: the row, and its heartbeat, reach them,
        # and their nodes keep them in rotation.
        count = f"SELECT COUNT(*) FROM deposit_accounts WHERE recipient_address = '{recipient}'"
        for node in others:
            await_true(lambda: fleet.replica_sql(node, count) == [["1"]], seconds=30)
        for node in fleet.nodes:
            await_true(lambda: replica_state(node)["in_rotation"] and
                       replica_state(node)["lag_seconds"] is not None and
                       replica_state(node)["lag_seconds"] <= MAX_LAG_S / 2, seconds=30)
            status, _, body = get(node["url"], unique("/v1/history?page_size=2"))
            self.assertEqual(status, 200, body[:200])

        # After a restart the new primary is still a primary: writable, every event of sql/
        # enabled (the heartbeat, the change feed's trim), new recipients recorded.
        for script in ("stop-replica", "start-replica"):
            fleet.run_script(Path(new_primary["dir"]) / script)
        self.assertEqual(fleet.replica_sql(new_primary, "SELECT @@read_only"), [["0"]])
        events = set(re.findall(r"^CREATE EVENT (\w+)$", "".join(
            f.read_text() for f in (REPO / "sql" / "migrations").glob("*.sql")), re.M))
        self.assertGreaterEqual(events, {"replication_heartbeat_tick", "history_changes_trim"})
        enabled = fleet.replica_sql(new_primary, "SELECT event_name FROM information_schema.events "
                                    "WHERE event_schema = 'connector' AND status = 'ENABLED'")
        self.assertEqual({row[0] for row in enabled}, events)
        self.recorded_through_every_node(new_primary)

    def recorded_through_every_node(self, primary):
        """A new recipient asked of every node is answered, and recorded once on primary."""
        recipient = new_recipient()
        path = (f"/v1/account?recipient_address={recipient}&recipient_blockchain=unitiot"
                "&deposit_blockchain=unitcore")
        for node in fleet.nodes:
            await_true(lambda: get(node["url"], path)[0] == 200, seconds=30, step=0.5)
        count = f"SELECT COUNT(*) FROM deposit_accounts WHERE recipient_address = '{recipient}'"
        self.assertEqual(fleet.replica_sql(primary, count), [["1"]])
        return recipient


def load_tests(loader, tests, pattern):
    """The classes in this order: the replaced primary last."""
    suite = unittest.TestSuite()
    for case in (Document, ReplicaLag, PrimaryLost, PrimaryReplaced):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    unittest.main()
