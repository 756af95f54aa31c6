"""The Debian package (cmake/packaging.cmake): built with `cpack -G DEB` from this build tree into
a temporary directory, then checked as an archive (control fields, conffiles, maintainer
scripts, the exact file list, modes and contents), as an extracted tree (`dpkg -x`: the
programs run from it), and installed for real with dpkg into a throw-away root: an overlay of /
in a private mount namespace, so postinst (user, permissions), a reinstall that keeps an edited
conffile, `systemd-analyze verify` of the installed units and the purge all run without
touching this machine. That last part needs root and overlayfs and is skipped without them.

Only the plain tree packages: in build-asan/ the whole module is skipped (sanitized binaries
are never shipped, and their extra library dependencies would be wrong in the control file).
scripts/package makes the release package the same way from its own Release tree.
"""

import json
import os
import re
import shutil
import unittest

from harness import BUILD_DIR, REPO
from throwaway_root import (PACKAGE, overlay_unavailable, package_in_new_directory, run,
                            run_as_root_in_overlay)

SHARE = "usr/share/connector"
DOC = f"usr/share/doc/{PACKAGE}"
OPS_SCRIPTS = [name for name in ("migrate", "db-accounts") if (REPO / "scripts" / name).exists()]

deb = None
tmp = None


def setUpModule():
    global deb, tmp
    tmp, deb = package_in_new_directory("connector-package-")


def tearDownModule():
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


def project_version():
    m = re.search(r"project\(unit_connector\b[^)]*\bVERSION\s+([0-9.]+)",
                  (REPO / "CMakeLists.txt").read_text())
    return m.group(1)


