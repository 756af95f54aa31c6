"""The Debian package of this build tree, and a throw-away root to install it in.

package_in_new_directory(prefix) does that in a new temporary directory. build_package(directory) runs `cpack -G DEB` on the plain build tree (cmake/packaging.cmake)
into `directory` and returns the .deb; the build tree is only read (cpack builds nothing:
CMAKE_SKIP_INSTALL_ALL_DEPENDENCY). skip_unless_plain_tree() skips a module in build-asan/:
sanitized binaries are never shipped.

run_as_root_in_overlay(work, deb, script) runs a shell script as root in a chroot onto an
overlay of / in private mount, PID and (optionally) network namespaces: dpkg, adduser, daemons
and their files all land in a tmpfs that vanishes with the namespaces, and every process the
script started is killed when it ends (the script is the namespace's PID 1). The package is at
/pkg.deb inside. Needs root and overlayfs; the caller skips the test when that fails
(overlay_unavailable()).
"""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import BUILD_DIR, sanitized_build

PACKAGE = "unit-connector"


def run(args, check=True, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=kwargs.pop("timeout", 300), **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {result.returncode}:\n"
                             f"{result.stdout}{result.stderr}")
    return result


def skip_unless_plain_tree():
    if sanitized_build():
        raise unittest.SkipTest(f"{BUILD_DIR} is a sanitizer build: the package is built and "
                                "tested from the plain build tree only")


def package_in_new_directory(prefix):
    """A new temporary directory and the package built in it, for a test module's setUpModule
    (skipped in a sanitizer tree); the directory is removed if the build fails, since unittest
    then calls no tearDownModule."""
    skip_unless_plain_tree()
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        return directory, build_package(directory)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise


def build_package(directory):
    config = BUILD_DIR / "CPackConfig.cmake"
    if not config.exists():
        raise AssertionError(f"{config} missing: configure the tree again (scripts/build)")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    run(["cpack", "-G", "DEB", "--config", config, "-B", directory / "out"], cwd=directory)
    debs = list((directory / "out").glob(f"{PACKAGE}_*.deb"))
    if len(debs) != 1:
        raise AssertionError(f"expected one .deb, got {debs}")
    return debs[0]


# $1: the work directory (holds pkg.deb and files/, copied to / inside), $2: the script.
OVERLAY = r"""
set -eu
work=$1
mount -t tmpfs tmpfs "$work/t"
mkdir "$work/t/upper" "$work/t/work" "$work/t/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/t/upper,workdir=$work/t/work" "$work/t/root"
mount -t proc proc "$work/t/root/proc"
mount --rbind /dev "$work/t/root/dev"
mount -t tmpfs tmpfs "$work/t/root/run"
mount -t tmpfs tmpfs "$work/t/root/tmp"
cp "$work/pkg.deb" "$work/t/root/pkg.deb"
if [ -d "$work/files" ]; then cp -a "$work/files/." "$work/t/root/"; fi
exec chroot "$work/t/root" /bin/sh -c "$2"
"""


def run_as_root_in_overlay(work, deb, script, files=None, network=False, timeout=120):
    """files: {path inside the root: local file} copied in before the script runs (modes
    kept). network: a private network namespace (loopback only, brought up before the
    script), so daemons may listen on any port and address without touching this machine."""
    work = Path(work)
    (work / "t").mkdir(parents=True)
    shutil.copyfile(deb, work / "pkg.deb")
    for inside, local in (files or {}).items():
        target = work / "files" / inside.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(local, target)
    # --kill-child: on a timeout, killing unshare also ends the namespace's PID 1, hence every
    # daemon the script started, and the tmpfs with them.
    namespaces = ["--mount", "--propagation", "private", "--pid", "--fork", "--kill-child"]
    if network:
        namespaces.append("--net")
        script = "ip link set lo up\n" + script
    return run(["unshare", *namespaces, "sh", "-c", OVERLAY, "overlay", work, script],
               check=False, timeout=timeout)


def overlay_unavailable(result, marker):
    """Why the throw-away root could not be made (root, unshare, overlayfs), or None when
    the script ran (it printed `marker`) or failed on its own."""
    if os.geteuid() != 0:
        return "needs root (namespaces, overlayfs, chroot)"
    if result.returncode != 0 and marker not in result.stdout and (
            "mount" in result.stderr or "unshare" in result.stderr):
        return f"no overlay root here: {result.stderr.strip()}"
    return None
