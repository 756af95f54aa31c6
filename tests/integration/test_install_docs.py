"""The install guide, executed: the shell blocks of docs/operations-install.md's "First
installation, step by step", taken from the file (never copied here), run verbatim as root in one
shell inside a throw-away root (throwaway_root.py: an overlay of this machine's /, with Debian's
mariadb-server and nginx from scripts/install-deps, in private mount, PID and network
namespaces) after `dpkg -i` of the package this tree builds. Then the endpoints are checked
through Debian's nginx layout (sites-available, conf.d, snippets), and the purge.

No systemd runs as PID 1 there, so `systemctl` and `journalctl` are the stand-ins of
install_shims/ (they start the units from the installed unit files: the socket passed as fd 3,
User, EnvironmentFile, READY=1). What the guide takes as given, a running MariaDB with root
over its unix socket and a running nginx with Debian's default site, is set up first.

It also checks the frictions an operator found (issue 14): the API's own server{} beside
Debian's default site (nginx -t passes; the snippet inside the default site fails as the guide
says), the access log's format with the request id and the cache's verdict, the docs site in
the package, the loader config, --check-config with the environment file, probes left out of
the worker's log, the purge naming what it leaves, and the guide's removal of what it leaves
(the database, its accounts, the user and the groups), run after the purge.
"""

import json
import re
import shutil
import textwrap
import unittest
from pathlib import Path

import tripwire
from harness import REPO
from throwaway_root import overlay_unavailable, package_in_new_directory, run_as_root_in_overlay

GUIDE = REPO / "docs/operations-install.md"
EVENTS_GUIDE = REPO / "docs/events.md"
SHIMS = Path(__file__).resolve().parent / "install_shims"

tmp = None
deb = None


def section_blocks(pattern, guide=GUIDE):
    """The ```sh blocks of the guide's section that `pattern` matches, dedented, in order."""
    section = re.search(pattern, guide.read_text(), re.S | re.M).group(1)
    blocks = re.findall(r"^( *)```sh\n(.*?)^\1```", section, re.S | re.M)
    return [textwrap.dedent(body) for _indent, body in blocks]


def guide_blocks():
    """The ```sh blocks of the step-by-step section."""
    return section_blocks(r"^## First installation, step by step\n(.*?)^## ")


def events_blocks():
    """The ```sh blocks of docs/events.md's "Installing it": the events drop-in on that host."""
    return section_blocks(r"^## Installing it\n(.*?)^The keys ", EVENTS_GUIDE)


def removal_blocks():
    """The ```sh blocks of "Upgrades and removal" (the last section): what a purge leaves."""
    return section_blocks(r"^## Upgrades and removal\n(.*)")


# What the guide takes as given: Debian's MariaDB (root in over the unix socket) and nginx,
# running. A fresh data directory, so nothing of this machine's databases is read.
PRECONDITIONS = r"""
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
# nginx runs before the package comes (its workers then lack the socket's group until the
# restart the guide asks for: a guide saying reload would fail here, as on a real host).
systemctl start nginx
dpkg -i /pkg.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }
echo "installed=yes"
rm -rf /var/lib/mysql && mkdir -p /var/lib/mysql /run/mysqld
chown mysql:mysql /var/lib/mysql /run/mysqld
mariadb-install-db --user=mysql --datadir=/var/lib/mysql --auth-root-authentication-method=socket \
  >/tmp/mariadb-install.log 2>&1 || { cat /tmp/mariadb-install.log; exit 1; }
mariadbd --user=mysql --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock \
  --bind-address=127.0.0.1 --port=3306 >/tmp/mariadbd.log 2>&1 &
for _ in $(seq 300); do mariadb -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
mariadb -e 'SELECT 1' >/dev/null
echo "=== the guide"
"""