def field(name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def relation_names(value):
    """Package names of a Depends/Recommends value, alternatives included."""
    return {re.match(r"\s*([a-z0-9][a-z0-9+.-]+)", alt).group(1)
            for item in value.split(",") for alt in item.split("|") if alt.strip()}


def repo_files(directory, keep=lambda p: True):
    base = REPO / directory
    return {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() and keep(p)}


def expected_layout():
    """Every file the package must hold, relative to / (directories aside), and the repository
    file each must be a copy of (None: built or generated)."""
    files = {
        "usr/bin/connector-worker": None,
        "usr/bin/connector-admin": None,
        "usr/bin/connector-webhooks": None,
        "lib/systemd/system/connector-worker.socket": REPO / "systemd/connector-worker.socket",
        "lib/systemd/system/connector-worker.service": REPO / "systemd/connector-worker.service",
        "lib/systemd/system/connector-events.service": REPO / "systemd/connector-events.service",
        "lib/systemd/system/connector-webhooks.service":
            REPO / "systemd/connector-webhooks.service",
        "etc/connector/connector-events-nginx.conf": REPO / "nginx/connector-events-nginx.conf",
        "etc/connector/connector.conf": REPO / "fcgi/connector.conf.example",
        "etc/connector/connector.env": REPO / "cmake/debian/connector.env",
        "etc/connector/webhooks.env": REPO / "cmake/debian/webhooks.env",
        f"{DOC}/README.md": REPO / "README.md",
        f"{DOC}/copyright": REPO / "cmake/debian/copyright",
        f"{DOC}/changelog.Debian.gz": None,
        f"{SHARE}/admin.conf.example": REPO / "src/admin/admin.conf.example",
        f"{SHARE}/monitoring/connector.rules.yml": REPO / "monitoring/connector.rules.yml",
    }
    # The events nginx's own configuration is in /etc/connector only (its unit reads it there).
    for name in repo_files("nginx", lambda p: p.name not in ("local.conf.in",
                                                             "connector-events-nginx.conf")):
        files[f"{SHARE}/nginx/{name}"] = REPO / "nginx" / name
    for name in repo_files("sql"):
        files[f"{SHARE}/sql/{name}"] = REPO / "sql" / name
    for name in OPS_SCRIPTS:
        files[f"{SHARE}/scripts/{name}"] = REPO / "scripts" / name
        files[f"usr/sbin/connector-{name}"] = None
    for name in repo_files("docs", lambda p: p.suffix == ".md"):
        files[f"{DOC}/docs/{name}"] = REPO / "docs" / name
    # The API reference page: always (without it cpack fails: cmake/packaging.cmake).
    for page in (BUILD_DIR / "docs-site").iterdir():
        files[f"{SHARE}/docs-site/{page.name}"] = page
    return files


class PackageArchive(unittest.TestCase):
    def test_control_fields(self):
        self.assertEqual(field("Package"), PACKAGE)
        self.assertEqual(field("Version"), f"{project_version()}-1")
        self.assertEqual(field("Architecture"), run(["dpkg", "--print-architecture"]).stdout.strip())
        self.assertRegex(field("Maintainer"), r"^[^<>]+ <[^@<>\s]+@[^@<>\s]+>$")
        self.assertTrue(field("Description").startswith("UNIT connector query service"))
        recommends = relation_names(field("Recommends"))
        self.assertIn("nginx", recommends)
        self.assertIn("libnginx-mod-nchan", recommends)  # the events nginx's
        depends = relation_names(field("Depends"))
        self.assertIn("adduser", depends)  # postinst runs it
        # Users bring their own nginx and database: recommended, never required.
        self.assertFalse(depends & {"nginx", "nginx-light", "mariadb-server", "mariadb-client"},
                         field("Depends"))
        for name in ("libfcgi0ldbl", "libmysqlcppconn7v5", "libcurl4", "libc6", "libstdc++6"):
            self.assertIn(name, depends)
        # libfcgi with Debian's fix of CVE-2025-23016, whatever dpkg-shlibdeps asks for.
        self.assertIn("libfcgi0ldbl (>= 2.4.2-2+deb12u1)", field("Depends"))

    def test_the_file_name_is_the_one_the_docs_name(self):
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        self.assertEqual(deb.name, f"{PACKAGE}_{project_version()}-1_{arch}.deb")
        # The docs name the amd64 file of the current version.
        self.assertIn(f"`{PACKAGE}_{project_version()}-1_amd64.deb`",
                      (REPO / "docs/operations.md").read_text())

    def test_depends_covers_every_library_the_programs_load(self):
        # dpkg-shlibdeps computed Depends: each NEEDED library of both programs comes from a
        # package listed there.
        depends = relation_names(field("Depends"))
        for program in (BUILD_DIR / "fcgi/connector-worker", BUILD_DIR / "src/connector-admin",
                        BUILD_DIR / "src/connector-webhooks"):
            needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                                run(["readelf", "-d", program]).stdout)
            self.assertTrue(needed, program)
            for soname in needed:
                owners = run(["dpkg", "-S", f"*/{soname}"], check=False).stdout
                packages = {line.split(":")[0] for line in owners.splitlines() if ": " in line}
                self.assertTrue(packages & depends,
                                f"{program.name} needs {soname} from {packages}, not in Depends")

    def test_exact_layout_modes_and_contents(self):
        listing = run(["dpkg-deb", "-c", deb]).stdout.splitlines()
        entries = {}
        for line in listing:
            mode, owner, _size, _date, _time, path = line.split(None, 5)
            entries[path.removeprefix("./")] = (mode, owner)
        files = {p: m for p, m in entries.items() if not m[0].startswith("d")}
        expected = expected_layout()
        self.assertEqual(sorted(files), sorted(expected))
        for path, (mode, owner) in entries.items():
            self.assertEqual(owner, "root/root", path)
        # Programs executable; config readable by root only until postinst gives it to the
        # group connector; the env file (secrets) root's alone; the rest world-readable.
        modes = {p: m for p, (m, _) in files.items()}
        for path in ["usr/bin/connector-worker", "usr/bin/connector-admin",
                     "usr/bin/connector-webhooks",
                     *[f"usr/sbin/connector-{n}" for n in OPS_SCRIPTS],
                     *[f"{SHARE}/scripts/{n}" for n in OPS_SCRIPTS]]:
            self.assertEqual(modes.pop(path), "-rwxr-xr-x", path)
        self.assertEqual(modes.pop("etc/connector/connector.conf"), "-rw-r-----")
        self.assertEqual(modes.pop("etc/connector/connector.env"), "-rw-------")
        self.assertEqual(modes.pop("etc/connector/webhooks.env"), "-rw-------")
        for path, mode in modes.items():
            self.assertEqual(mode, "-rw-r--r--", path)

        root = tmp / "extract"
        shutil.rmtree(root, ignore_errors=True)
        run(["dpkg", "-x", deb, root])
        for path, source in expected.items():
            if source is not None:
                self.assertEqual((root / path).read_bytes(), source.read_bytes(), path)
        for program in ("connector-worker", "connector-admin", "connector-webhooks"):
            sections = run(["readelf", "-S", root / "usr/bin" / program]).stdout
            self.assertNotIn(".symtab", sections, f"{program} is not stripped")

    def test_control_files_and_maintainer_scripts(self):
        control = tmp / "control"
        shutil.rmtree(control, ignore_errors=True)
        run(["dpkg-deb", "-e", deb, control])
        self.assertEqual(sorted(p.name for p in control.iterdir()),
                         ["conffiles", "control", "md5sums", "postinst", "postrm", "prerm"])
        self.assertEqual((control / "conffiles").read_text().split(),
                         ["/etc/connector/connector.conf", "/etc/connector/connector.env",
                          "/etc/connector/webhooks.env",
                          "/etc/connector/connector-events-nginx.conf"])
        for script in ("postinst", "prerm", "postrm"):
            path = control / script
            self.assertTrue(os.access(path, os.X_OK), script)
            self.assertTrue(path.read_text().startswith("#!/bin/sh\n"), script)
            self.assertNotIn("@", path.read_text(), f"{script}: unrendered placeholder")
            run(["sh", "-n", path])
        postinst = re.sub(r"\\\n\s*", "", (control / "postinst").read_text())
        self.assertRegex(postinst, r"adduser --system --group --no-create-home --home /nonexistent"
                                   r"\b.* connector\b")
        self.assertIn("chown root:connector /etc/connector/connector.conf", postinst)
        self.assertIn("chmod 0640 /etc/connector/connector.conf", postinst)
        # The FastCGI socket's own group (connector-worker.socket), nginx's user its member.
        self.assertIn("addgroup --system connector-fcgi", postinst)
        self.assertIn("adduser www-data connector-fcgi", postinst)
        # ... on the first installation only: an upgrade leaves the group as the operator has it.
        self.assertIn('if [ -z "$2" ] && getent passwd www-data', postinst)
        # systemd is told about the units only when it runs; nothing is enabled or started.
        self.assertIn("[ -d /run/systemd/system ]", postinst)
        self.assertIn("daemon-reload", postinst)
        for script in ("postinst", "postrm"):
            for line in (control / script).read_text().splitlines():
                self.assertNotRegex(
                    line, r"^\s*(systemctl|deb-systemd-invoke|invoke-rc\.d)\b.*\s"
                          r"(start|restart|try-restart|enable)\b", f"{script}: {line}")


    def test_lintian_reports_no_errors(self):
        # Debian's own package checker, as a user's archive or a reviewer would run it. Warnings
        # (a manual page per program, the hardening flags of a RelWithDebInfo tree) are read,
        # not failed on: the release package comes from scripts/package's Release tree.
        self.assertIsNotNone(shutil.which("lintian"), "lintian missing (scripts/install-deps)")
        result = run(["lintian", "--fail-on", "error", "--tag-display-limit", "0", deb],
                     check=False, timeout=600)
        errors = [line for line in result.stdout.splitlines() if line.startswith("E:")]
        self.assertEqual(errors, [], result.stdout)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


