"""The shipped drop-ins under the nginx modules Debian loads: `nginx -t` says not a word.

Debian's nginx.conf loads every module of /etc/nginx/modules-enabled/ (nchan, which the events
nginx needs, from libnginx-mod-nchan; echo, with nginx-light). Their variables, with nginx's own
and the drop-ins' maps, outgrew nginx's default variables hash: every `nginx -t`, start and
reload warned "could not build optimal variables_hash" until connector-http.conf raised
variables_hash_max_size. test_nginx_files checks the drop-ins without modules; this, with them. No
stack: only nginx -t (harness.nginx_t, the nginx.conf both use).
"""

import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import nginx_t

MODULES_ENABLED = Path("/etc/nginx/modules-enabled")
CONF_D = ["connector-http.conf", "connector-events-http.conf"]
SNIPPETS = ["connector.conf", "connector-cache-rules.conf", "connector-v1.conf",
            "fastcgi-connector.params", "connector-docs.conf", "connector-monitoring.conf",
            "connector-events.conf", "connector-events-proxy.conf"]


def load_module_lines():
    """The load_module lines Debian's nginx.conf includes (modules-enabled/*.conf), each path
    made absolute (Debian's are relative to nginx's compiled-in prefix, not to this test's)."""
    version = subprocess.run(["nginx", "-V"], capture_output=True, text=True, timeout=30).stderr
    prefix = Path(re.search(r"--prefix=(\S+)", version).group(1))
    lines = []
    for conf in sorted(MODULES_ENABLED.glob("*.conf")):
        for path in re.findall(r"^\s*load_module\s+([^;]+);", conf.read_text(), re.M):
            lines.append(f"load_module {prefix / path.strip()};")
    return lines


class DropInsWithDebiansModules(unittest.TestCase):
    def test_nginx_t_is_silent_with_the_modules_enabled(self):
        modules = load_module_lines()
        # Not vacuous: nchan (scripts/install-deps installs it) is among them.
        self.assertTrue(any("ngx_nchan_module" in line for line in modules), modules)
        tmp = Path(tempfile.mkdtemp(prefix="connector-nginx-modules-"))
        try:
            moved = {"unix:/run/connector/fcgi.sock ": f"unix:{tmp}/fcgi.sock ",
                     " /var/cache/nginx-connector ": f" {tmp}/cache ",
                     "unix:/run/connector-events/subscribe.sock": f"unix:{tmp}/subscribe.sock",
                     " /var/log/nginx/error.log ": f" {tmp}/error.log "}
            _, result = nginx_t(tmp, CONF_D, SNIPPETS, moved,
                                ["connector.conf", "connector-events.conf"], modules, quiet=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            # nchan's [info] lines on its shared memory go to the error log; a warning or worse
            # would be on stderr too.
            self.assertEqual(result.stderr, "")
            self.assertNotIn("variables_hash", (tmp / "error.log").read_text())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