# After the guide's blocks: what the test reads, as name=value lines.
CHECKS = r"""
echo "=== checks"
set +e
get() { curl -s --max-time 5 -o /tmp/body -w '%{http_code}' "http://127.0.0.1:8080$1"; }
# The worker reloads the imported networks within reference_refresh_ms (1 s); asked with an
# unknown parameter, which nginx answers but never stores, so no early answer gets cached.
for _ in $(seq 100); do
  [ "$(get '/v1/networks?ready=1')" = 200 ] && grep -q '"unitiot"' /tmp/body && break
  sleep 0.1
done
printf 'service_status=%s\n' "$(systemctl status connector-worker.service | grep -o 'Status: .*')"
printf 'history=%s %s\n' "$(get '/v1/history?page_size=1')" "$(head -c 300 /tmp/body)"
printf 'networks=%s\n' "$(get /v1/networks)"
printf 'readyz=%s %s\n' "$(get /readyz)" "$(cat /tmp/body)"
printf 'docs=%s\n' "$(get /docs/)"
printf 'openapi=%s %s\n' "$(get /v1/openapi.json)" "$(head -c 20 /tmp/body)"
printf 'default_site=%s\n' "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:80/)"
printf 'account=%s %s\n' "$(get '/v1/account?recipient_address=0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE&recipient_blockchain=unitiot&deposit_blockchain=unitcore')" "$(cat /tmp/body)"
printf 'accounts_recorded=%s\n' "$(mariadb -N -e "SELECT COUNT(*) FROM connector.deposit_accounts WHERE recipient_address = '0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE'")"
printf 'check_config=%s\n' "$(connector-worker --config /etc/connector/connector.conf --env-file /etc/connector/connector.env --check-config 2>&1 | tr '\n' ' ')"
printf 'access_log=%s\n' "$(grep 'GET /v1/networks ' /var/log/nginx/connector.access.log | head -n 1)"
printf 'worker_log_networks=%s\n' "$(journalctl -u connector-worker.service | grep -c '"endpoint":"/v1/networks"')"
printf 'worker_log_probes=%s\n' "$(journalctl -u connector-worker.service | grep -c '"endpoint":"ops"')"
# Events (docs/events.md's install, run after the guide): a stream gets the record's state, and
# a long-poll held by the events nginx (connector-events.service, through its subscriber socket,
# which the API nginx's workers reach by the group connector-events) answers when the record
# changes.
hash=$(mariadb -N -e "SELECT hash FROM connector.history WHERE status <> 'Confirmed' ORDER BY id LIMIT 1")
curl -s -N --max-time 4 -H 'Accept: text/event-stream' -o /tmp/stream "http://127.0.0.1:8080/v1/history/hash/events?hash=$hash"
printf 'stream_events=%s\n' "$(grep -c "^data: {.*\"hash\":\"$hash\"" /tmp/stream)"
# The stream's lines, each data line cut after "data: {" and each line ended by "|": the event is
# an id line, a data line, a blank line (a ping comment may come too); no CR anywhere.
printf 'stream_lines=%s\n' "$(sed 's/^data: {.*/data: {/' /tmp/stream | tr '\n' '|')"
printf 'stream_crs=%s\n' "$(tr -cd '\r' </tmp/stream | wc -c)"
# nchan in the events nginx only: not in the API nginx's configuration, nor mapped in its running
# master; mapped in the events nginx's.
mapped() { grep -q ngx_nchan_module "/proc/$(cat "$1")/maps" && echo mapped || echo none; }
printf 'api_nginx_nchan=%s %s\n' "$(nginx -T 2>/dev/null | grep -c ngx_nchan_module)" \
  "$(mapped /run/nginx.pid)"
printf 'events_nginx_nchan=%s\n' "$(mapped /run/connector-events/nginx.pid)"
# The API nginx's old workers close held streams 10 s after a reload (connector-events-main.conf).
printf 'api_shutdown_timeout=%s\n' "$(nginx -T 2>/dev/null | grep -x 'worker_shutdown_timeout 10s;')"
get "/v1/history/hash/changes?hash=$hash" >/dev/null
after=$(sed -n 's/.*"after":"\([0-9]*\)".*/\1/p' /tmp/body)
curl -s --max-time 40 -o /tmp/poll -w '%{http_code}' "http://127.0.0.1:8080/v1/history/hash/changes?hash=$hash&after=$after" >/tmp/poll_status &
poll=$!
sleep 1
mariadb -e "UPDATE connector.history SET status = 'Confirmed' WHERE hash = '$hash'"
wait $poll
printf 'poll=%s %s\n' "$(cat /tmp/poll_status)" "$(cat /tmp/poll)"
# Asked again from the same point: the change itself, from the feed.
printf 'poll_again=%s\n' "$(get "/v1/history/hash/changes?hash=$hash&after=$after") $(cat /tmp/body)"
latest=$(sed -n 's/.*"after":"\([0-9]*\)".*/\1/p' /tmp/body)
# The events nginx stopped: a stream is told to come back shortly, a poll is the API's JSON 503,
# the API answers as before;
# started again, a stream gets the record's state again (from the publisher: its buffers are new).
systemctl stop connector-events.service
stream() { curl -s -N --max-time 4 -H 'Accept: text/event-stream' -o /tmp/stream -w '%{http_code}' "http://127.0.0.1:8080/v1/history/hash/events?hash=$hash"; }
printf 'events_down_stream=%s %s\n' "$(stream)" "$(tr '\n' '|' </tmp/stream)"
printf 'events_down_poll=%s\n' "$(get "/v1/history/hash/changes?hash=$hash&after=$latest")"
printf 'events_down_networks=%s\n' "$(get /v1/networks)"
systemctl start connector-events.service
printf 'events_again=%s %s\n' "$(stream)" "$(grep -c '"status":"Confirmed"' /tmp/stream)"
printf 'events_log=%s\n' "$(journalctl -u connector-events.service | grep -c '\[emerg\]\|\[alert\]')"
printf 'events_cursor=%s\n' "$(stat -c '%U %a' /var/lib/connector/events-cursor 2>&1)"
printf 'nginx_reads_config=%s\n' "$(runuser -u www-data -- cat /etc/connector/connector.conf >/dev/null 2>&1 && echo yes || echo no)"
# The crash tripwire's lines (tripwire.py) in every log of the installed processes, before the
# steps below that make nginx fail on purpose; the test judges them.
printf 'fatal_lines=%s\n' "$( (cat /var/log/nginx/error.log /var/log/nginx/connector.error.log
  journalctl -u connector-worker.service; journalctl -u connector-events.service) 2>&1 |
  grep -E '\[(alert|emerg|crit)\]|Assertion|killed by ' | tr '\n' '|')"
# The guide's warning, checked as it says: the API's snippet inside Debian's default site fails
# nginx -t with a duplicate location "/" (the default site put back afterwards).
cp /etc/nginx/sites-available/default /tmp/default-site
sed -i 's|^\(\s*server_name _;\)|\1 include snippets/connector.conf;|' /etc/nginx/sites-available/default
printf 'in_default_site=%s\n' "$(nginx -t 2>&1 | grep -o 'duplicate location "/"' || echo passed)"
cp /tmp/default-site /etc/nginx/sites-available/default
# The package's prerm stops the units only where systemd runs (/run/systemd/system), as on a
# real host: the stand-in stops them here instead, so no process of the user outlives the purge.
systemctl stop connector-worker.service connector-worker.socket connector-events.service
dpkg --purge unit-connector >/tmp/purge.log 2>&1
printf 'purge=%s\n' "$(tr '\n' ' ' </tmp/purge.log)"
printf 'events_after_purge=%s %s\n' "$(ps -eo args | grep -c '^nginx: master process .*/etc/connector/')" \
  "$(ls /etc/connector/connector-events-nginx.conf /lib/systemd/system/connector-events.service 2>/dev/null | wc -l)"
"""

