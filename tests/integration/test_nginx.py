"""The shipped nginx drop-ins (nginx/*.conf): nginx -t on them in a minimal nginx.conf, then the
running service through them with nginx's cache on: MISS/HIT/STALE while the database is down and
fresh answers after, 304s and HEAD from the cache, the request id of cached answers, the deposit
address bypass, GET/HEAD only, gzip, size limits, the per-client 429, and the internal-only health
and metrics paths.

The stack's nginx is scripts/nginx-start as shipped (cache and limits on, as every test's unless
it says otherwise); each /v1 request comes from a loopback address of its own
(harness.source_for), so the limits count each apart. The rate limit is tested on a second nginx from the
same script on the same worker socket, with only the zone's rate lowered to 1r/m
(NGINX_CONNECTOR_RATE): the shipped burst, nodelay and 429 handling are what is exercised.
Requests from 127.0.0.2 stand for an outside client: the health paths allow 127.0.0.1 only on
loopback, and limit_req keys on the client address."""

import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from http.client import HTTPResponse
from pathlib import Path

import harness
from fixture import Fixture
from harness import (REPO, SCRIPTS, Headers, Response, Stack, endpoint_descriptions,
                     endpoint_params, nginx_contract)

JSON = "application/json; charset=utf-8"
NGINX = REPO / "nginx"
DROP_INS = ["connector-http.conf", "connector.conf", "connector-cache-rules.conf",
            "connector-v1.conf", "fastcgi-connector.params", "connector-docs.conf",
            "connector-monitoring.conf"]
PROD_SOCKET = "unix:/run/connector/fcgi.sock"
PROD_CACHE = " /var/cache/nginx-connector "
HISTORY = "/v1/history?page_size=3"
ACCOUNT = ("/v1/account?recipient_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
           "&recipient_blockchain=unitcore&deposit_blockchain=unitiot")
OUTSIDE = "127.0.0.2"
# The parameters each endpoint knows, from the endpoint descriptions (src/api/endpoints.h): the
# map of connector-http.conf that lets only these into nginx's cache must name the same ones.
ROUTE_PARAMS = endpoint_params()
DESCRIPTIONS = {e["path"]: e for e in endpoint_descriptions()["endpoints"]}
EVENT_STREAMS = {path for path, e in DESCRIPTIONS.items() if e["body"] != "json"}
# What nginx never stores (scripts/nginx-contract, from the descriptions): the event streams,
# and the deposit addresses (CachePolicy::front_cached).
NGINX_CONTRACT = nginx_contract()
NOT_FRONT_CACHED = {path for path, e in DESCRIPTIONS.items()
                    if not NGINX_CONTRACT.front_cached(e)}

stack = None
fixture = Fixture()


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path, threads=4)


def tearDownModule():
    stack.stop()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def send(port, method, target, headers=None, body=b"", source=None, timeout=30):
    """One HTTP/1.1 request to 127.0.0.1:port from the loopback address `source` (default:
    harness.source_for(target), a client of its own for a /v1 path)."""
    source = source or harness.source_for(target)
    headers = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if body:
        headers["Content-Length"] = str(len(body))
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        sock.sendall(head.encode("latin-1") + body)
        response = HTTPResponse(sock, method=method)
        response.begin()
        data = response.read()
        if stack is not None:  # checked against docs/openapi.yaml when the stack stops
            stack.record(method, target, response.status, response.getheaders(), data)
        return Response(response.status, response.reason, Headers(response.getheaders()), data)


def get(target, headers=None, source=None):
    return send(stack.port, "GET", target, headers, source=source)


def access_line(request_id, prefix=None):
    return harness.nginx_access_line(prefix or stack.nginx_prefix, request_id)


def history_key(**values):
    """The cache key's query of a history page ($connector_cache_args): every parameter of the
    description in its order, the given values, the others empty."""
    return "&".join(f"{name}={values.get(name, '')}" for name in ROUTE_PARAMS["/v1/history"])


def cached_keys():
    return stack.cached_keys()


def cached_soon(target):
    """Whether target is answered from the cache (HIT) soon (10 s at most, on a loaded machine;
    at once as a rule). A client can have the whole answer a moment before nginx has put it in
    the cache (it closes the file after it has seen the end of the FastCGI response): a request
    right after the first can miss."""
    return harness.wait_for(lambda: get(target).headers["X-Cache-Status"] == "HIT", seconds=10)


