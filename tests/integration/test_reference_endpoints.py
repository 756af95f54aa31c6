"""/v1/networks, /v1/connects, /v1/pairs and /v1/ab through nginx, field by field, plus the
protocol rules every endpoint shares: ETag/304, HEAD, Cache-Control, Content-Type, X-Request-Id."""

import unittest
from urllib.parse import urlencode

from fixture import Fixture, valid_params
from harness import Stack, await_true, endpoint_descriptions

JSON = "application/json; charset=utf-8"
stack = None
fixture = Fixture()


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


CORE = {"network": "UNITCore", "chain_id": "36888", "base_chain": "MainBase", "slug": "unitcore"}
IOT = {"network": "UNITIoT", "chain_id": "1012", "base_chain": "SideBase", "slug": "unitiot"}


class ReferenceEndpoints(unittest.TestCase):
    def get_json(self, target):
        r = stack.get(target)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers["Content-Type"], JSON)
        return r, r.json()

    def test_networks_lists_the_deployment_chains_in_order(self):
        r, body = self.get_json("/v1/networks")
        self.assertEqual(body, {"networks": [CORE, IOT]})
        self.assertEqual([list(n) for n in body["networks"]],
                         [["network", "chain_id", "base_chain", "slug"]] * 2)
        self.assertEqual(r.headers["Cache-Control"], "public, max-age=60")

    def test_connects_joins_core_and_iot(self):
        r, body = self.get_json("/v1/connects")
        self.assertEqual(body, {"connects": [{"bc1": CORE, "bc2": IOT}]})
        self.assertEqual(r.headers["Cache-Control"], "public, max-age=60")

    def test_pairs_render_every_field_exactly(self):
        _, body = self.get_json("/v1/pairs")
        self.assertEqual([p["id"] for p in body["pairs"]], ["1", "2", "3"])
        usdt = body["pairs"][1]
        self.assertEqual(usdt, {
            "id": "2", "asset_a_id": "3", "asset_b_id": "4",
            "asset_a": fixture.asset(3), "asset_b": fixture.asset(4),
            "a2b_min_deposit_amount": "1", "b2a_min_deposit_amount": "0.5",
            "a2b_fee_percent": "10.000000", "b2a_fee_percent": "0.000000",
            "a2b_fee_min_amount": "0.1", "b2a_fee_min_amount": "0",
            "a2b_auto_confirm_deposit_amount": "88.45", "b2a_auto_confirm_deposit_amount": "1000",
            "connect_pair": "unitcore-unitiot", "a2b_disabled": False, "b2a_disabled": True})
        self.assertEqual(list(usdt), [
            "id", "asset_a_id", "asset_b_id", "asset_a", "asset_b",
            "a2b_min_deposit_amount", "b2a_min_deposit_amount", "a2b_fee_percent",
            "b2a_fee_percent", "a2b_fee_min_amount", "b2a_fee_min_amount",
            "a2b_auto_confirm_deposit_amount", "b2a_auto_confirm_deposit_amount",
            "connect_pair", "a2b_disabled", "b2a_disabled"])
        self.assertEqual(usdt["asset_a"]["asset"], "0x4287f0b5260f6aEB8dFB8a6483D69a64061ac3A6")
        self.assertEqual(usdt["asset_a"]["decimals"], 6)
        coin = body["pairs"][0]["asset_a"]
        self.assertEqual(coin, {"id": "1", "asset": "", "name": "UNIT", "symbol": "UNIT",
                                "decimals": 18, "asset_type": "Coin", **CORE})
        wbtc = body["pairs"][2]
        self.assertEqual((wbtc["a2b_fee_percent"], wbtc["a2b_min_deposit_amount"],
                          wbtc["a2b_fee_min_amount"]), ("25.000000", "0.001", "0.00001"))

    def test_ab_reports_supply_per_chain(self):
        r, body = self.get_json("/v1/ab")
        self.assertEqual(body, {"chains": [
            {"slug": "unitcore", "network": "UNITCore", "chain_id": "36888",
             "base_chain": "MainBase", "status": "OK", "latest_height": "1873221", "name": "UNIT",
             "symbol": "UNIT", "decimals": 18, "supply": "987654321.123456789012345678"},
            {"slug": "unitiot", "network": "UNITIoT", "chain_id": "1012",
             "base_chain": "SideBase", "status": "SYNCING", "latest_height": "554120",
             "name": "UNIT", "symbol": "UNIT", "decimals": 18, "supply": "12345"}]})
        self.assertEqual(r.headers["Cache-Control"], "public, max-age=5")

    def test_unknown_parameters_are_ignored(self):
        self.assertEqual(stack.get("/v1/networks?cb=123&x=%20").json(),
                         stack.get("/v1/networks").json())


