"""The API reference: scripts/docs-site builds the static folder (Redoc and docs/openapi.yaml as
JSON), the stack's nginx serves it (NGINX_CONNECTOR_DOCS, nginx/connector-docs.conf) at /docs/
and /v1/openapi.json, and Debian's chromium renders the page headless: every endpoint of the
document is listed, nothing is asked of any other host, and a screenshot is saved as
<build dir>/docs-page.png. The stack holds the demo's data (connector-admin sample, as
scripts/demo loads it), and every example of the document that names its request (x-request)
is that request's real answer.

Chromium runs with the flags the issue names (--headless --no-sandbox --disable-gpu
--disable-background-networking), plus a new empty profile, no first-run, component-update, sync
or QUIC, and a dead loopback proxy with every host name unresolvable but 127.0.0.1: the
browser's own background requests (time, updates, accounts) then fail on this machine instead
of leaving it. Skipped in a sanitizer build tree: nothing here depends on how the worker is
built, and the plain tree runs it."""

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import (ADMIN, BUILD_DIR, REPO, SCRIPTS, Stack, endpoint_params,
                     sanitized_build)

SCREENSHOT = BUILD_DIR / "docs-page.png"
# The endpoint descriptions (src/api/endpoints.h): the document must list exactly these.
ENDPOINTS = set(endpoint_params())

stack = None
site = None
document = None


def setUpModule():
    global stack, site, document
    if sanitized_build():
        raise unittest.SkipTest(f"{BUILD_DIR} is a sanitizer build: the reference page is "
                                "tested from the plain build tree")
    if shutil.which("chromium") is None:
        raise AssertionError("chromium not found: scripts/install-deps installs it")
    site = Path(tempfile.mkdtemp(prefix="connector-docs-site-"))
    saved = os.environ.get("NGINX_CONNECTOR_DOCS")
    try:
        run([SCRIPTS / "docs-site", site])
        document = json.loads(run(["node", REPO / "tools/openapi/openapi-document.mjs",
                                   REPO / "docs/openapi.yaml"]).stdout)
        demo_data = site.parent / f"{site.name}-demo.json"
        demo_data.write_text(run([ADMIN, "sample", "--history", 3000]).stdout)
        os.environ["NGINX_CONNECTOR_DOCS"] = str(site)
        try:
            stack = Stack(fixture=demo_data)
        finally:
            demo_data.unlink()
    except BaseException:
        shutil.rmtree(site, ignore_errors=True)
        raise
    finally:
        if saved is None:
            os.environ.pop("NGINX_CONNECTOR_DOCS", None)
        else:
            os.environ["NGINX_CONNECTOR_DOCS"] = saved


def tearDownModule():
    try:
        if stack is not None:
            stack.stop()
    finally:
        shutil.rmtree(site, ignore_errors=True)


def run(args, timeout=120):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {result.returncode}:\n"
                             f"{result.stdout[-2000:]}{result.stderr[-4000:]}")
    return result


def chromium(*args, url):
    """Runs headless chromium once on url with a new empty profile; returns its stdout."""
    profile = Path(tempfile.mkdtemp(prefix="connector-chromium-"))
    try:
        return run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--no-first-run",
                    "--disable-component-update", "--disable-sync", "--disable-quic",
                    f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9",
                    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                    "--virtual-time-budget=15000", *args, url]).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def operations():
    """(path, method, operation) for every operation of the document."""
    return [(path, method, op) for path, item in document["paths"].items()
            for method, op in item.items() if method in ("get", "head", "post", "put", "delete",
                                                         "patch", "options", "trace")]


class Document(unittest.TestCase):
    def test_it_lists_the_eleven_endpoints_of_the_router(self):
        self.assertEqual(len(ENDPOINTS), 11, ENDPOINTS)
        self.assertEqual(set(document["paths"]), ENDPOINTS)
        self.assertEqual([method for _, method, _ in operations()], ["get"] * 11)

    def test_served_as_json_with_a_long_lifetime(self):
        r = stack.get("/v1/openapi.json")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8")
        self.assertEqual(r.headers["Cache-Control"], "public, max-age=86400")
        self.assertEqual(r.headers["X-Content-Type-Options"], "nosniff")
        self.assertRegex(r.headers["X-Request-Id"], r"^[0-9a-f]{32}$")
        self.assertEqual(r.json(), document)
        # A /v1 path like the others: readable from any origin, with nginx's preflight.
        self.assertEqual(r.headers["Access-Control-Allow-Origin"], "*")
        self.assertEqual(r.headers["Access-Control-Expose-Headers"],
                         "ETag, X-Request-Id, Retry-After")
        preflight = stack.request("OPTIONS", "/v1/openapi.json")
        self.assertEqual((preflight.status, preflight.body, preflight.headers["Allow"]),
                         (204, b"", "GET, HEAD, OPTIONS"))
        self.assertEqual(stack.request("HEAD", "/v1/openapi.json").status, 200)
        self.assertEqual(stack.request("POST", "/v1/openapi.json").status, 405)


