"""Hostile query strings in every parameter of every endpoint, through nginx. Table-driven: each
value of the battery (SQL metacharacters, NUL, invalid escapes, invalid UTF-8, values of 3.9, 5 and
10 kB, numbers past uint64, look-alikes of hex digits and of the enum words, header and JSON
injection) in each parameter gets exactly the expected status and error code, naming the
parameter at fault, in the contract's JSON error body with this request's id, with
X-Content-Type-Options: nosniff, no nginx version and nothing of the database; never a 5xx.
Repeated and disguised parameter names, and numbers at the edge of uint64, have exact answers
too. Nothing of it reaches the database."""

import unittest

from fixture import Fixture, valid_params
from harness import Stack, endpoint_descriptions

stack = None
fixture = Fixture()

JSON = "application/json; charset=utf-8"
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
# Every parameter of every endpoint, from the endpoint descriptions (src/api/endpoints.h).
ENDPOINTS = {e["path"]: e for e in endpoint_descriptions()["endpoints"]}
PARAMS = {path: [p["name"] for p in e["params"]] for path, e in ENDPOINTS.items() if e["params"]}
# The other required parameters get valid values (fixture.py's samples of their kinds), so the
# hostile one is the only fault.
VALID = {path: valid_params(e, fixture.sample_values()) for path, e in ENDPOINTS.items()}
PARAMETERLESS = [path for path, e in ENDPOINTS.items() if not e["params"]]
WORKER_414 = "The query string is longer than 4096 bytes"
NGINX_414 = "The request target is too long."

# (what it is, the value as sent, already percent-encoded): each is a 400 invalid_parameter
# naming the parameter, in every parameter.
HOSTILE = [
    ("SQL: quote, statement, comment", "%27%3B%20DROP%20TABLE%20history%3B%20--"),
    ("SQL: tautology", "1%27%20OR%20%271%27%3D%271"),
    ("SQL: UNION", "0%20UNION%20SELECT%20password%20FROM%20mysql.user"),
    ("SQL: inline comment", "1%2F**%2FOR%2F**%2F1"),
    ("SQL: backslash quote", "%5C%27"),
    ("SQL: double-encoded quote", "%2527"),
    ("SQL: LIKE wildcards, address length", "0x" + "%25" * 40),
    ("SQL: LIKE wildcards, hash length", "0x" + "_" * 64),
    ("NUL after an address", "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEf%00"),
    ("NUL", "%00"),
    ("escape %zz", "%zz"), ("lone %", "%"), ("short escape", "%4"), ("escape %G1", "abc%G1"),
    ("invalid UTF-8 ff fe", "%ff%fe"), ("invalid UTF-8 c3 28", "%c3%28"),
    ("UTF-8 surrogate", "%ed%a0%80"), ("overlong UTF-8 /", "%C0%AF"),
    ("23 digits", "9" * 23), ("2^64", "18446744073709551616"), ("-1", "-1"),
    ("+1 (a space, then 1)", "+1"), ("1e3", "1e3"), ("0x10", "0x10"),
    ("fullwidth digit one", "%EF%BC%91"),
    # Look-alikes of hex digits: fullwidth "a" and Cyrillic "a", at address and hash lengths.
    ("fullwidth a x40", "0x" + "%EF%BD%81" * 40), ("Cyrillic a x40", "0x" + "%D0%B0" * 40),
    ("fullwidth a x64", "0x" + "%EF%BD%81" * 64), ("Cyrillic a x64", "0x" + "%D0%B0" * 64),
    ("zero-width space in an address", ADDRESS[:-1] + "%E2%80%8B"),
    ("byte-order mark before a word", "%EF%BB%BFPending"),
    ("dotted capital I in a word", "PEND%C4%B0NG"), ("dotless i in a word", "pend%C4%B1ng"),
    ("fullwidth D in a word", "%EF%BC%A4ESC"),
    ("CRLF header injection", "%0D%0ASet-Cookie%3A%20x%3D1"),
    ("JSON injection", "%22%7D%2C%22x%22%3A%22"),
    ("HTML", "%3Cscript%3Ealert(1)%3C%2Fscript%3E"),
    ("path traversal", "..%2F..%2Fetc%2Fpasswd"),
    ("3900 bytes (under the limit)", "a" * 3900),
]
# Too long for a query string: the worker's 414 up to nginx's buffer, nginx's own past it.
TOO_LONG = [("5 kB", "a" * 5000, WORKER_414), ("10 kB", "a" * 10000, NGINX_414)]

