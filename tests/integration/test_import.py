"""connector-admin import against a real MariaDB: validation that names the entry and field,
all-or-nothing, idempotence, connects in either orientation, the hash rule, and exact amounts up
to 2^256-1 through the API."""

import copy
import hashlib
import json
import re
import tempfile
import time
import unittest
from pathlib import Path
from urllib.parse import urlencode

from fixture import Fixture
from harness import Stack

stack = None
fixture = Fixture()
TABLES = "chains, chain_status, assets, connects, pairs, history, deposit_accounts"
UINT256_MAX = str(2**256 - 1)


def setUpModule():
    global stack
    # Reference data reloaded as often as the refresher goes (every 50 ms), so imported pairs
    # show within a moment.
    # nginx's cache off: each test reads what its import wrote at once, which a cached answer
    # (60 s for the reference data) would hide.
    stack = Stack(fixture=fixture.path, config={"reference_refresh_ms": 0}, nginx_cache=False)


def tearDownModule():
    stack.stop()


def import_doc(doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    try:
        return stack.admin("import", f.name)
    finally:
        Path(f.name).unlink()


def checksums():
    return stack.sql(f"CHECKSUM TABLE {TABLES}")


def deposit_address(recipient, recipient_chain, deposit_chain):
    r = stack.get("/v1/account?" + urlencode({"recipient_address": recipient,
                                               "recipient_blockchain": recipient_chain,
                                               "deposit_blockchain": deposit_chain}))
    assert r.status == 200, r
    return r.json()["deposit_address"]


def reference_reloads():
    """connector_reference_reloads_total of /metrics."""
    text = stack.get("/metrics").body.decode()
    return int(re.search(r"^connector_reference_reloads_total (\d+)$", text, re.M).group(1))


class Import(unittest.TestCase):
    def test_every_thread_answers_a_reference_change_once_reloaded(self):
        """Each worker thread renders a reference list once per refreshed copy and reuses it: once
        the refresher has loaded a change, no thread may answer its older rendering."""
        def disabled(requests=40):  # 40 requests over the stack's threads
            return {json.loads(stack.get("/v1/pairs").body)["pairs"][0]["b2a_disabled"]
                    for _ in range(requests)}

        before = disabled()
        self.assertEqual(len(before), 1)
        stack.sql("UPDATE pairs SET b2a_disabled = NOT b2a_disabled ORDER BY id LIMIT 1")
        reloads = reference_reloads()
        try:
            stack.wait_refreshed(after_unix_ms=time.time() * 1000)  # every process reloaded
            self.assertEqual(disabled(), {not before.pop()})
            self.assertGreaterEqual(reference_reloads(), reloads + 2)  # one per process at least
        finally:
            stack.sql("UPDATE pairs SET b2a_disabled = NOT b2a_disabled ORDER BY id LIMIT 1")

    def test_same_file_twice_changes_nothing(self):
        self.assertEqual(stack.admin("import", fixture.path).returncode, 0)
        before = checksums()
        result = stack.admin("import", fixture.path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("60 history records", result.stdout)
        self.assertEqual(checksums(), before)

    def test_a_connect_is_stored_once_in_either_orientation(self):
        testnet = {"network": "UNITCoreTestnet", "chain_id": "26888", "base_chain": "MainBase",
                   "slug": "unitcoretestnet"}

        def connects():
            return stack.sql("SELECT a.slug, b.slug FROM connects JOIN chains a ON a.id = chain_a "
                             "JOIN chains b ON b.id = chain_b ORDER BY connects.id")

        def connect(a, b):
            return {"bc1": {"slug": a}, "bc2": {"slug": b}}

        before = connects()
        try:
            result = import_doc({"networks": [testnet],
                                 "connects": [connect("unitcoretestnet", "unitcore")]})
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(connects(), before + [["unitcoretestnet", "unitcore"]])
            for a, b in [("unitcore", "unitcoretestnet"), ("unitcoretestnet", "unitcore")]:
                result = import_doc({"connects": [connect(a, b)]})
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(connects(), before + [["unitcoretestnet", "unitcore"]])
        finally:
            stack.sql("DELETE connects FROM connects JOIN chains ON chains.id IN (chain_a, chain_b) "
                      "WHERE chains.slug = 'unitcoretestnet'; "
                      "DELETE FROM chains WHERE slug = 'unitcoretestnet'")
        self.assertEqual(connects(), before)

    def test_a_bad_entry_is_named_and_nothing_is_written(self):
        def broken(edit):
            doc = copy.deepcopy(fixture.doc)
            extra = copy.deepcopy(doc["history"][0])  # a valid new record that must not land
            extra.update({"id": "5000", "source_tx_index": 999})
            extra.pop("hash")
            doc["history"].append(extra)
            doc["pairs"][0]["a2b_min_deposit_amount"] = "2"  # a valid change that must not land
            edit(doc)
            return doc

        def set_field(section, index, field, value):
            return lambda doc: doc[section][index].__setitem__(field, value)

        cases = [
            (set_field("history", 12, "source_amount", "1.0000000000000000001"),
             "history[12].source_amount"),
            (set_field("history", 3, "hash", "00" * 32), "history[3].hash"),
            (set_field("history", 4, "source_deposit_address", "0x" + "12" * 20),
             "history[4].source_deposit_address"),
            (set_field("history", 5, "status", "Done"), "history[5].status"),
            (set_field("history", 6, "pair_id", 99), "history[6].pair_id"),
            (set_field("history", 7, "source_tx_hash", "0x1234"), "history[7].source_tx_hash"),
            (set_field("history", 8, "destination_asset_id", "999"),
             "history[8].destination_asset_id"),
            (set_field("networks", 0, "chain_id", "1"), "networks[0].chain_id"),
            (set_field("assets", 2, "decimals", 19), "assets[2].decimals"),
            (set_field("assets", 3, "asset", "0x123"), "assets[3].asset"),
            (set_field("pairs", 1, "a2b_fee_percent", "10000.5"), "pairs[1].a2b_fee_percent"),
            (set_field("pairs", 1, "b2a_disabled", "yes"), "pairs[1].b2a_disabled"),
            (set_field("chains", 0, "status", "DOWN"), "chains[0].status"),
            (lambda doc: doc["history"][9].pop("source_tx_index"), "history[9].source_tx_index"),
            (lambda doc: doc["history"].append(doc["history"][2]), "history[61].id"),
        ]
        before = checksums()
        for edit, where in cases:
            result = import_doc(broken(edit))
            self.assertEqual(result.returncode, 1, where)
            self.assertIn(f"nothing written: {where}: ", result.stderr)
            self.assertEqual(checksums(), before, where)
        not_json = import_doc('{"history": [')
        self.assertEqual(not_json.returncode, 1)
        self.assertIn("not valid JSON", not_json.stderr)
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM history WHERE id = 5000"), [["0"]])

    def test_hash_rule_and_exact_amounts_up_to_2_pow_256(self):
        recipient = "0x" + "ab" * 20
        tx_hash = "0x" + "cd" * 32
        base = {"source_sender": "0x" + "01" * 20, "source_block_number": "10",
                "source_block_timestamp": "1700000000", "source_tx_hash": tx_hash,
                "destination_block_number": "", "destination_tx_hash": "",
                "status": "Pending", "destination_address": recipient}
        zero_decimals = {"id": "900", "asset": "0x" + "77" * 20, "name": "Whole", "symbol": "WHL",
                         "decimals": 0, "asset_type": "ERC-20", "slug": "unitcore"}
        zero_decimals_iot = {**zero_decimals, "id": "901", "asset": "0x" + "78" * 20,
                             "asset_type": "NRC-6", "slug": "unitiot"}
        pair = {"id": "90", "asset_a_id": "900", "asset_b_id": "901",
                "a2b_min_deposit_amount": "1", "b2a_min_deposit_amount": "1",
                "a2b_fee_percent": "0.000001", "b2a_fee_percent": "10000",
                "a2b_fee_min_amount": UINT256_MAX, "b2a_fee_min_amount": "0",
                "a2b_auto_confirm_deposit_amount": "5", "b2a_auto_confirm_deposit_amount": "5",
                "a2b_disabled": False, "b2a_disabled": False}
        deposit = deposit_address(recipient.lower(), "unitiot", "unitcore")
        huge_18 = UINT256_MAX[:-18] + "." + UINT256_MAX[-18:]
        doc = {
            "assets": [zero_decimals, zero_decimals_iot], "pairs": [pair],
            "chains": [{"slug": "unitiot", "status": "STUCK", "latest_height": "7",
                        "supply": huge_18}],
            "history": [
                {**base, "id": "7001", "pair_id": 90, "source_slug": "unitcore",
                 "destination_slug": "unitiot", "source_asset_id": "900",
                 "destination_asset_id": "901", "source_tx_index": 0,
                 "source_deposit_address": deposit, "source_amount": UINT256_MAX,
                 "destination_amount": "0", "fee": UINT256_MAX},
                {**base, "id": "7002", "pair_id": 1, "source_slug": "unitcore",
                 "destination_slug": "unitiot", "source_asset_id": "1",
                 "destination_asset_id": "2", "source_tx_index": 1,
                 "source_deposit_address": deposit, "source_amount": huge_18,
                 "destination_amount": "0.000000000000000001", "fee": "0"},
            ]}
        result = import_doc(doc)
        self.assertEqual(result.returncode, 0, result.stderr)

        expected_hash = hashlib.sha256(f"UNITCore:36888:{tx_hash}:0".encode()).hexdigest()
        whole = stack.get(f"/v1/history/hash?hash={expected_hash}")
        self.assertEqual(whole.status, 200, whole)
        body = whole.json()
        self.assertEqual((body["id"], body["source_amount"], body["fee"],
                          body["destination_amount"], body["source_asset_decimals"]),
                         ("7001", UINT256_MAX, UINT256_MAX, "0", 0))
        coin = stack.get("/v1/history?source_tx_hash=" + tx_hash + "&pair_id=1").json()["list"]
        self.assertEqual([(r["id"], r["source_amount"], r["destination_amount"], r["fee"])
                          for r in coin],
                         [("7002", "115792089237316195423570985008687907853269984665640564039457"
                                   ".584007913129639935", "0.000000000000000001", "0")])
        pairs = {p["id"]: p for p in stack.get("/v1/pairs").json()["pairs"]}
        self.assertEqual((pairs["90"]["a2b_fee_percent"], pairs["90"]["b2a_fee_percent"],
                          pairs["90"]["a2b_fee_min_amount"]),
                         ("0.000001", "10000.000000", UINT256_MAX))
        iot = stack.get("/v1/ab").json()["chains"][1]
        self.assertEqual((iot["status"], iot["latest_height"], iot["supply"]),
                         ("STUCK", "7", huge_18))
        # The importer recorded the deposit address of each record for the watchers.
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM deposit_accounts WHERE "
                                   f"deposit_address = '{deposit}'"), [["1"]])


if __name__ == "__main__":
    unittest.main()