def upstream_status(request_id, prefix=None):
    return harness.upstream_status(prefix or stack.nginx_prefix, request_id)


def error_body(response, code, message):
    return {"error": {"code": code, "message": message,
                      "request_id": response.headers["X-Request-Id"]}}


def poll(target, until, seconds):
    """GETs target every 0.1 s until until(response) holds; returns every response seen."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen.append(get(target))
        if until(seen[-1]):
            return seen
        time.sleep(0.1)
    raise AssertionError(f"{target}: condition not met within {seconds} s; last: "
                         f"{[(r.status, r.headers.get('X-Cache-Status')) for r in seen[-5:]]}")


class ShippedFiles(unittest.TestCase):
    def test_nginx_t_accepts_the_drop_ins_in_a_minimal_nginx_conf(self):
        """The drop-ins as an existing Debian nginx would hold them (conf.d/, snippets/), only
        the worker socket and the cache directory moved into a temporary directory."""
        tmp = Path(tempfile.mkdtemp(prefix="connector-nginx-t-"))
        try:
            (tmp / "conf.d").mkdir()
            (tmp / "snippets").mkdir()
            http = (NGINX / "connector-http.conf").read_text()
            # Listed keepalive + 2 times: nginx retries a dead worker's requests only on
            # "another" server, and each kept connection closed under a request uses up one
            # too, up to every idle one nginx caches (keepalive).
            keepalive = int(re.search(r"^\s*keepalive (\d+);", http, re.M).group(1))
            self.assertEqual(http.count(PROD_SOCKET), keepalive + 2)
            self.assertEqual(http.count(PROD_CACHE), 1)
            (tmp / "conf.d" / "connector-http.conf").write_text(
                http.replace(PROD_SOCKET, f"unix:{tmp}/fcgi.sock")
                    .replace(PROD_CACHE, f" {tmp}/cache "))
            for name in DROP_INS[1:]:
                shutil.copy(NGINX / name, tmp / "snippets" / name)
            conf = tmp / "nginx.conf"
            conf.write_text(f"""
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{}}
http {{
    client_body_temp_path {tmp}/client_body;
    fastcgi_temp_path {tmp}/fastcgi;
    proxy_temp_path {tmp}/proxy;
    scgi_temp_path {tmp}/scgi;
    uwsgi_temp_path {tmp}/uwsgi;
    include conf.d/*.conf;
    server {{
        listen 127.0.0.1:{_free_port()} default_server;
        server_name api.example.com;
        include snippets/connector.conf;
    }}
}}
""")
            result = subprocess.run(["nginx", "-t", "-p", f"{tmp}/", "-c", str(conf),
                                     "-e", str(tmp / "error.log")],
                                    capture_output=True, text=True, timeout=30)
            # Not a single warning either.
            self.assertEqual(result.stderr,
                             f"nginx: the configuration file {conf} syntax is ok\n"
                             f"nginx: configuration file {conf} test is successful\n")
            self.assertEqual(result.returncode, 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_each_drop_in_says_what_it_is_for_and_where_it_goes(self):
        for name in DROP_INS:
            text = (NGINX / name).read_text()
            self.assertTrue(text.startswith("# UNIT connector query service: "), name)
            header = text[:text.index("\n\n")]
            self.assertIn("\n# Where: ", header, name)
            self.assertRegex(header, r"/etc/nginx/(conf\.d|snippets)/" + re.escape(name), name)

    def test_the_cache_rules_have_one_line_per_endpoint(self):
        lines = [line for line in (NGINX / "connector-cache-rules.conf").read_text().splitlines()
                 if line.startswith("location")]
        # Every endpoint that answers a document (the event streams are connector-events.conf's),
        # once; the cache off for those whose description says nginx never stores them.
        paths = [line.split()[2] for line in lines]
        self.assertEqual(sorted(paths), sorted(set(DESCRIPTIONS) - EVENT_STREAMS))
        self.assertEqual({line.split()[2] for line in lines if "fastcgi_cache off;" in line},
                         NOT_FRONT_CACHED - EVENT_STREAMS)


class Caching(unittest.TestCase):
    def test_hits_carry_their_own_request_id_and_answer_304(self):
        # A key of this test's own: a Confirmed record no other test asks for.
        confirmed = next(r for r in fixture.history if r["status"] == "Confirmed")
        target = f"/v1/history/hash?hash={confirmed['hash']}"
        first = get(target)
        self.assertTrue(cached_soon(target))
        hits = [get(target) for _ in range(2)]
        self.assertEqual((first.status, first.headers["X-Cache-Status"]), (200, "MISS"))
        self.assertEqual(upstream_status(first.headers["X-Request-Id"]), "200")
        self.assertEqual([h.headers["X-Cache-Status"] for h in hits], ["HIT", "HIT"])
        ids = [r.headers["X-Request-Id"] for r in [first, *hits]]
        self.assertEqual(len(set(ids)), 3)
        for r in hits:
            self.assertRegex(r.headers["X-Request-Id"], r"^[0-9a-f]{32}$")
            self.assertEqual(r.body, first.body)
            self.assertEqual(r.headers["ETag"], first.headers["ETag"])
            self.assertEqual(r.headers["Cache-Control"], "public, max-age=3600")
            self.assertEqual(r.headers["Content-Type"], JSON)
            self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "-")
        etag = first.headers["ETag"]
        for header in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
            r = get(target, {"If-None-Match": header})
            self.assertEqual((r.status, r.body, r.headers["X-Cache-Status"]), (304, b"", "HIT"))
            self.assertEqual(r.headers["ETag"], etag)
            self.assertEqual(r.headers["Cache-Control"], "public, max-age=3600")
            self.assertNotIn(r.headers["X-Request-Id"], ids)
        r = get(target, {"If-None-Match": '"other"'})
        self.assertEqual((r.status, r.body, r.headers["X-Cache-Status"]), (200, first.body, "HIT"))

    def test_only_canonical_requests_enter_the_cache(self):
        """A request whose parameters are all known to its endpoint, each once and in canonical
        spelling, uses the cache (MISS, then HIT); any other spelling (a parameter the endpoint
        does not know, a near miss of a known name, a name given twice, a leading zero, a case
        variant, an escape, page_size above 100) skips it (BYPASS) and is answered by the
        worker. The names come from the router."""
        # Canonical spellings of one record's values, for every parameter the description has
        # (fixture.filter_values): every answer below has records (an empty page is not
        # stored: test_empty_pages_are_answered_but_not_stored).
        r7 = fixture.history[7]
        canonical = fixture.filter_values(DESCRIPTIONS["/v1/history"], r7)
        address, tx_hash = r7["destination_address"], r7["source_tx_hash"]
        self.assertEqual(list(canonical), ROUTE_PARAMS["/v1/history"])
        for name, value in canonical.items():
            for query in (f"{name}={value}", f"page_size=9&{name}={value}&order=DESC"
                          if name not in ("page_size", "order") else f"{name}={value}&page_id=0"):
                self.assertTrue(cached_soon(f"/v1/history?{query}"), query)
        # (/v1/ab: test_stale_while_the_database_is_down_then_fresh_again needs its MISS.)
        for path in ("/v1/networks", "/v1/connects", "/v1/pairs"):
            self.assertIn(get(path).headers["X-Cache-Status"], ("MISS", "HIT"), path)

        noncanonical = {
            "/v1/history": [
                "page_id=04", "page_id=00", "page_size=007", "page_size=101", "page_size=500",
                "page_size=0", "status=pending", "status=CONFIRMED", "order=asc", "order=Desc",
                f"destination_address={address}", f"source_sender={address.upper()}",
                f"source_tx_hash={tx_hash.upper()}", "page_id=1&page_id=1", "status=&status=",
                "page%5Fid=1", "page_id=%31", "page_id=1&", "&page_id=1", "page_id", "pair_id=01",
                "order=ASC+"],
            "/v1/history/hash": [f"hash={fixture.history[7]['hash'].upper()}",
                                 f"hash=0X{fixture.history[7]['hash']}", "hash=",
                                 f"hash={fixture.history[7]['hash']}&hash=1"],
        }
        for path, params in ROUTE_PARAMS.items():
            if path in NOT_FRONT_CACHED:
                continue  # never cached (connector-cache-rules.conf; a hand-over to nchan)
            # Near misses of a known name, an empty name and the usual cache-busters.
            names = [f"{n}{extra}" for n in params for extra in ("x", "[]")]
            names += [n.upper() for n in params] + ["_", "t", "=1", "cb"]
            queries = [f"{name}=1" for name in names]
            queries += [f"{params[0]}=&{name}=1" if params else f"&{name}" for name in names]
            for query in queries + noncanonical.get(path, []):
                r = get(f"{path}?{query}")
                self.assertEqual(r.headers["X-Cache-Status"], "BYPASS", (path, query))
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), str(r.status))

    def test_spellings_of_one_answer_share_one_key(self):
        """Parameter order, an empty value, the defaults written out and a hash's 0x make no
        other key: the second spelling is a HIT of the first's answer."""
        record = fixture.history[11]
        groups = [
            ["/v1/history?page_size=6&status=Confirmed",
             "/v1/history?status=Confirmed&page_size=6&page_id=0&order=DESC&pair_id=&source_sender="],
            ["/v1/history?page_size=20&page_id=2", "/v1/history?page_id=2",
             "/v1/history?page_size=&page_id=2&order="],
            [f"/v1/history/hash?hash={record['hash']}", f"/v1/history/hash?hash=0x{record['hash']}"],
        ]
        for targets in groups:
            first = get(targets[0])
            self.assertEqual((first.status, first.headers["X-Cache-Status"]), (200, "MISS"))
            self.assertTrue(cached_soon(targets[0]))
            for target in targets[1:]:
                r = get(target)
                self.assertEqual((r.status, r.headers["X-Cache-Status"]), (200, "HIT"), target)
                self.assertEqual(r.body, first.body)

    def test_a_cached_page_that_becomes_empty_is_answered_fresh_after_its_max_age(self):
        """The worker's fresh answer for a page that became empty is not stored (an empty page),
        yet it is what clients get once the cached page expires, never the old page as STALE."""
        record = next(r for r in fixture.history if r["status"] == "Pending")
        target = ("/v1/history?status=Pending&destination_address="
                  + record["destination_address"].lower())
        before = get(target)
        self.assertEqual(before.headers["X-Cache-Status"], "MISS")
        pending = before.json()["total_history"]
        self.assertTrue(cached_soon(target))
        others = stack.sql("SELECT id FROM history WHERE status = 'Pending' AND "
                           f"destination_address = '{record['destination_address']}'")
        ids = ", ".join(row[0] for row in others)
        stack.sql(f"UPDATE history SET status = 'Confirmed' WHERE id IN ({ids})")
        try:
            time.sleep(3.2)  # the page's max-age is 2 s (nginx counts whole seconds)
            for _ in range(3):
                r = get(target)
                self.assertEqual((r.status, r.headers["X-Cache-Status"]), (200, "EXPIRED"))
                self.assertEqual((r.json()["total_history"], r.json()["list"]), ("0", []))
        finally:
            stack.sql(f"UPDATE history SET status = 'Pending' WHERE id IN ({ids})")
        self.assertNotEqual(pending, "0")

    def test_a_cache_buster_reaches_the_worker_and_stores_nothing(self):
        plain = "/v1/history?page_size=4"
        busted = plain + "&_=1700000000"
        first = get(plain)
        answers = [get(busted) for _ in range(2)]
        self.assertEqual(first.headers["X-Cache-Status"], "MISS")
        for r in answers:
            self.assertEqual((r.status, r.headers["X-Cache-Status"]), (200, "BYPASS"))
            self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "200")
            self.assertEqual(r.body, first.body)
            self.assertEqual(r.headers["Cache-Control"], "public, max-age=2")
        keys = cached_keys()
        self.assertIn("GET /v1/history?" + history_key(page_id=0, page_size=4, order="DESC"),
                      keys)
        self.assertFalse([k for k in keys if "1700000000" in k], keys)

    def test_empty_pages_are_answered_but_not_stored(self):
        """Pages past the end and filters that match nothing: canonical, so looked up (MISS),
        but the worker marks them X-Accel-Expires: 0 and nginx stores nothing (MISS again)."""
        for target in ("/v1/history?page_id=999", "/v1/history?destination_address=0x" + "ab" * 20):
            answers = [get(target) for _ in range(2)]
            for r in answers:
                self.assertEqual((r.status, r.headers["X-Cache-Status"]), (200, "MISS"), target)
                self.assertEqual(r.json()["list"], [])
                self.assertEqual(r.headers["Cache-Control"], "public, max-age=2")
                self.assertNotIn("X-Accel-Expires", r.headers)  # nginx's, never the client's
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "200")
        self.assertFalse([k for k in cached_keys() if "page_id=999&" in k or "abab" in k])

    def test_errors_are_never_cached_and_their_body_has_this_requests_id(self):
        # Canonical-looking requests that are errors: looked up (MISS), never stored.
        for target, status, code in (("/v1/history?source_blockchain=nope", 400,
                                      "invalid_parameter"),
                                     ("/v1/history/hash?hash=" + "0" * 64, 404, "not_found")):
            answers = [get(target) for _ in range(2)]
            for r in answers:
                self.assertEqual(r.status, status)
                self.assertEqual(r.headers["X-Cache-Status"], "MISS")
                self.assertEqual(r.headers["Cache-Control"], "no-store")
                self.assertEqual(r.json()["error"]["code"], code)
                self.assertEqual(r.json()["error"]["request_id"], r.headers["X-Request-Id"])
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), str(status))
            self.assertNotEqual(answers[0].headers["X-Request-Id"],
                                answers[1].headers["X-Request-Id"])

    def test_head_and_get_are_cached_apart(self):
        # A key of this test's own with an hour's lifetime (a final record), so that a slow
        # (sanitized) run cannot see it expire between the requests.
        final = [r for r in fixture.history if r["status"] in ("Confirmed", "Error")][-1]
        target = f"/v1/history/hash?hash={final['hash']}"
        head = send(stack.port, "HEAD", target)
        full = get(target)
        self.assertEqual((head.status, head.body, head.headers["X-Cache-Status"]),
                         (200, b"", "MISS"))
        # The HEAD answer (no body) must not be served for GET.
        self.assertEqual((full.status, full.headers["X-Cache-Status"]), (200, "MISS"))
        self.assertEqual(full.headers["Cache-Control"], "public, max-age=3600")
        self.assertEqual(full.json()["hash"], final["hash"])
        self.assertEqual(head.headers["Content-Length"], str(len(full.body)))
        self.assertEqual(head.headers["ETag"], full.headers["ETag"])
        self.assertTrue(cached_soon(target))
        self.assertTrue(harness.wait_for(
            lambda: send(stack.port, "HEAD", target).headers["X-Cache-Status"] == "HIT", 1))
        again = [get(target), send(stack.port, "HEAD", target)]
        self.assertEqual([(r.status, r.headers["X-Cache-Status"]) for r in again],
                         [(200, "HIT"), (200, "HIT")])
        self.assertEqual((again[0].body, again[1].body), (full.body, b""))

    def test_deposit_addresses_bypass_the_cache(self):
        answers = [get(ACCOUNT) for _ in range(2)]
        for r in answers:
            self.assertEqual(r.status, 200)
            self.assertNotIn("X-Cache-Status", r.headers)
            self.assertEqual(r.headers["Cache-Control"], "public, max-age=86400, immutable")
            self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "200")
        self.assertEqual(answers[0].body, answers[1].body)
        etag = answers[0].headers["ETag"]
        r = get(ACCOUNT, {"If-None-Match": etag})  # passed to the worker, which answers 304
        self.assertEqual((r.status, r.body, r.headers["ETag"]), (304, b"", etag))
        self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "304")

    def test_stale_while_the_database_is_down_then_fresh_again(self):
        """MISS, HIT; database down: STALE (the worker answers 503, the stale copy is served),
        uncached paths are the worker's 503, deposit addresses too (never stale); database
        back: the request that finds the entry expired gets the fresh answer (EXPIRED), then
        HIT."""
        targets = {HISTORY: 2, "/v1/ab": 5}  # the worker's max-age of each
        before = {}
        for target in targets:
            miss = get(target)
            self.assertTrue(cached_soon(target))
            hit = get(target)
            self.assertEqual((miss.status, miss.headers["X-Cache-Status"]), (200, "MISS"), target)
            self.assertEqual((hit.status, hit.headers["X-Cache-Status"]), (200, "HIT"), target)
            self.assertEqual(hit.body, miss.body)
            before[target] = miss
        self.assertEqual(get(ACCOUNT).status, 200)

        stack.stop_mariadb()
        try:
            for target, max_age in targets.items():
                seen = poll(target, lambda r: r.headers["X-Cache-Status"] != "HIT", max_age + 5)
                stale = seen[-1]
                self.assertEqual((stale.status, stale.headers["X-Cache-Status"]), (200, "STALE"))
                self.assertEqual(stale.body, before[target].body)
                self.assertEqual(stale.headers["ETag"], before[target].headers["ETag"])
                self.assertNotEqual(stale.headers["X-Request-Id"],
                                    before[target].headers["X-Request-Id"])
                # Past max-age again: still the stale copy, never the worker's 503 (UPDATING:
                # while the background refresh of an earlier request is still under way).
                time.sleep(max_age + 0.5)
                for r in [get(target) for _ in range(3)]:
                    self.assertEqual((r.status, r.body), (200, before[target].body))
                    self.assertIn(r.headers["X-Cache-Status"], ("STALE", "UPDATING"))
            # The refreshes did reach the worker, which answered 503.
            worker_503s = [json.loads(line) for line in stack.worker_log_text().splitlines()
                           if line.startswith("{") and '"status":503' in line]
            self.assertEqual({line["endpoint"] for line in worker_503s}, {"/v1/history", "/v1/ab"})
            # What skips the cache (a cache-buster, deposit addresses) is the worker's own 503.
            for target, cache_status in ((HISTORY + "&uncached=1", "BYPASS"), (ACCOUNT, None)):
                r = get(target)
                self.assertEqual(r.status, 503, target)
                self.assertEqual(r.headers.get("X-Cache-Status"), cache_status)
                self.assertEqual(r.headers["Retry-After"], "1")
                self.assertEqual(r.headers["Cache-Control"], "no-store")
                self.assertEqual(r.json(), error_body(
                    r, "unavailable", "The service cannot reach its database; retry shortly"))
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "503")
            ready = get("/readyz")
            self.assertEqual(ready.status, 503)
            self.assertNotIn("X-Cache-Status", ready.headers)
        finally:
            stack.start_mariadb()

        stack.sql("UPDATE chain_status SET latest_height = latest_height + 1")
        stack.sql("UPDATE history SET source_block_number = 987654321 ORDER BY id DESC LIMIT 1")
        markers = {"/v1/ab": '"latest_height":"1873222"',
                   HISTORY: '"source_block_number":"987654321"'}
        for target, fresh_marker in markers.items():
            seen = poll(target, lambda r: r.headers["X-Cache-Status"] == "HIT"
                        and fresh_marker.encode() in r.body, 30)
            self.assertEqual({r.status for r in seen}, {200}, target)
            # REVALIDATED: a refresh the worker answered 304 (the supply snapshot not yet
            # reloaded with the update).
            self.assertLessEqual({r.headers["X-Cache-Status"] for r in seen},
                                 {"STALE", "UPDATING", "EXPIRED", "REVALIDATED", "HIT"}, target)
            self.assertNotIn(fresh_marker.encode(), before[target].body)
            # The HIT is what the worker answers now (a cache-buster: straight from it).
            direct = get(target + ("&" if "?" in target else "?") + "direct=1")
            self.assertEqual(direct.headers["X-Cache-Status"], "BYPASS")
            self.assertEqual(seen[-1].body, direct.body)


class Methods(unittest.TestCase):
    def test_only_get_and_head_reach_the_worker(self):
        for target in ("/v1/networks", "/v1/history?page_size=1", "/v1/account", "/v1/nope"):
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                r = send(stack.port, method, target, body=b"x=1" if method == "POST" else b"")
                self.assertEqual(r.status, 405, (method, target))
                self.assertEqual(r.headers["Allow"], "GET, HEAD, OPTIONS")
                self.assertEqual(r.headers["Content-Type"], JSON)
                self.assertEqual(r.json(), error_body(r, "method_not_allowed",
                                                      "This method is not allowed here."))
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "-")
        head = send(stack.port, "HEAD", "/v1/networks")
        self.assertEqual((head.status, head.body), (200, b""))
        self.assertEqual(head.headers["Content-Length"], str(len(get("/v1/networks").body)))

    def test_a_request_body_over_1k_is_a_413(self):
        r = send(stack.port, "GET", "/v1/networks", body=b"x" * 2048)
        self.assertEqual((r.status, r.headers["Content-Type"]), (413, JSON))
        self.assertEqual(r.json(), error_body(r, "request_too_large",
                                              "The request body is too large."))


class Sizes(unittest.TestCase):
    def test_gzip_for_json(self):
        plain = get("/v1/pairs")
        zipped = get("/v1/pairs", {"Accept-Encoding": "gzip"})
        self.assertEqual((plain.status, zipped.status), (200, 200))
        self.assertNotIn("Content-Encoding", plain.headers)
        self.assertEqual(zipped.headers["Content-Encoding"], "gzip")
        self.assertEqual(zipped.headers["Vary"], "Accept-Encoding")
        self.assertEqual(zipped.headers["ETag"], "W/" + plain.headers["ETag"])
        self.assertEqual(gzip.decompress(zipped.body), plain.body)
        self.assertLess(len(zipped.body), len(plain.body) // 2)
        # Under gzip_min_length (1024 bytes): sent as is.
        small = get("/v1/networks", {"Accept-Encoding": "gzip"})
        self.assertLess(len(small.body), 1024)
        self.assertNotIn("Content-Encoding", small.headers)

    def test_a_long_query_reaches_the_worker_a_longer_one_is_nginx_414(self):
        worker = get("/v1/history?" + "a" * 4600)
        self.assertEqual(worker.status, 414)
        self.assertEqual(worker.json()["error"]["message"],
                         "The query string is longer than 4096 bytes")
        self.assertEqual(upstream_status(worker.headers["X-Request-Id"]), "414")
        own = get("/v1/history?" + "a" * 9000)
        self.assertEqual(own.status, 414)
        self.assertEqual(own.json(), error_body(own, "query_too_long",
                                                "The request target is too long."))


class Health(unittest.TestCase):
    PATHS = {"/healthz": JSON, "/readyz": JSON, "/metrics":
             "text/plain; version=0.0.4; charset=utf-8", "/status": JSON}

    def test_internal_addresses_reach_the_worker_uncached(self):
        for path, content_type in self.PATHS.items():
            answers = [get(path) for _ in range(2)]
            for r in answers:
                self.assertEqual(r.status, 200, path)
                self.assertEqual(r.headers["Content-Type"], content_type)
                self.assertNotIn("X-Cache-Status", r.headers)
                self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "200")
        self.assertEqual(get("/healthz").json(), {"status": "ok"})
        self.assertEqual(get("/readyz").json()["status"], "ready")
        self.assertEqual(get("/status").json()["threads_per_process"], 4)
        self.assertIn("\n# TYPE ", get("/metrics").body.decode())
        # Exact paths only.
        self.assertEqual(get("/healthz/").status, 404)
        self.assertEqual(upstream_status(get("/metricsx").headers["X-Request-Id"]), "-")

    def test_other_addresses_get_a_json_403(self):
        for path in self.PATHS:
            r = get(path, source=OUTSIDE)
            self.assertEqual((r.status, r.headers["Content-Type"]), (403, JSON), path)
            self.assertEqual(r.json(), error_body(r, "forbidden",
                                                  "This path is for internal addresses only."))
            self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "-")
        # The API itself is for everyone.
        self.assertEqual(get("/v1/networks", source=OUTSIDE).status, 200)

    def test_only_loopback_is_allowed_as_shipped(self):
        # The internal location allows what connector-monitoring.conf allows, then nobody.
        conf = (NGINX / "connector.conf").read_text()
        start = conf.index("location ~ ^/(?:healthz|readyz|metrics|status)$ {")
        location = conf[start:conf.index("\n}", start)]
        directives = [line.strip() for line in location.splitlines()
                      if re.match(r"\s*(allow|deny|include snippets/connector-monitoring)", line)]
        self.assertEqual(directives, ["include snippets/connector-monitoring.conf;", "deny all;"])
        # That file is the only one with allow lines, and it allows this host alone.
        for path in NGINX.glob("*.conf"):
            active = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
            allows = [line for line in active if line.startswith("allow ")]
            expected = ["allow 127.0.0.1;", "allow ::1;"] \
                if path.name == "connector-monitoring.conf" else []
            self.assertEqual(allows, expected, path.name)

    def test_a_monitoring_address_is_let_in_by_the_one_file(self):
        # A second nginx from scripts/nginx-start on the stack's worker; one allow line added
        # to its copy of connector-monitoring.conf, as an operator would, then a reload.
        prefix = stack.dir / "nginx-monitoring"
        port = None
        for attempt in range(3):  # the free port can be taken between picking and binding
            candidate = _free_port()
            result = subprocess.run([str(SCRIPTS / "nginx-start"), str(prefix), str(candidate),
                                     str(stack.fcgi_socket)], capture_output=True, text=True,
                                    timeout=60, stdin=subprocess.DEVNULL)
            if result.returncode == 0:
                port = candidate
                break
        self.assertIsNotNone(port, result.stdout + result.stderr)
        try:
            snippet = prefix / "snippets" / "connector-monitoring.conf"
            self.assertEqual(snippet.read_bytes(),
                             (NGINX / "connector-monitoring.conf").read_bytes())
            self.assertEqual(send(port, "GET", "/metrics", source=OUTSIDE).status, 403)
            snippet.write_text(snippet.read_text() + f"allow {OUTSIDE};\n")
            subprocess.run(["nginx", "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"),
                            "-s", "reload"], check=True, capture_output=True, timeout=30)
            # The new nginx workers take over; until the old ones have exited, a connection may
            # still reach one of them (the old rules): wait for every path to let the address in.
            deadline = time.monotonic() + 10
            while any(send(port, "GET", path, source=OUTSIDE).status != 200
                      for path in self.PATHS):
                self.assertLess(time.monotonic(), deadline, "the added address was not let in")
                time.sleep(0.1)
            for path in self.PATHS:
                self.assertEqual(send(port, "GET", path, source="127.0.0.3").status, 403, path)
        finally:
            subprocess.run([str(SCRIPTS / "nginx-stop"), str(prefix)], timeout=60,
                           stdin=subprocess.DEVNULL)


class RateLimit(unittest.TestCase):
    """A second nginx from scripts/nginx-start on the stack's worker socket, the shipped files
    with only the zone's rate lowered to 1 request a minute: the shipped burst passes at once,
    the next requests are 429 (the bucket drains one request a minute, so this is exact)."""

    @classmethod
    def setUpClass(cls):
        cls.prefix = stack.dir / "nginx-ratelimit"
        cls.port = None
        env = dict(os.environ, NGINX_CONNECTOR_CACHE="on", NGINX_CONNECTOR_RATE="1r/m")
        for attempt in range(3):  # the free port can be taken between picking and binding
            port = _free_port()
            result = subprocess.run([str(SCRIPTS / "nginx-start"), str(cls.prefix), str(port),
                                     str(stack.fcgi_socket)], env=env, capture_output=True,
                                    text=True, timeout=60, stdin=subprocess.DEVNULL)
            if result.returncode == 0:
                cls.port = port
                return
        raise AssertionError(f"nginx-start failed: {result.stdout}{result.stderr}")

    @classmethod
    def tearDownClass(cls):
        subprocess.run([str(SCRIPTS / "nginx-stop"), str(cls.prefix)], timeout=60,
                       stdin=subprocess.DEVNULL)

    def test_past_the_burst_a_client_gets_a_json_429(self):
        burst = int(re.search(r"limit_req zone=connector_per_client burst=(\d+) nodelay;",
                              (NGINX / "connector-v1.conf").read_text()).group(1))
        rendered = (self.prefix / "conf.d" / "connector-http.conf").read_text()
        self.assertIn(" zone=connector_per_client:10m rate=1r/m;", rendered)
        started = time.monotonic()
        client = "127.0.0.1"  # one client throughout
        answers = [send(self.port, "GET", "/v1/networks", source=client) for _ in range(burst + 1)]
        # nginx refuses the next ones itself: they never reach a worker, whose count of
        # accepted requests rises only by the /status request that reads it. (nginx's access
        # log keeps one refusal in 256, so it cannot show this: test_log_flood.py.)
        accepted = stack.worker_status()["accepted_conn"]
        answers += [send(self.port, "GET", "/v1/networks", source=client) for _ in range(4)]
        self.assertEqual(stack.worker_status()["accepted_conn"], accepted + 1)
        self.assertLess(time.monotonic() - started, 30)  # far from draining one request
        self.assertEqual([r.status for r in answers], [200] * (burst + 1) + [429] * 4)
        for r in answers[burst + 1:]:
            self.assertEqual(r.headers["Content-Type"], JSON)
            self.assertEqual(r.headers["Retry-After"], "1")
            self.assertEqual(r.json(), error_body(
                r, "rate_limited", "Too many requests from this address; retry shortly."))
        # Per client address: another one is not limited.
        self.assertEqual(send(self.port, "GET", "/v1/networks", source=OUTSIDE).status, 200)
        # The health paths are never rate-limited.
        self.assertEqual(send(self.port, "GET", "/healthz").status, 200)


if __name__ == "__main__":
    unittest.main()
