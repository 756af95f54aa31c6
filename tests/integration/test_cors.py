"""CORS (docs/openapi.yaml, "Browsers (CORS)"): every /v1 answer, whoever writes it (the worker,
nginx's cache, nginx's own errors), 200, 304 and errors alike, carries
Access-Control-Allow-Origin: * and Access-Control-Expose-Headers; OPTIONS on a /v1 path, known or
not, is a preflight that nginx answers 204 with the preflight headers without reaching the
worker; health, metrics and status get no CORS header. Then a real browser: Debian's Chromium, on
a page of another origin (another loopback port), fetches the API with a header that needs a
preflight and reads the answers."""

import http.server
import re
import shutil
import tempfile
import threading
import unittest
from functools import partial
from pathlib import Path

import harness
from fixture import Fixture
from harness import Stack, chromium_dom, wait_for

fixture = Fixture()
stack = None
EXPOSE = "ETag, X-Request-Id, Retry-After"
PREFLIGHT = {"Access-Control-Allow-Origin": "*",
             "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
             "Access-Control-Allow-Headers": "If-None-Match, Content-Type",
             "Access-Control-Max-Age": "86400",
             "Allow": "GET, HEAD, OPTIONS"}


def setUpModule():
    global stack
    stack = Stack(fixture=fixture.path)


def tearDownModule():
    stack.stop()


def upstream_status(request_id):
    return harness.upstream_status(stack.nginx_prefix, request_id)


class Headers(unittest.TestCase):
    def assert_cors(self, r, where):
        self.assertEqual(r.headers.get("Access-Control-Allow-Origin"), "*", where)
        self.assertEqual(r.headers.get("Access-Control-Expose-Headers"), EXPOSE, where)
        self.assertIsNone(r.headers.get("Access-Control-Allow-Credentials"), where)

    def test_every_kind_of_v1_answer_carries_cors(self):
        hash_ = fixture.history[0]["hash"]
        answers = {
            "worker 200": stack.get("/v1/history?page_size=1"),
            "worker 400": stack.get("/v1/history?status=nope"),
            "worker 404": stack.get("/v1/nope"),
            "worker 404 record": stack.get("/v1/history/hash?hash=" + "0" * 64),
            "nginx 404": stack.get("/v1"),
            "nginx 405": stack.request("DELETE", "/v1/pairs"),
            "nginx 414": stack.get("/v1/networks?x=" + "a" * 20000),
        }
        first = stack.get(f"/v1/history/hash?hash={hash_}")
        answers["worker 200 by hash"] = first
        # nginx stores the answer a moment after the client has it whole: ask until it hits.
        asked = []

        def cached():
            asked.append(stack.get(f"/v1/history/hash?hash={hash_}"))
            return asked[-1].headers["X-Cache-Status"] == "HIT"

        self.assertTrue(wait_for(cached, 10))
        answers["cache HIT"] = asked[-1]
        answers["304"] = stack.get(f"/v1/history/hash?hash={hash_}",
                                   headers={"If-None-Match": first.headers["ETag"]})
        self.assertEqual(answers["304"].status, 304)
        for where, r in answers.items():
            self.assert_cors(r, where)
        self.assertEqual(answers["nginx 405"].headers["Allow"], "GET, HEAD, OPTIONS")

    def test_nginx_own_503_carries_cors(self):
        stack.stop_worker()
        try:
            r = stack.get("/v1/history?page_size=1&down=1")
        finally:
            stack.start_worker()
        self.assertEqual((r.status, r.json()["error"]["code"]), (503, "unavailable"))
        self.assert_cors(r, "nginx 503")

    def test_spellings_of_a_v1_path_carry_cors_and_of_another_path_do_not(self):
        for path in ("//v1/networks", "/%761/networks", "/a/../v1/networks"):
            r = stack.get(path)
            self.assertEqual(r.status, 200, path)
            self.assert_cors(r, path)
        for path in ("/v1/../healthz", "/v1/../status"):
            r = stack.get(path)
            self.assertIsNone(r.headers.get("Access-Control-Allow-Origin"), path)

    def test_nginx_own_400_413_and_412_carry_cors(self):
        stack.get("/v1/networks")  # now in nginx's cache: If-Match is nginx's to answer
        answers = {
            "400": stack.request("GET", "/v1/networks", headers={"Host": None}),
            "413": stack.request("GET", "/v1/networks", body=b"x" * 2048),
            "412": stack.get("/v1/networks", headers={"If-Match": '"nope"'}),
        }
        for status, r in answers.items():
            self.assertEqual(r.status, int(status), r)
            self.assert_cors(r, f"nginx {status}")

    def test_health_metrics_and_status_have_no_cors(self):
        for path in ("/healthz", "/readyz", "/metrics", "/status", "/nope"):
            r = stack.get(path)
            self.assertIsNone(r.headers.get("Access-Control-Allow-Origin"), path)
            self.assertIsNone(r.headers.get("Access-Control-Expose-Headers"), path)