LEAKS = [b"SQL", b"sql", b"MariaDB", b"mysql", b"/tmp", b"Exception", b"stack", b"nginx/"]


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


def target(path, name, value):
    others = "".join(f"&{k}={v}" for k, v in VALID[path].items() if k != name)
    return f"{path}?{name}={value}{others}"


class HostileInput(unittest.TestCase):
    def assert_error(self, target, status, code, param=None, message=None):
        """Exactly this status and code, param naming the parameter at fault (absent: None), in
        the contract's body with this request's id; the headers every answer has; no leak."""
        r = stack.get(target)
        where = f"{target[:120]} -> {r.status} {r.body[:200]!r}"
        self.assertEqual(r.status, status, where)
        self.assertEqual(r.headers["Content-Type"], JSON, where)
        self.assertEqual(r.headers.get("X-Content-Type-Options"), "nosniff", where)
        self.assertEqual(r.headers.get("Server"), "nginx", where)
        self.assertRegex(r.headers["X-Request-Id"], r"^[0-9a-f]{32}$", where)
        error = r.json()["error"]
        expected = {"code": code, "request_id": r.headers["X-Request-Id"]}
        if param is not None:
            expected["param"] = param
        self.assertEqual({k: v for k, v in error.items() if k != "message"}, expected, where)
        if message is not None:
            self.assertEqual(error["message"], message, where)
        self.assertTrue(error["message"], where)
        for leak in LEAKS:
            self.assertNotIn(leak, r.body, where)
        return r

    def test_every_value_in_every_parameter_of_every_endpoint(self):
        deposit_accounts = stack.sql("SELECT COUNT(*) FROM deposit_accounts")
        count = 0
        for path, names in PARAMS.items():
            for name in names:
                for label, value in HOSTILE:
                    with self.subTest(path=path, param=name, value=label):
                        self.assert_error(target(path, name, value), 400, "invalid_parameter",
                                          param=name)
                        count += 1
                for label, value, message in TOO_LONG:
                    with self.subTest(path=path, param=name, value=label):
                        self.assert_error(target(path, name, value), 414, "query_too_long",
                                          message=message)
                        count += 1
        # 18 parameters of the JSON endpoints, the two event streams' hash and address, and the
        # two long-polls' hash or address and after.
        self.assertEqual(count, 24 * (len(HOSTILE) + len(TOO_LONG)))
        # Nothing of it reached the database: no deposit address recorded, no row changed.
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM deposit_accounts"), deposit_accounts)
        self.assertEqual(stack.sql("SELECT COUNT(*) FROM history"), [[str(len(fixture.history))]])
        self.assertEqual(stack.get("/v1/history").json()["total_history"],
                         str(len(fixture.history)))

    def test_a_known_parameter_given_twice(self):
        for path, names in PARAMS.items():
            for name in names:
                for first, second in (("1", "1"), ("", ""), ("%27", "2")):
                    with self.subTest(path=path, param=name, values=(first, second)):
                        self.assert_error(f"{target(path, name, first)}&{name}={second}", 400,
                                          "duplicate_parameter", param=name)

    def test_disguised_and_malformed_parameter_names(self):
        cases = [
            # An escaped name is the same name: still a duplicate.
            ("/v1/history?page%5Fid=1&page_id=2", 400, "duplicate_parameter", "page_id"),
            ("/v1/history?%73tatus=Pending&status=Error", 400, "duplicate_parameter", "status"),
            (f"/v1/account?recipient_address={ADDRESS}&recipient%5Faddress={ADDRESS}"
             "&recipient_blockchain=unitcore&deposit_blockchain=unitiot", 400,
             "duplicate_parameter", "recipient_address"),
            # A known name with a value that cannot be decoded.
            ("/v1/history?status=%ff", 400, "invalid_parameter", "status"),
            # Separators inside a value are part of it.
            ("/v1/history?page_id=1=2", 400, "invalid_parameter", "page_id"),
            ("/v1/history?page_id=1;page_size=2", 400, "invalid_parameter", "page_id"),
            ("/v1/history?page_id=1%26page_size=2", 400, "invalid_parameter", "page_id"),
        ]
        for query, status, code, param in cases:
            with self.subTest(query):
                self.assert_error(query, status, code, param=param)

    def test_names_that_are_not_known_are_ignored(self):
        plain = stack.get("/v1/history").body
        # Names that cannot be decoded, and undecodable values of unknown names, are ignored
        # like any unknown name: an error never repeats what the endpoint does not know.
        for query in ("PAGE_ID=x", "page_id[]=x", "page_id%20=x", "=1", "&&&", "page_id",
                      "status", "x=%27%3B--&x=2", "x=1&" * 1000, "%zz=1", "page_id%00=1", "%ff=1",
                      "x=%ff", "%E2%80%AESEND%20TO%200xdead=%ZZ", "x=%00&x=%zz"):
            with self.subTest(query[:40]):
                r = stack.get(f"/v1/history?{query}")
                self.assertEqual((r.status, r.body), (200, plain))

    def test_numbers_at_the_edge_of_uint64(self):
        total = str(len(fixture.history))
        max64 = "18446744073709551615"
        cases = [
            (f"page_id={max64}&page_size=100",
             {"page_id": max64, "page_size": "100", "total_page": "1", "total_history": total,
              "list": []}),
            (f"page_size={max64}", {"page_id": "0", "page_size": "100"}),
            (f"pair_id={max64}", {"total_page": "0", "total_history": "0", "list": [],
                                  "pairId": max64}),
            (f"source_asset_id={max64}", {"total_history": "0", "source_asset_id": max64}),
            ("page_id=" + "0" * 30 + "1", {"page_id": "1"}),
        ]
        for query, fields in cases:
            with self.subTest(query):
                r = stack.get(f"/v1/history?{query}")
                self.assertEqual(r.status, 200, r.body[:200])
                body = r.json()
                self.assertEqual({k: body[k] for k in fields}, fields)
        self.assert_error(f"/v1/history?page_id={max64[:-1]}6", 400, "invalid_parameter",
                          param="page_id")

    def test_parameterless_endpoints_ignore_every_parameter_even_undecodable(self):
        for path in PARAMETERLESS:
            with self.subTest(path):
                plain = stack.get(path).body
                for query in ("x=%27%3B--&x=2", "x=%zz", "x=%00", "%zz=%zz", "a" * 4000):
                    r = stack.get(f"{path}?{query}")
                    self.assertEqual((r.status, r.body), (200, plain), query[:40])
                self.assert_error(f"{path}?x={'a' * 5000}", 414, "query_too_long",
                                  message=WORKER_414)
                self.assert_error(f"{path}?x={'a' * 10000}", 414, "query_too_long",
                                  message=NGINX_414)

    def test_long_query_is_414_at_the_worker_and_at_nginx(self):
        at_limit = stack.get("/v1/networks?x=" + "a" * (4096 - 2))
        self.assertEqual(at_limit.status, 200)
        self.assert_error("/v1/networks?x=" + "a" * (4096 - 1), 414, "query_too_long",
                          message=WORKER_414)
        self.assert_error("/v1/networks?x=" + "a" * 20000, 414, "query_too_long",
                          message=NGINX_414)

    def test_the_largest_request_nginx_forwards_reaches_the_worker(self):
        # A request line just inside nginx's 8 KiB buffers (large_client_header_buffers 4 8k),
        # with three headers as long: nginx sends the URL twice (REQUEST_URI, QUERY_STRING) and
        # every header, about 41 KiB of FastCGI parameters, within fcgi_max_params_bytes, so the
        # worker answers its 414 (not a closed connection, which nginx would turn into a 503).
        target = "/v1/networks?x=" + "a" * 8150
        pad = {f"X-Pad-{c}": c.lower() * 8100 for c in "ABC"}
        r = stack.get(target, headers=pad)
        self.assertEqual((r.status, r.json()["error"]["message"]), (414, WORKER_414))
        self.assertEqual(stack.worker_status()["fcgi_rejected"]["too_large"], 0)


if __name__ == "__main__":
    unittest.main()