class PackageWithoutTheDocsSite(unittest.TestCase):
    def test_installing_a_tree_without_the_docs_site_fails_before_copying_anything(self):
        # A tree configured without node (or tools/openapi's npm packages) has no docs-site
        # target; a package made from it would answer /docs/ and /v1/openapi.json with 404, so
        # `cmake --install` (and cpack, which runs it) fails, loudly, with what to do.
        tree, prefix = tmp / "no-docs-tree", tmp / "no-docs-prefix"
        run(["cmake", "-S", REPO, "-B", tree, "-DCONNECTOR_DOCS_NODE=/nonexistent/node",
             "-DCMAKE_BUILD_TYPE=Release"])
        result = run(["cmake", "--install", tree, "--prefix", prefix], check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("The API reference page (docs-site) is not built", result.stderr)
        self.assertFalse(prefix.exists() and any(prefix.rglob("*")), "files were installed")


class ExtractedPrograms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tmp / "run-root"
        run(["dpkg", "-x", deb, cls.root])

    def test_worker_runs_and_reads_the_shipped_config(self):
        worker = self.root / "usr/bin/connector-worker"
        result = run([worker, "--help"])
        self.assertIn("usage: connector-worker", result.stdout + result.stderr)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
        check = run([worker, "--config", self.root / "etc/connector/connector.conf",
                     "--check-config"], env=env)
        self.assertIn("listen=/run/connector/fcgi.sock", check.stdout.split())

    def test_admin_runs(self):
        result = run([self.root / "usr/bin/connector-admin", "sample", "--history", "2"])
        document = json.loads(result.stdout)
        self.assertEqual(len(document["history"]), 2)

    def test_ops_scripts_find_their_files(self):
        # The wrappers run the scripts in /usr/share/connector/scripts, which find their SQL in
        # ../sql: both answer with their own usage (exit 2) when called without arguments.
        for name in OPS_SCRIPTS:
            result = run([self.root / "usr/sbin" / f"connector-{name}"], check=False)
            self.assertEqual(result.returncode, 2, result)
            self.assertIn(f"{SHARE}/scripts/{name}", result.stderr.replace(str(self.root), ""))
            self.assertIn("--socket", result.stderr)


# Runs inside the throw-away root (chroot), as root. Prints "name=value" lines for the test.
IN_ROOT = r"""
set -eu
PATH=/usr/sbin:/usr/bin:/sbin:/bin
report() { printf '%s=%s\n' "$1" "$2"; }
dpkg -i /pkg.deb >/dev/null
report user "$(getent passwd connector)"
report group "$(getent group connector | cut -d: -f1)"
report fcgi_group "$(getent group connector-fcgi)"
report modes "$(stat -c '%n:%a:%U:%G' /etc/connector /etc/connector/connector.conf /etc/connector/connector.env /etc/connector/webhooks.env | tr '\n' ' ')"
report webhooks_user "$(id -nG connector-webhooks) $(getent passwd connector-webhooks | cut -d: -f6,7)"
# The deliverer's user reads the config too.
report check_as_webhooks "$(runuser -u connector-webhooks -- /usr/bin/connector-webhooks --config /etc/connector/connector.conf --check-config 2>&1 | tr ' ' '\n' | grep '^webhooks_db_user=' || echo FAILED)"
report conffiles "$(dpkg-query -W -f='${Conffiles}' unit-connector | awk '{print $1}' | tr '\n' ' ')"
# The service's user reads its config; nginx's user does not.
report check_as_connector "$(runuser -u connector -- /usr/bin/connector-worker --config /etc/connector/connector.conf --check-config 2>&1 | tr ' ' '\n' | grep '^listen=' || echo FAILED)"
runuser -u www-data -- cat /etc/connector/connector.conf >/dev/null 2>&1 && report www_data_reads yes || report www_data_reads no
# The installed units, as installed, against the installed binary and the root's own units.
out=$(systemd-analyze verify connector-worker.socket connector-worker.service 2>&1) && rc=0 || rc=$?
report verify "rc=$rc $(printf '%s' "$out" | tr '\n' '|')"
report migrate "$(connector-migrate 2>&1 | head -n 1)"
# A local edit of a conffile survives a reinstall.
echo 'threads = 3' >>/etc/connector/connector.conf
dpkg -i /pkg.deb >/dev/null
report edited_kept "$(grep -c '^threads = 3$' /etc/connector/connector.conf)"
report modes_after_reinstall "$(stat -c '%a:%U:%G' /etc/connector/connector.conf)"
report fcgi_members_after_reinstall "$(getent group connector-fcgi | cut -d: -f4)"
dpkg --purge unit-connector >/dev/null
report left "$(ls -d /etc/connector /usr/bin/connector-worker /lib/systemd/system/connector-worker.service /usr/share/connector 2>/dev/null | tr '\n' ' ')"
report user_after_purge "$(getent passwd connector | cut -d: -f1)"
report fcgi_group_after_purge "$(getent group connector-fcgi | cut -d: -f1)"
report status_after_purge "$(dpkg-query -W -f='${db:Status-Abbrev}' unit-connector 2>&1 || true)"
"""

class InstallInThrowawayRoot(unittest.TestCase):
    def test_install_reinstall_and_purge(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (namespaces, overlayfs, chroot)")
        result = run_as_root_in_overlay(tmp / "overlay", deb, IN_ROOT)
        unavailable = overlay_unavailable(result, "user=")
        if unavailable:
            self.skipTest(unavailable)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        report = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)

        name, _, uid, gid, _, home, shell = report["user"].split(":")
        self.assertEqual((name, home, shell), ("connector", "/nonexistent", "/usr/sbin/nologin"))
        self.assertLess(int(uid), 1000)  # a system user
        self.assertEqual(report["group"], "connector")
        # The socket's group: a system group whose one member is nginx's user (not connector,
        # whose group reads the config; not the whole of www-data's group).
        name, _, gid, members = report["fcgi_group"].split(":")
        self.assertEqual((name, members), ("connector-fcgi", "www-data"))
        self.assertLess(int(gid), 1000)
        self.assertEqual(report["modes"].split(), [
            "/etc/connector:750:root:connector",
            "/etc/connector/connector.conf:640:root:connector",
            "/etc/connector/connector.env:600:root:root",
            "/etc/connector/webhooks.env:600:root:root"])
        self.assertEqual(report["conffiles"].split(),
                         ["/etc/connector/connector.conf", "/etc/connector/connector.env",
                          "/etc/connector/webhooks.env",
                          "/etc/connector/connector-events-nginx.conf"])
        # The deliverer's own user, in group connector only (it reads the config), which is
        # not the worker's: the worker cannot read its environment.
        self.assertEqual(report["webhooks_user"], "connector /nonexistent:/usr/sbin/nologin")
        self.assertEqual(report["check_as_webhooks"], "webhooks_db_user=connector_webhooks")
        self.assertEqual(report["check_as_connector"], "listen=/run/connector/fcgi.sock")
        self.assertEqual(report["www_data_reads"], "no")
        self.assertEqual(report["verify"].strip(), "rc=0",
                         "systemd-analyze verify of the installed units")
        self.assertIn("usage:", report["migrate"])
        self.assertEqual(report["edited_kept"], "1")
        self.assertEqual(report["modes_after_reinstall"], "640:root:connector")
        self.assertEqual(report["fcgi_members_after_reinstall"], "www-data")  # added once
        self.assertEqual(report["left"], "")
        self.assertEqual(report["user_after_purge"], "connector")  # kept, as is customary
        self.assertEqual(report["fcgi_group_after_purge"], "connector-fcgi")
        self.assertNotIn("ii", report["status_after_purge"])


if __name__ == "__main__":
    unittest.main()