class Preflight(unittest.TestCase):
    def test_preflight_is_204_from_nginx_for_known_and_unknown_paths(self):
        for path in ("/v1/networks", "/v1/history?status=Confirmed", "/v1/nope/deeper", "/v1",
                     "/v1?x=1", "//v1/networks", "/%761/pairs", "/a/../v1/ab",
                     "/v1/openapi.json"):
            r = stack.request("OPTIONS", path, headers={
                "Origin": "https://explorer.example", "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "if-none-match"})
            self.assertEqual((r.status, r.body), (204, b""), path)
            for name, value in PREFLIGHT.items():
                self.assertEqual(r.headers.get(name), value, (path, name))
            self.assertEqual(upstream_status(r.headers["X-Request-Id"]), "-", path)

    def test_no_preflight_header_on_other_answers(self):
        r = stack.get("/v1/networks")
        for name in ("Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
                     "Access-Control-Max-Age", "Allow"):
            self.assertIsNone(r.headers.get(name), name)

    def test_options_elsewhere_is_405_without_options_in_allow(self):
        r = stack.request("OPTIONS", "/healthz")
        self.assertEqual((r.status, r.headers["Allow"]), (405, "GET, HEAD"))
        self.assertIsNone(r.headers.get("Access-Control-Allow-Origin"))


PAGE = """<!doctype html><html><body><pre id="out">pending</pre><script>
(async () => {
  const out = [];
  try {
    // If-None-Match is not a CORS-safelisted header: the browser sends a preflight first.
    const r = await fetch("API/v1/networks", {headers: {"If-None-Match": '"not-this-one"'}});
    const body = await r.json();
    out.push("status=" + r.status, "networks=" + body.networks.length,
             "request_id=" + r.headers.get("X-Request-Id"),
             "etag=" + (r.headers.get("ETag") !== null));
    const e = await fetch("API/v1/history?status=nope");
    out.push("error=" + e.status + ":" + (await e.json()).error.code);
  } catch (err) {
    out.push("failed=" + err);
  }
  document.getElementById("out").textContent = out.join(" ");
})();
</script></body></html>
"""


class Browser(unittest.TestCase):
    def test_a_page_of_another_origin_reads_the_api(self):
        site = Path(tempfile.mkdtemp(prefix="connector-origin-"))
        (site / "index.html").write_text(PAGE.replace("API", stack.base_url))
        handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
        handler.log_message = lambda *args: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            dom = chromium_dom(f"http://127.0.0.1:{server.server_address[1]}/index.html", 15000)
        finally:
            server.shutdown()
            shutil.rmtree(site, ignore_errors=True)
        text = re.search(r'<pre id="out">([^<]*)</pre>', dom)
        self.assertIsNotNone(text, dom[-2000:])
        self.assertRegex(text.group(1), r"^status=200 networks=2 request_id=[0-9a-f]{32} "
                                        r"etag=true error=400:invalid_parameter$")
        # The browser's preflight reached nginx, and only nginx.
        preflights = [line for line in (stack.nginx_prefix / "access.log").read_text()
                      .splitlines() if '"OPTIONS /v1/networks HTTP/1.1" 204' in line]
        self.assertTrue(preflights)
        self.assertTrue(all(" upstream=-/" in line for line in preflights), preflights)


if __name__ == "__main__":
    unittest.main()
