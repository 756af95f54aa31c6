"""The shipped nginx files (nginx/*.conf), read and checked by nginx itself, no stack: `nginx -t`
accepts the drop-ins in a minimal nginx.conf without a word (test_nginx_modules: with the modules
Debian loads); each drop-in says what it is for and where it goes; the cache rules have one line
per endpoint the service describes; every location that sets headers of its own repeats nosniff
(add_header replaces those of the levels above); the server level hides nginx's version and sets
the timeouts and size limits nginx enforces (answered live in test_hostile_requests)."""

import re
import shutil
import tempfile
import unittest
from pathlib import Path

from harness import nginx_t
from nginx_support import DESCRIPTIONS, EVENT_STREAMS, NGINX, NOT_FRONT_CACHED

DROP_INS = ["connector-http.conf", "connector.conf", "connector-cache-rules.conf",
            "connector-v1.conf", "fastcgi-connector.params", "connector-docs.conf",
            "connector-monitoring.conf"]
PROD_SOCKET = "unix:/run/connector/fcgi.sock"
PROD_CACHE = " /var/cache/nginx-connector "


class DropIns(unittest.TestCase):
    def test_nginx_t_accepts_the_drop_ins_in_a_minimal_nginx_conf(self):
        """The drop-ins as an existing Debian nginx would hold them (conf.d/, snippets/), only
        the worker socket and the cache directory moved into a temporary directory."""
        http = (NGINX / "connector-http.conf").read_text()
        # Listed keepalive + 2 times: nginx retries a dead worker's requests only on
        # "another" server, and each kept connection closed under a request uses up one
        # too, up to every idle one nginx caches (keepalive).
        keepalive = int(re.search(r"^\s*keepalive (\d+);", http, re.M).group(1))
        self.assertEqual(http.count(PROD_SOCKET), keepalive + 2)
        self.assertEqual(http.count(PROD_CACHE), 1)
        tmp = Path(tempfile.mkdtemp(prefix="connector-nginx-t-"))
        try:
            conf, result = nginx_t(tmp, DROP_INS[:1], DROP_INS[1:],
                                   {PROD_SOCKET: f"unix:{tmp}/fcgi.sock",
                                    PROD_CACHE: f" {tmp}/cache "}, ["connector.conf"])
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


# --- the headers every answer carries, and the server level -------------------------------

def blocks(text):
    """(header, body) of every `location ... { ... }` block, nested ones included."""
    found, starts = [], []
    for match in re.finditer(r"[{}]", text):
        if match.group() == "{":
            line_start = text.rfind("\n", 0, match.start()) + 1
            starts.append((text[line_start:match.start()].strip(), match.end()))
        else:
            header, start = starts.pop()
            found.append((header, text[start:match.start()]))
    return [(h, b) for h, b in found if h.startswith("location")]


def strip_comments(text):
    """The configuration without comments, and with every quoted string emptied (they hold
    braces and '#')."""
    lines = []
    for line in text.splitlines():
        kept, quote = "", None
        for ch in line:
            if quote:
                if ch == quote:
                    quote = None
                    kept += ch
                continue
            if ch == "#":
                break
            if ch in "'\"":
                quote = ch
            kept += ch
        lines.append(kept)
    return "\n".join(lines)


class Hardening(unittest.TestCase):
    NOSNIFF = "add_header X-Content-Type-Options nosniff always;"

    def test_every_location_with_its_own_headers_repeats_nosniff(self):
        # add_header in a location replaces every add_header of the levels above it.
        checked = 0
        for path in sorted(NGINX.glob("*.conf")):
            text = strip_comments(path.read_text())
            for header, body in blocks(text):
                own = re.sub(r"\{[^{}]*\}", "", body)  # not the nested if-blocks' lines
                if "add_header" in own or "include snippets/connector-v1.conf" in own:
                    with self.subTest(file=path.name, location=header):
                        included = "include snippets/connector-v1.conf" in own
                        self.assertTrue(self.NOSNIFF in own or included, header)
                        checked += 1
        self.assertGreaterEqual(checked, 18)
        self.assertIn(self.NOSNIFF, strip_comments((NGINX / "connector-v1.conf").read_text()))

    def test_server_level_headers_version_and_limits(self):
        text = strip_comments((NGINX / "connector.conf").read_text())
        top = text
        while re.search(r"\{[^{}]*\}", top):
            top = re.sub(r"[^\n;{}]*\{[^{}]*\}", "", top)  # outside every block
        for line in ("server_tokens off;", self.NOSNIFF, "client_header_timeout 10s;",
                     "client_body_timeout 10s;", "send_timeout 10s;",
                     "client_max_body_size 1k;"):
            self.assertIn(line, top)
        self.assertRegex(top, r"error_page 400 494 501 505 =400 /\.connector-error/")
        self.assertIn("max_ranges 0;", (NGINX / "connector-v1.conf").read_text())


if __name__ == "__main__":
    unittest.main()
