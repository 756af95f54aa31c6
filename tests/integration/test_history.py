"""/v1/history and /v1/history/hash through nginx against the sample fixture: every filter
alone and combined, pagination edges, order, the echo block and the by-hash answer."""

import math
import unittest
from urllib.parse import urlencode

from fixture import Fixture
from harness import Stack, endpoint_descriptions

stack = None
fixture = Fixture()
H = fixture.history
HISTORY = next(e for e in endpoint_descriptions()["endpoints"] if e["path"] == "/v1/history")
FILTERS = [p["name"] for p in HISTORY["params"]
           if p["name"] not in ("page_id", "page_size", "order")]
# The echo block of a page without filters: each echoed filter's member, empty, in the
# description's order (db/history_filters.h).
EMPTY_ECHO = {p["echo"]: "" for p in HISTORY["params"] if p["echo"]}


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


def history(**params):
    r = stack.get("/v1/history?" + urlencode(params))
    assert r.status == 200, r
    return r.json()


class Filters(unittest.TestCase):
    def check(self, params, predicate, echo=None):
        """The whole answer for params equals the fixture's matching records, newest first."""
        expected = fixture.records(predicate)
        body = history(page_size=100, **params)
        self.assertEqual(body["list"], expected, params)
        self.assertEqual(body["total_history"], str(len(expected)))
        self.assertEqual(body["total_page"], str(math.ceil(len(expected) / 100)))
        self.assertEqual({k: body[k] for k in EMPTY_ECHO}, {**EMPTY_ECHO, **(echo or {})})
        self.assertGreater(len(expected), 0, f"fixture has no record for {params}")
        return body

    def test_no_filter_returns_everything_newest_first(self):
        body = self.check({}, lambda r: True)
        self.assertEqual(list(body), ["page_id", "page_size", "total_page", "total_history",
                                      "list", *EMPTY_ECHO])

    def test_record_fields_types_and_order(self):
        record = history(page_size=1)["list"][0]
        self.assertEqual(list(record), list(fixture.record(H[-1])))
        self.assertIsInstance(record["pair_id"], int)
        self.assertIsInstance(record["source_asset_decimals"], int)
        for key in ("id", "source_asset_id", "source_block_number", "source_amount"):
            self.assertIsInstance(record[key], str, key)
        self.assertNotIn("status_message", record)

    def test_each_filter_alone(self):
        r0 = H[10]
        cases = [
            ({"source_deposit_address": r0["source_deposit_address"]},
             lambda r: r["source_deposit_address"] == r0["source_deposit_address"],
             {"source_deposit_address": r0["source_deposit_address"]}),
            ({"source_sender": r0["source_sender"]},
             lambda r: r["source_sender"] == r0["source_sender"],
             {"source_sender": r0["source_sender"]}),
            ({"source_blockchain": "unitiot"}, lambda r: r["source_slug"] == "unitiot",
             {"source_blockchain": "unitiot"}),
            ({"source_asset_id": "3"}, lambda r: r["source_asset_id"] == "3",
             {"source_asset_id": "3"}),
            ({"source_tx_hash": r0["source_tx_hash"]},
             lambda r: r["source_tx_hash"] == r0["source_tx_hash"], None),
            ({"destination_address": r0["destination_address"]},
             lambda r: r["destination_address"] == r0["destination_address"],
             {"destination_address": r0["destination_address"]}),
            ({"destination_blockchain": "unitcore"},
             lambda r: r["destination_slug"] == "unitcore", {"destination_blockchain": "unitcore"}),
            ({"destination_asset_id": "6"}, lambda r: r["destination_asset_id"] == "6",
             {"destination_asset_id": "6"}),
            ({"pair_id": "3"}, lambda r: r["pair_id"] == 3, {"pairId": "3"}),
        ]
        confirmed = next(r for r in H if r["status"] == "Confirmed")
        cases.append(({"destination_tx_hash": confirmed["destination_tx_hash"]},
                      lambda r: r.get("destination_tx_hash") == confirmed["destination_tx_hash"],
                      None))
        for status in ("Deposit", "Pending", "Confirmed", "Error"):
            cases.append(({"status": status}, lambda r, s=status: r["status"] == s,
                          {"status": status}))
        # Every filter of the description alone: a new one needs its case here.
        self.assertEqual({name for params, _, _ in cases for name in params}, set(FILTERS))
        for params, predicate, echo in cases:
            with self.subTest(params=params):
                self.check(params, predicate, echo)

    def test_filters_combine(self):
        busy = max({r["destination_address"] for r in H},
                   key=lambda a: sum(r["destination_address"] == a for r in H))
        self.check({"destination_address": busy, "status": "confirmed"},
                   lambda r: r["destination_address"] == busy and r["status"] == "Confirmed",
                   {"destination_address": busy, "status": "Confirmed"})
        self.check({"source_blockchain": "unitcore", "destination_blockchain": "unitiot",
                    "pair_id": "2", "source_asset_id": "3", "destination_asset_id": "4"},
                   lambda r: r["pair_id"] == 2 and r["source_slug"] == "unitcore",
                   {"source_blockchain": "unitcore", "destination_blockchain": "unitiot",
                    "pairId": "2", "source_asset_id": "3", "destination_asset_id": "4"})
        body = history(source_blockchain="unitiot", pair_id="2")
        self.assertEqual((body["total_history"], body["total_page"], body["list"]), ("0", "0", []))

    def test_addresses_and_hashes_match_in_any_case_and_echo_as_sent(self):
        r0 = H[5]
        lower = r0["destination_address"].lower()
        body = history(destination_address=lower, page_size=100)
        self.assertEqual(body["list"], fixture.records(
            lambda r: r["destination_address"] == r0["destination_address"]))
        self.assertEqual(body["destination_address"], lower)
        upper_hash = "0x" + r0["source_tx_hash"][2:].upper()
        self.assertEqual(history(source_tx_hash=upper_hash)["list"], [fixture.record(r0)])

    def test_status_is_case_insensitive_and_echoed_canonically(self):
        body = history(status="pEnDiNg", page_size=100)
        self.assertEqual(body["status"], "Pending")
        self.assertEqual(body["list"], fixture.records(lambda r: r["status"] == "Pending"))

    def test_empty_values_mean_unused(self):
        body = history(status="", source_blockchain="", pair_id="", page_size=100)
        self.assertEqual(body["total_history"], str(len(H)))
        self.assertEqual({k: body[k] for k in EMPTY_ECHO}, EMPTY_ECHO)