class Protocol(unittest.TestCase):
    def test_strong_etag_and_304(self):
        first = stack.get("/v1/pairs")
        etag = first.headers["ETag"]
        self.assertRegex(etag, r'^"[0-9a-f]{32}"$')
        self.assertEqual(stack.get("/v1/pairs").headers["ETag"], etag)
        for header in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
            r = stack.get("/v1/pairs", {"If-None-Match": header})
            self.assertEqual(r.status, 304, header)
            self.assertEqual(r.body, b"")
            self.assertEqual(r.headers["ETag"], etag)
            self.assertEqual(r.headers["Cache-Control"], "public, max-age=60")
        self.assertEqual(stack.get("/v1/pairs", {"If-None-Match": '"other"'}).status, 200)
        self.assertNotEqual(stack.get("/v1/networks").headers["ETag"], etag)

    def test_head_answers_like_get_without_a_body(self):
        for path in ("/v1/networks", "/v1/ab", "/v1/history?page_size=3", "/v1/nope",
                     "/v1/history?page_id=x"):
            get = stack.get(path)
            head = stack.request("HEAD", path)
            self.assertEqual(head.status, get.status, path)
            self.assertEqual(head.body, b"")
            self.assertEqual(head.headers["Content-Type"], JSON)
            self.assertEqual(head.headers.get("ETag"), get.headers.get("ETag"))
            self.assertEqual(head.headers.get("Content-Length"),
                             str(len(get.body)) if get.status == 200 else
                             head.headers.get("Content-Length"))

    def test_every_answer_carries_a_request_id_matching_the_error_body(self):
        ok = stack.get("/v1/networks")
        self.assertRegex(ok.headers["X-Request-Id"], r"^[0-9a-f]{32}$")
        bad = stack.get("/v1/history?page_id=-1")
        self.assertEqual(bad.status, 400)
        self.assertEqual(bad.json()["error"]["request_id"], bad.headers["X-Request-Id"])
        # nginx writes its log line once the answer is out: wait for it, bounded.
        await_true(lambda: bad.headers["X-Request-Id"] in stack.nginx_access_log(), 5, 0.05,
                   "the request id in nginx's access log")

    def test_unknown_path_is_a_json_404(self):
        r = stack.get("/v1/nope")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.headers["Content-Type"], JSON)
        self.assertEqual(r.json(), {"error": {
            "code": "not_found", "message": "No such endpoint",
            "request_id": r.headers["X-Request-Id"]}})
        self.assertEqual(stack.get("/v1/networks/").status, 404)
        outside = stack.get("/other")
        self.assertEqual(outside.status, 404)
        self.assertEqual(outside.json()["error"]["code"], "not_found")

    def test_other_methods_are_405_with_allow(self):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            r = stack.request(method, "/v1/networks")
            self.assertEqual(r.status, 405, method)
            self.assertEqual(r.headers["Allow"], "GET, HEAD, OPTIONS")
            self.assertEqual(r.json()["error"]["code"], "method_not_allowed")

    def test_every_endpoint_answers_with_its_described_cache_control(self):
        # The router sets Cache-Control from the endpoint's description (src/api/endpoints.h), for
        # a 200 and its 304 alike; an error is no-store. A valid request of each endpoint, its
        # required parameters from fixture.py's samples (a record hash there is not final: the
        # final policy of /v1/history/hash is test_history's ByHash).
        samples = fixture.sample_values()
        for endpoint in endpoint_descriptions()["endpoints"]:
            path = endpoint["path"]
            with self.subTest(path):
                query = urlencode(valid_params(endpoint, samples))
                target = f"{path}?{query}" if query else path
                ok = stack.get(target)
                if endpoint["body"] != "json":
                    # This stack serves no events (test_events has the streams and long-polls):
                    # a 404, no-store.
                    self.assertEqual((ok.status, ok.json()["error"]["code"],
                                      ok.headers["Cache-Control"]), (404, "not_found", "no-store"))
                    continue
                self.assertEqual(ok.status, 200, ok)
                self.assertEqual(ok.headers["Cache-Control"], endpoint["cache_control"])
                again = stack.get(target, {"If-None-Match": ok.headers["ETag"]})
                self.assertEqual((again.status, again.headers["Cache-Control"]),
                                 (304, endpoint["cache_control"]))
                error = stack.get(f"{path}?x={'a' * 5000}")  # the worker's 414
                self.assertEqual((error.status, error.headers["Cache-Control"]), (414, "no-store"))

    def test_errors_are_not_cached(self):
        self.assertEqual(stack.get("/v1/history?status=nope").headers["Cache-Control"], "no-store")


if __name__ == "__main__":
    unittest.main()
