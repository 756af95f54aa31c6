"""nginx in front of the service, as shipped (scripts/nginx-start: cache and limits on): GET and
HEAD only, the size limits (nginx's own 413 and 414 beside the worker's), gzip, the internal-only
health and metrics paths (and the one file that lets a monitoring address in), and the
per-client 429. nginx's cache: test_nginx_cache; the shipped files read and checked with
nginx -t: test_nginx_files.

The rate limit is tested on a second nginx from the same script on the same worker socket, with
only the zone's rate lowered to 1r/m (NGINX_CONNECTOR_RATE): the shipped burst, nodelay and 429
handling are what is exercised. Requests, the stack and the clients they come from:
nginx_support."""

import gzip
import re
import subprocess
import time
import unittest

import nginx_support
from harness import await_true, start_nginx, stop_nginx
from nginx_support import JSON, NGINX, OUTSIDE, error_body, get, send, upstream_status

stack = None


def setUpModule():
    global stack
    stack = nginx_support.start_stack()


def tearDownModule():
    stack.stop()


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
        port = start_nginx(prefix, stack.fcgi_socket)
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
            await_true(lambda: all(send(port, "GET", path, source=OUTSIDE).status == 200
                                   for path in self.PATHS), 10,
                       what="the added address let in on every internal path")
            for path in self.PATHS:
                self.assertEqual(send(port, "GET", path, source="127.0.0.3").status, 403, path)
        finally:
            stop_nginx(prefix)


class RateLimit(unittest.TestCase):
    """A second nginx from scripts/nginx-start on the stack's worker socket, the shipped files
    with only the zone's rate lowered to 1 request a minute: the shipped burst passes at once,
    the next requests are 429 (the bucket drains one request a minute, so this is exact)."""

    @classmethod
    def setUpClass(cls):
        cls.prefix = stack.dir / "nginx-ratelimit"
        cls.port = start_nginx(cls.prefix, stack.fcgi_socket,
                               {"NGINX_CONNECTOR_CACHE": "on", "NGINX_CONNECTOR_RATE": "1r/m"})

    @classmethod
    def tearDownClass(cls):
        stop_nginx(cls.prefix)

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