# After the purge: the guide's removal of what it leaves, in a subshell that stops at the first
# failing command, then what is left of it.
REMOVAL = r"""
( set -eu
{blocks}
) >/tmp/removal.log 2>&1
printf 'removal=%s %s\n' "$?" "$(tr '\n' ' ' </tmp/removal.log)"
printf 'database_after_removal=%s\n' "$(mariadb -N -e "SHOW DATABASES LIKE 'connector%'" 2>&1)"
printf 'accounts_after_removal=%s\n' "$(mariadb -N -e "SELECT COUNT(*) FROM mysql.user WHERE user LIKE 'connector%'" 2>&1)"
printf 'user_after_removal=%s\n' "$(getent passwd connector connector-webhooks | cut -d: -f1 | tr '\n' ' ')"
printf 'groups_after_removal=%s\n' "$(getent group connector connector-fcgi connector-events | cut -d: -f1 | tr '\n' ' ')"
"""


def setUpModule():
    global tmp, deb
    tmp, deb = package_in_new_directory("connector-install-docs-")


def tearDownModule():
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


class GuideRunsVerbatim(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not Path("/proc/net/if_inet6").exists():
            # The site file listens on [::]:8080, as Debian's default site on [::]:80; the
            # guide says to delete that line on such hosts.
            raise unittest.SkipTest("no IPv6 on this host")
        blocks = guide_blocks()
        removal = REMOVAL.replace("{blocks}", "\n".join(removal_blocks()))
        script = (PRECONDITIONS + "\n".join(blocks) + '\necho "=== events"\n' +
                  "\n".join(events_blocks()) + CHECKS + removal)
        cls.blocks = blocks
        cls.result = run_as_root_in_overlay(
            tmp / "root", deb, script, network=True, timeout=240,
            files={"/usr/local/sbin/systemctl": SHIMS / "systemctl",
                   "/usr/local/bin/journalctl": SHIMS / "journalctl"})
        unavailable = overlay_unavailable(cls.result, "installed=yes")
        if unavailable:
            raise unittest.SkipTest(unavailable)
        cls.output = cls.result.stdout + cls.result.stderr
        cls.report = dict(line.split("=", 1) for line in cls.result.stdout.split("=== checks")[-1]
                          .splitlines() if "=" in line)

    def value(self, name):
        self.assertIn(name, self.report, self.output)
        return self.report[name]

    def test_the_guide_has_the_commands_of_its_five_steps(self):
        # Step 2 has two blocks (the files, then their check); a block lost to a formatting
        # slip would otherwise go untested silently.
        self.assertEqual(len(self.blocks), 6, self.blocks)
        for block, command in zip(self.blocks, ["connector-migrate", "connector.env",
                                                "--check-config", "nginx -t", "systemctl enable",
                                                "connector-admin --config"]):
            self.assertIn(command, block)

    def test_every_command_of_the_guide_succeeded(self):
        # The script runs under `set -e`: the checks are reached only if every block passed.
        self.assertEqual(self.result.returncode, 0, self.output)
        self.assertIn("=== checks", self.result.stdout, self.output)

    def test_the_api_answers_through_debians_nginx_layout(self):
        status, body = self.value("history").split(" ", 1)
        self.assertEqual(status, "200", self.output)
        self.assertIn('"total_history":"100"', body)
        self.assertEqual(self.value("networks"), "200")
        self.assertEqual(self.value("readyz").split(" ", 1)[0], "200")
        # Debian's default site still answers on port 80, beside the API's own server{}.
        self.assertEqual(self.value("default_site"), "200")
        self.assertEqual(self.value("service_status"), 'Status: "serving"')

    def test_events_installed_as_documented_hold_a_stream_and_a_long_poll(self):
        self.assertEqual(len(events_blocks()), 5)
        for block, command in zip(events_blocks(), ["libnginx-mod-nchan", "tmpfiles",
                                                    "connector-events-proxy.conf",
                                                    "connector-events.service",
                                                    "events_publisher"]):
            self.assertIn(command, block)
        self.assertEqual(self.value("stream_events"), "1", self.output)
        # One event, two clean lines and the blank one, LF only (a ping comment may come too).
        self.assertRegex(self.value("stream_lines").replace(": ping||", ""),
                         r"^id: [1-9][0-9]*\|data: \{\|\|$")
        self.assertEqual(self.value("stream_crs"), "0")
        status, body = self.value("poll").split(" ", 1)
        self.assertEqual(status, "200", self.output)
        # The wake-up (the change came while nchan held the poll), or the change itself (it
        # was published before the poll got there); asked again, the change.
        if body != '{"changes":[]}':
            self.assertEqual(json.loads(body)["changes"][0]["record"]["status"], "Confirmed")
        status, body = self.value("poll_again").split(" ", 1)
        self.assertEqual(status, "200", self.output)
        self.assertEqual([change["record"]["status"] for change in json.loads(body)["changes"]],
                         ["Confirmed"])
        self.assertEqual(self.value("events_cursor"), "connector 600")
        # nginx reaches the events' sockets without the group that reads the password.
        self.assertEqual(self.value("nginx_reads_config"), "no")

    def test_nchan_runs_in_the_events_nginx_only(self):
        # Neither in the API nginx's configuration (Debian's module link removed) nor mapped in
        # its running master; mapped in the events nginx's.
        self.assertEqual(self.value("api_nginx_nchan"), "0 none", self.output)
        self.assertEqual(self.value("events_nginx_nchan"), "mapped", self.output)
        self.assertEqual(self.value("api_shutdown_timeout"), "worker_shutdown_timeout 10s;",
                         self.output)

    def test_the_events_nginx_stopped_touches_the_event_paths_only(self):
        # A stream is told to come back shortly (an error status would end a browser's
        # EventSource); a poll is the API's 503.
        self.assertEqual(self.value("events_down_stream"), "200 retry: 3000|: again shortly||",
                         self.output)
        self.assertEqual(self.value("events_down_poll"), "503", self.output)
        self.assertEqual(self.value("events_down_networks"), "200", self.output)
        # Started again: a stream gets the record's state (Confirmed by then).
        self.assertEqual(self.value("events_again"), "200 1", self.output)
        self.assertEqual(self.value("events_log"), "0", self.output)

    def test_no_installed_process_crashed(self):
        # The one stop on purpose above: while the events nginx is stopped, the API's nginx
        # cannot reach its socket and says so for each hand-over.
        stopped = re.compile(r"\[crit\] .*connect\(\) to unix:/run/connector-events/"
                             r"subscribe\.sock failed \(2: No such file or directory\)")
        lines = [line for line in self.value("fatal_lines").split("|") if line]
        self.assertTrue(all(tripwire.FATAL.search(line) for line in lines), lines)
        self.assertEqual([line for line in lines if not stopped.search(line) and
                          not any(p.search(line) for p, _ in tripwire.HARMLESS)], [])

    def test_the_snippet_in_debians_default_site_fails_as_the_guide_says(self):
        self.assertEqual(self.value("in_default_site"), 'duplicate location "/"')
        self.assertIn('duplicate location "/"', GUIDE.read_text())

    def test_the_docs_site_is_in_the_package(self):
        self.assertEqual(self.value("docs"), "200")
        status, head = self.value("openapi").split(" ", 1)
        self.assertEqual(status, "200")
        self.assertTrue(head.startswith("{"), head)

    def test_a_new_deposit_address_is_recorded_by_the_writer_account(self):
        status, body = self.value("account").split(" ", 1)
        self.assertEqual(status, "200", body)
        self.assertRegex(body, r'"deposit_address":"0x[0-9a-fA-F]{40}"')
        self.assertEqual(self.value("accounts_recorded"), "1")

    def test_check_config_with_the_environment_file_sees_the_passwords(self):
        settings = self.value("check_config").split()
        self.assertIn("db_password=(set)", settings)
        self.assertIn("db_user=connector_reader", settings)
        self.assertIn("db_write_user=connector_writer", settings)

    def test_nginx_access_log_has_the_request_id_and_the_cache_verdict(self):
        line = self.value("access_log")
        self.assertRegex(line, r'"GET /v1/networks HTTP/1\.1" 200 \d+ [0-9.]+ '
                               r'request_id=[0-9a-f]{32} upstream=200/[0-9.]+ cache=MISS')

    def test_probes_stay_out_of_the_workers_log(self):
        self.assertGreaterEqual(int(self.value("worker_log_networks")), 1, self.output)
        self.assertEqual(self.value("worker_log_probes"), "0")

    def test_purge_names_what_it_leaves(self):
        purge = self.value("purge")
        for path in ("/etc/nginx/conf.d/connector-http.conf", "/etc/nginx/snippets/connector.conf",
                     "/etc/nginx/sites-available/connector", "/etc/nginx/sites-enabled/connector",
                     "/var/cache/nginx-connector", "/var/log/nginx/connector.access.log"):
            self.assertIn(path, purge)
        self.assertIn("also left: the database and its accounts", purge)
        for path in ("/etc/nginx/conf.d/connector-events-http.conf",
                     "/etc/nginx/snippets/connector-events.conf",
                     "/etc/nginx/snippets/connector-events-proxy.conf"):
            self.assertIn(path, purge)
        # The events nginx stopped before the purge (the package's prerm does it where systemd
        # runs), its configuration and unit gone with the package.
        self.assertEqual(self.value("events_after_purge"), "0 0", self.output)

    def test_the_guides_removal_of_what_purge_leaves_removes_it(self):
        self.assertEqual(len(removal_blocks()), 1)
        self.assertTrue(self.value("removal").startswith("0 "), self.value("removal"))
        self.assertEqual(self.value("database_after_removal"), "")
        self.assertEqual(self.value("accounts_after_removal"), "0")
        self.assertEqual(self.value("user_after_removal"), "")
        self.assertEqual(self.value("groups_after_removal"), "")


if __name__ == "__main__":
    unittest.main()