def examples_with_requests(node, where="#"):
    """(where, request target, example value) for every example naming its request."""
    if isinstance(node, dict):
        if "x-request" in node and "value" in node:
            yield where, node["x-request"], node["value"]
        for key, value in node.items():
            yield from examples_with_requests(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from examples_with_requests(value, f"{where}/{i}")


class Examples(unittest.TestCase):
    def test_examples_are_the_demo_datas_real_answers(self):
        examples = list(examples_with_requests(document))
        self.assertGreaterEqual(len(examples), 16)
        for where, target, value in examples:
            with self.subTest(example=where):
                body = stack.get(target).json()
                if "error" in body:  # each answer has its own request id
                    body["error"]["request_id"] = value["error"]["request_id"]
                self.assertEqual(body, value, target)


class Site(unittest.TestCase):
    def test_the_folder_and_its_files(self):
        self.assertEqual(sorted(p.name for p in site.iterdir()),
                         ["index.html", "openapi.json", "redoc.standalone.js",
                          "redoc.standalone.js.LICENSE.txt"])
        page = (site / "index.html").read_text()
        self.assertIn('<redoc spec-url="openapi.json"', page)
        # Only files of this folder: no CDN, no web fonts.
        self.assertEqual(re.findall(r'(?:src|href)="([^"]*)"', page), ["redoc.standalone.js"])

    def test_nginx_serves_it_at_docs(self):
        r = stack.get("/docs")
        self.assertEqual(r.status, 301)
        # Relative (absolute_redirect off): no scheme, host or internal port a client behind a
        # balancer could not reach.
        self.assertEqual(r.headers["Location"], "/docs/")
        page = stack.get("/docs/")
        self.assertEqual(page.status, 200)
        self.assertEqual(page.headers["Content-Type"], "text/html; charset=utf-8")
        self.assertEqual(page.body, (site / "index.html").read_bytes())
        self.assertIn("default-src 'none'", page.headers["Content-Security-Policy"])
        script = stack.get("/docs/redoc.standalone.js")
        self.assertEqual(script.status, 200)
        self.assertEqual(script.headers["Content-Type"], "application/javascript; charset=utf-8")
        missing = stack.get("/docs/nope.js")
        self.assertEqual(missing.status, 404)
        self.assertEqual(missing.json()["error"]["code"], "not_found")


class Page(unittest.TestCase):
    def test_chromium_renders_every_endpoint_and_asks_no_other_host(self):
        with tempfile.TemporaryDirectory(prefix="connector-netlog-") as tmp:
            net_log = Path(tmp) / "net.json"
            dom = chromium(f"--log-net-log={net_log}", "--dump-dom",
                           url=f"{stack.base_url}/docs/")
            log = json.loads(net_log.read_text())
        for path, method, op in operations():
            with self.subTest(path=path):
                # Redoc's menu entry and the operation's own section, with its path.
                self.assertIn(f'href="#operation/{op["operationId"]}"', dom)
                self.assertIn(op["summary"], dom)
                self.assertIn(f">{path}</", dom)
        self.assertNotIn("Something went wrong", dom)

        types = {number: name for name, number in log["constants"]["logEventTypes"].items()}
        origin = stack.base_url
        asked, connects = [], []
        for event in log["events"]:
            params = event.get("params") or {}
            if types[event["type"]] == "URL_REQUEST_START_JOB" and params.get("initiator") == origin:
                asked.append(params["url"])
            if types[event["type"]] == "TCP_CONNECT_ATTEMPT" and "address" in params:
                connects.append(params["address"])
        self.assertIn(f"{origin}/docs/openapi.json", asked)
        self.assertEqual([url for url in asked if not url.startswith(origin + "/")], [])
        self.assertEqual([a for a in connects if not a.startswith("127.0.0.1:")], [])

    def test_screenshot(self):
        SCREENSHOT.unlink(missing_ok=True)
        chromium(f"--screenshot={SCREENSHOT}", "--window-size=1280,2000",
                 url=f"{stack.base_url}/docs/")
        data = SCREENSHOT.read_bytes()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", data[16:24]), (1280, 2000))
        # A blank page compresses to a few kB; the rendered reference is far larger.
        self.assertGreater(len(data), 50_000)


if __name__ == "__main__":
    unittest.main()
