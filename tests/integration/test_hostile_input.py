"""Hostile query strings in every parameter of every endpoint, through nginx: each gets a 4xx
JSON error of the contract's shape, never a 5xx, and nothing reaches the database."""

import json
import unittest

from fixture import Fixture
from harness import Stack

stack = None
fixture = Fixture()

PARAMS = {
    "/v1/account": ["recipient_address", "recipient_blockchain", "deposit_blockchain"],
    "/v1/history": ["page_id", "page_size", "source_deposit_address", "source_sender",
                    "source_blockchain", "source_asset_id", "source_tx_hash",
                    "destination_address", "destination_blockchain", "destination_asset_id",
                    "destination_tx_hash", "pair_id", "status", "order"],
    "/v1/history/hash": ["hash"],
}
PARAMETERLESS = ["/v1/networks", "/v1/connects", "/v1/pairs", "/v1/ab"]

# (raw, already-encoded value, the error codes it may produce)
INVALID = ["invalid_parameter", "missing_parameter"]
HOSTILE = [
    ("%27%3B%20DROP%20TABLE%20history%3B%20--", INVALID),          # '; DROP TABLE history; --
    ("1%27%20OR%20%271%27%3D%271", INVALID),                         # 1' OR '1'='1
    ("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEf%00", INVALID),       # NUL byte
    ("%00", INVALID),
    ("%zz", INVALID), ("%", INVALID), ("%4", INVALID), ("abc%G1", INVALID),
    ("%ff%fe", INVALID), ("%c3%28", INVALID), ("%ed%a0%80", INVALID),  # invalid UTF-8
    ("99999999999999999999999", INVALID), ("18446744073709551616", INVALID),
    ("-1", INVALID), ("+1", INVALID), ("1e3", INVALID), ("0x10", INVALID),
    # Unicode look-alikes of hex digits: fullwidth "ａ" and Cyrillic "а".
    ("0x" + "%EF%BD%81" * 40, INVALID), ("0x" + "%D0%B0" * 40, INVALID),
    ("0x" + "%EF%BD%81" * 64, INVALID),
    ("%3Cscript%3E", INVALID), ("..%2F..%2Fetc%2Fpasswd", INVALID),
    ("a" * 5000, ["query_too_long"]),
    ("a" * 10000, ["query_too_long"]),
]
LEAKS = [b"SQL", b"sql", b"MariaDB", b"mysql", b"/tmp", b"Exception", b"stack"]


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


class HostileInput(unittest.TestCase):
    def assert_error(self, target, codes):
        r = stack.get(target)
        where = f"{target[:120]} -> {r.status} {r.body[:200]!r}"
        self.assertIn(r.status, (400, 404, 414), where)
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8", where)
        error = json.loads(r.body)["error"]
        self.assertIn(error["code"], codes, where)
        self.assertEqual(error["request_id"], r.headers["X-Request-Id"], where)
        self.assertEqual({"code", "message", "request_id"} <= set(error), True, where)
        for leak in LEAKS:
            self.assertNotIn(leak, r.body, where)
        return r

    def test_every_parameter_of_every_endpoint(self):
        count = 0
        for path, names in PARAMS.items():
            for name in names:
                for value, codes in HOSTILE:
                    with self.subTest(path=path, param=name, value=value[:40]):
                        r = self.assert_error(f"{path}?{name}={value}", codes)
                        if r.status == 400 and r.json()["error"]["code"] == "invalid_parameter":
                            self.assertIn(r.json()["error"].get("param"), (name, None))
                        count += 1
        self.assertEqual(count, 18 * len(HOSTILE))

    def test_duplicate_known_parameters(self):
        for path, names in PARAMS.items():
            for name in names:
                r = self.assert_error(f"{path}?{name}=1&{name}=1", ["duplicate_parameter"])
                self.assertEqual(r.json()["error"]["param"], name)

    def test_parameterless_endpoints_ignore_unknown_but_reject_undecodable(self):
        for path in PARAMETERLESS:
            self.assertEqual(stack.get(f"{path}?x=%27%3B--&x=2").status, 200)
            self.assert_error(f"{path}?x=%zz", INVALID)
            self.assert_error(f"{path}?x=%00", INVALID)
            self.assert_error(f"{path}?x={'a' * 5000}", ["query_too_long"])

    def test_long_query_is_414_at_the_worker_and_at_nginx(self):
        at_limit = stack.get("/v1/networks?x=" + "a" * (4096 - 2))
        self.assertEqual(at_limit.status, 200)
        over = self.assert_error("/v1/networks?x=" + "a" * (4096 - 1), ["query_too_long"])
        self.assertEqual(over.status, 414)
        huge = self.assert_error("/v1/networks?x=" + "a" * 20000, ["query_too_long"])
        self.assertEqual(huge.status, 414)

    def test_nothing_reached_the_database(self):
        self.test_every_parameter_of_every_endpoint()
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM history"), [[str(len(fixture.history))]])
        self.assertEqual(stack.get("/v1/history").json()["total_history"],
                         str(len(fixture.history)))


if __name__ == "__main__":
    unittest.main()