class Pagination(unittest.TestCase):
    def test_defaults(self):
        body = history()
        self.assertEqual((body["page_id"], body["page_size"]), ("0", "20"))
        self.assertEqual(body["total_history"], str(len(H)))
        self.assertEqual(body["total_page"], str(math.ceil(len(H) / 20)))
        self.assertEqual(body["list"], fixture.records()[:20])

    def test_pages_partition_the_set_in_both_orders(self):
        for order, ascending in (("DESC", False), ("asc", True), ("Asc", True)):
            pages = [history(page_id=i, page_size=7, order=order) for i in range(9)]
            got = [record for page in pages for record in page["list"]]
            self.assertEqual(got, fixture.records(ascending=ascending), order)
            self.assertEqual([len(p["list"]) for p in pages], [7] * 8 + [4])
            self.assertTrue(all(p["total_page"] == "9" for p in pages))

    def test_page_size_edges(self):
        self.assertEqual(history(page_size=0)["page_size"], "20")
        self.assertEqual(len(history(page_size=0)["list"]), 20)
        for size in (100, 1000, 18446744073709551615):
            body = history(page_size=size)
            self.assertEqual(body["page_size"], "100")
            self.assertEqual(len(body["list"]), len(H))
            self.assertEqual(body["total_page"], "1")
        self.assertEqual(history(page_size=1)["total_page"], str(len(H)))
        self.assertEqual(history(page_size="007")["page_size"], "7")

    def test_page_past_the_end_is_empty_with_true_totals(self):
        for page_id in (9, 1000, 18446744073709551615):
            body = history(page_id=page_id, page_size=7)
            self.assertEqual(body["list"], [])
            self.assertEqual((body["page_id"], body["total_history"], body["total_page"]),
                             (str(page_id), str(len(H)), "9"))


class ByHash(unittest.TestCase):
    def test_each_status_answers_its_record_with_status_message(self):
        # A final record (Confirmed, Error) takes the description's final Cache-Control.
        described = next(e for e in endpoint_descriptions()["endpoints"]
                         if e["path"] == "/v1/history/hash")
        usual, final = described["cache_control"], described["final_cache_control"]
        self.assertTrue(final)
        for status, cache in (("Deposit", usual), ("Pending", usual), ("Confirmed", final),
                              ("Error", final)):
            record = next(r for r in H if r["status"] == status)
            r = stack.get(f"/v1/history/hash?hash={record['hash']}")
            self.assertEqual(r.status, 200)
            self.assertEqual(r.json(), fixture.record(record, with_status_message=True))
            self.assertEqual(list(r.json())[-2:], ["status", "status_message"])
            self.assertEqual(r.headers["Cache-Control"], cache, status)

    def test_not_yet_recorded_values_are_empty_strings(self):
        deposit = next(r for r in H if r["status"] == "Deposit")
        body = stack.get(f"/v1/history/hash?hash={deposit['hash']}").json()
        for field in ("destination_block_number", "destination_block_timestamp",
                      "destination_tx_hash", "destination_amount", "fee"):
            self.assertEqual(body[field], "", field)

    def test_hash_in_any_case_with_or_without_0x(self):
        record = H[3]
        for text in (record["hash"].upper(), "0x" + record["hash"], "0X" + record["hash"].upper()):
            r = stack.get(f"/v1/history/hash?hash={text}")
            self.assertEqual(r.status, 200, text)
            self.assertEqual(r.json()["id"], record["id"])

    def test_unknown_hash_is_404_and_bad_hash_400(self):
        r = stack.get("/v1/history/hash?hash=" + "ab" * 32)
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json()["error"]["code"], "not_found")
        self.assertEqual(r.json()["error"]["param"], "hash")
        missing = stack.get("/v1/history/hash")
        self.assertEqual((missing.status, missing.json()["error"]["code"]),
                         (400, "missing_parameter"))
        for bad in ("ab" * 31, "ab" * 33, "zz" * 32, "0x" + "ab" * 31, "%20" + "ab" * 32):
            r = stack.get("/v1/history/hash?hash=" + bad)
            self.assertEqual((r.status, r.json()["error"]["code"]), (400, "invalid_parameter"))


class SampleCoherence(unittest.TestCase):
    def test_every_deposit_address_is_what_account_derives(self):
        seen = set()
        for r in H:
            key = (r["destination_address"], r["destination_slug"], r["source_slug"])
            if key in seen:
                continue
            seen.add(key)
            query = urlencode({"recipient_address": r["destination_address"],
                               "recipient_blockchain": r["destination_slug"],
                               "deposit_blockchain": r["source_slug"]})
            answer = stack.get("/v1/account?" + query)
            self.assertEqual(answer.status, 200, answer)
            self.assertEqual(answer.json()["deposit_address"], r["source_deposit_address"])


if __name__ == "__main__":
    unittest.main()
