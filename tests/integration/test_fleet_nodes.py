"""A fleet's nodes and parts (fleet_support.py: the fleet, scripts/fleet): a node killed, a
rolling restart and a node removed and added, each under load through the front, cost no client
request; the front reloads as docs/operations-fleet.md says; every part of the fleet stops and
starts by its script, and state.json follows; scripts/fleet stop stops everything (the module's
teardown: Fleet.stop)."""

import subprocess
import unittest
from pathlib import Path

from fleet_support import (CLIENTS, MAX_LAG_S, Fleet, alive, doc_blocks, failures, get,
                           replica_state, unique)
from harness import await_true, pace

fleet = None


def setUpModule():
    global fleet
    fleet = Fleet("fleet-nodes")


def tearDownModule():
    problems = fleet.stop()
    assert not problems, f"the fleet's stop, or beside the last test: {problems}"


class Document(unittest.TestCase):
    def test_the_procedures_have_the_blocks_the_tests_run(self):
        # A block lost to a formatting slip would otherwise go untested silently.
        self.assertEqual([len(doc_blocks(3, "sh")), len(doc_blocks(4, "sh"))], [2, 1])


class NodeFailures(unittest.TestCase):
    def test_a_node_killed_under_load_costs_no_request_and_serves_again_once_restarted(self):
        node = fleet.nodes[0]
        load = fleet.load_through_front()
        with load:
            pace(2)
            fleet.kill_node(node)
            pace(4)
            fleet.start_node(node)
            pace(2)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        for path in ("/v1/networks", unique("/v1/history?page_size=2")):
            self.assertEqual(get(node["url"], path)[0], 200, path)

    def test_a_rolling_restart_under_load_costs_no_request(self):
        [restart] = doc_blocks(4, "sh")
        load = fleet.load_through_front()
        with load:
            pace(1)
            for node in fleet.nodes:
                fleet.run_doc_block(restart, node=node["dir"])
                # As an operator does: the next node only once the front sends this one
                # clients' requests again (after its fail_timeout, 5 s), else a second node out
                # at once would leave the front one node, then none.
                fleet.wait_front_traffic(node)
            pace(1)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        # state.json names the processes running now, not those the fleet started with.
        for node, listed in zip(fleet.nodes, fleet.current_state()["nodes"]):
            worker, nginx = fleet.node_pids(node)
            self.assertEqual((listed["worker_pid"], listed["nginx_pid"]), (worker, nginx))
            self.assertTrue(alive(worker) and alive(nginx), node["name"])

    def test_a_node_removed_and_added_under_load_costs_no_request(self):
        _reload, commands = doc_blocks(3, "sh")
        remove, add = commands.splitlines()
        node = fleet.nodes[-1]
        k = node["name"].removeprefix("node")
        self.assertEqual((remove, add), (f'scripts/fleet-node remove "$fleet" {k}',
                                         f'scripts/fleet-node add "$fleet" {k}'))
        upstream = Path(fleet.current_state()["front_dir"]) / "conf.d" / "connector-balancer.conf"
        line = f"server {node['address']}:{fleet.port} "
        load = fleet.load_through_front()
        with load:
            pace(1)
            fleet.run_doc_block(remove)
            self.assertEqual([n["name"] for n in fleet.current_state()["nodes"]],
                             [n["name"] for n in fleet.nodes[:-1]])
            self.assertNotIn(line, upstream.read_text())
            self.assertFalse(Path(node["dir"]).exists())
            with self.assertRaises(ConnectionRefusedError):
                get(node["url"], "/v1/networks")
            fleet.run_doc_block(add)
            fleet.wait_front_traffic(node)
            pace(1)
        self.assertGreater(load.sent, 200)
        self.assertEqual(failures(load), [], load.summary())
        self.assertEqual(upstream.read_text().count(line), 1)
        listed = fleet.current_state()["nodes"]
        self.assertEqual([n["name"] for n in listed], [n["name"] for n in fleet.nodes])
        self.assertEqual(fleet.node_pids(node), (listed[-1]["worker_pid"], listed[-1]["nginx_pid"]))
        fleet.wait_replicas_caught_up([node])
        await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)

    def test_the_front_reloads_as_the_document_says(self):
        [reload, _commands] = doc_blocks(3, "sh")
        master = fleet.current_state()["front_pid"]
        self.assertTrue(alive(master))
        # The workers of an earlier reload (a node added) may still be finishing.
        await_true(lambda: len(front_workers(master)) == 2, seconds=30)
        old_workers = front_workers(master)
        fleet.run_doc_block(reload)
        # The same master, a new generation of its two workers.
        await_true(lambda: len(front_workers(master)) == 2 and
                   front_workers(master).isdisjoint(old_workers), seconds=30)
        self.assertEqual(fleet.current_state()["front_pid"], master)
        self.assertEqual(get(fleet.state["front"], "/v1/networks", source=CLIENTS[0])[0], 200)


def front_workers(master):
    """The pids of the front's nginx worker processes."""
    result = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return {int(pid) for pid in result.stdout.split()}


class Parts(unittest.TestCase):
    """Every part of the fleet has a start and a stop script (docs/operations-fleet.md, section
    9): each stops what it names and starts it again, and state.json follows. The module's
    teardown stops the rest with scripts/fleet stop."""

    def cycle(self, folder, part, pid_of):
        """stop-PART, then start-PART, in folder; pid_of(state.json): the part's pid."""
        before = pid_of(fleet.current_state())
        self.assertTrue(before is not None and alive(before), part)
        fleet.run_script(folder / f"stop-{part}")
        self.assertIsNone(pid_of(fleet.current_state()), part)
        self.assertFalse(alive(before), part)
        fleet.run_script(folder / f"start-{part}")
        after = pid_of(fleet.current_state())
        self.assertTrue(after is not None and alive(after), part)
        self.assertNotEqual(after, before, part)

    def test_every_part_stops_and_starts_by_its_script_and_state_json_follows(self):
        node = fleet.nodes[1]

        def node_pid(part):
            return lambda state: next(n for n in state["nodes"]
                                      if n["name"] == node["name"])[f"{part}_pid"]
        for part in ("events", "nginx", "worker", "replica"):
            self.cycle(Path(node["dir"]), part, node_pid(part))
        self.cycle(fleet.state_dir, "front", lambda state: state["front_pid"])
        self.cycle(fleet.state_dir, "primary", lambda state: state["primary"]["pid"])
        # The node serves again, alone and through the front, its replica back in rotation.
        await_true(lambda: replica_state(node)["in_rotation"], seconds=3 * MAX_LAG_S)
        for url in (node["url"], fleet.state["front"]):
            status, _, body = get(url, unique("/v1/history?page_size=2"), source=CLIENTS[0])
            self.assertEqual(status, 200, body[:200])


def load_tests(loader, tests, pattern):
    suite = unittest.TestSuite()
    for case in (Document, NodeFailures, Parts):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    unittest.main()
