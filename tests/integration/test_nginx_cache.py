"""nginx's response cache in front of the service, as shipped (scripts/nginx-start: cache and
limits on): MISS, HIT and their request ids, 304s and HEAD from the cache, which requests enter
it (one key per answer, whatever the spelling; none for any other spelling, a cache-buster, an
empty page or an error), the deposit address bypass, and STALE while the database is down, fresh
answers after. Requests, the stack and the clients they come from: nginx_support."""

import json
import unittest

import harness
import nginx_support
from harness import endpoint_params, pace
from nginx_support import (ACCOUNT, DESCRIPTIONS, HISTORY, JSON, NOT_FRONT_CACHED, error_body,
                           fixture, get, send, upstream_status)

# The parameters each endpoint knows, from the endpoint descriptions (src/api/endpoints.h): the
# map of connector-http.conf that lets only these into nginx's cache must name the same ones.
ROUTE_PARAMS = endpoint_params()

stack = None


def setUpModule():
    global stack
    stack = nginx_support.start_stack()


def tearDownModule():
    stack.stop()


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


def poll(target, until, seconds):
    """GETs target every 0.1 s until until(response) holds; returns every response seen."""
    seen = []

    def met():
        seen.append(get(target))
        return until(seen[-1])
    if not harness.wait_for(met, seconds):
        raise AssertionError(f"{target}: condition not met within {seconds} s; last: "
                             f"{[(r.status, r.headers.get('X-Cache-Status')) for r in seen[-5:]]}")
    return seen


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
            # A HIT until the page's max-age (2 s) has passed; from then on, the worker's answer.
            expired = poll(target, lambda r: r.headers["X-Cache-Status"] != "HIT", 10)[-1]
            for r in [expired, *(get(target) for _ in range(3))]:
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
        before = {target: self.cached(target) for target in targets}
        self.assertEqual(get(ACCOUNT).status, 200)
        stack.stop_mariadb()
        try:
            for target, max_age in targets.items():
                self.served_stale(target, max_age, before[target])
            # The refreshes did reach the worker, which answered 503.
            worker_503s = [json.loads(line) for line in stack.worker_log_text().splitlines()
                           if line.startswith("{") and '"status":503' in line]
            self.assertEqual({line["endpoint"] for line in worker_503s}, {"/v1/history", "/v1/ab"})
            self.uncached_answers_are_the_workers_503()
        finally:
            stack.start_mariadb()
        self.fresh_again(before)

    def cached(self, target):
        """A MISS, then a HIT of the same answer; returns the MISS."""
        miss = get(target)
        self.assertTrue(cached_soon(target))
        hit = get(target)
        self.assertEqual((miss.status, miss.headers["X-Cache-Status"]), (200, "MISS"), target)
        self.assertEqual((hit.status, hit.headers["X-Cache-Status"]), (200, "HIT"), target)
        self.assertEqual(hit.body, miss.body)
        return miss

    def served_stale(self, target, max_age, before):
        """The database down: once the cached copy expires, it is served STALE, and still is a
        whole max-age later."""
        stale = poll(target, lambda r: r.headers["X-Cache-Status"] != "HIT", max_age + 5)[-1]
        self.assertEqual((stale.status, stale.headers["X-Cache-Status"]), (200, "STALE"))
        self.assertEqual(stale.body, before.body)
        self.assertEqual(stale.headers["ETag"], before.headers["ETag"])
        self.assertNotEqual(stale.headers["X-Request-Id"], before.headers["X-Request-Id"])
        # Past max-age again: still the stale copy, never the worker's 503 (UPDATING: while
        # the background refresh of an earlier request is still under way).
        pace(max_age + 0.5)
        for r in [get(target) for _ in range(3)]:
            self.assertEqual((r.status, r.body), (200, before.body))
            self.assertIn(r.headers["X-Cache-Status"], ("STALE", "UPDATING"))

    def uncached_answers_are_the_workers_503(self):
        """The database down: what skips the cache (a cache-buster, deposit addresses) is the
        worker's own 503, and /readyz says not ready."""
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

    def fresh_again(self, before):
        """The database back and changed: each target comes to a HIT of the new answer, through
        refreshes only (never an error), and that HIT is what the worker answers now."""
        stack.sql("UPDATE chain_status SET latest_height = latest_height + 1")
        stack.sql("UPDATE history SET source_block_number = 987654321 ORDER BY id DESC LIMIT 1")
        markers = {"/v1/ab": '"latest_height":"1873222"',
                   HISTORY: '"source_block_number":"987654321"'}
        for target, fresh_marker in markers.items():
            seen = poll(target, lambda r: r.headers["X-Cache-Status"] == "HIT"
                        and fresh_marker.encode() in r.body, 30)
            self.assertEqual({r.status for r in seen}, {200}, target)
            # REVALIDATED: a refresh the worker answered 304 (the refreshed supply not yet
            # reloaded with the update).
            self.assertLessEqual({r.headers["X-Cache-Status"] for r in seen},
                                 {"STALE", "UPDATING", "EXPIRED", "REVALIDATED", "HIT"}, target)
            self.assertNotIn(fresh_marker.encode(), before[target].body)
            # The HIT is what the worker answers now (a cache-buster: straight from it).
            direct = get(target + ("&" if "?" in target else "?") + "direct=1")
            self.assertEqual(direct.headers["X-Cache-Status"], "BYPASS")
            self.assertEqual(seen[-1].body, direct.body)


if __name__ == "__main__":
    unittest.main()
