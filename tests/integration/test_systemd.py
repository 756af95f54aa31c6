"""The systemd units (systemd/) and the worker the way systemd runs it.

* The shipped unit files pass `systemd-analyze verify` and `systemd-analyze security` (offline),
  byte for byte: they are copied unchanged into a scratch root directory (--root) that holds
  only what verify looks at: the worker binary of this build at /usr/bin/connector-worker (the
  unit's ExecStart path; the only substitution is which binary sits there), /bin/kill
  (ExecReload) and the host's *.target units (the units' default dependencies).
* Their settings agree with the worker: the socket path and backlog are the worker's defaults,
  the stop timeout covers the worker's drain, the access log goes to the journal.
* The worker under `systemd-socket-activate` (the socket created and owned by the activator,
  passed as fd 3 with LISTEN_FDS) answers through nginx, and the socket it serves is the one the
  activator created, never unlinked nor recreated.
* It speaks systemd's notify protocol from its main pid (NotifyAccess=main): READY=1, WATCHDOG=1
  every WATCHDOG_USEC/2, RELOADING=1 + READY=1 on SIGHUP, STOPPING=1 on SIGTERM.
* What connector-worker.socket is for: with the socket held open by someone else (here the test,
  as systemd would), a worker restart drops no request; they wait in the accept queue.
* The worker runs, reloads and drains inside the unit's own seccomp sandbox, built from the
  unit's SystemCallFilter=, SystemCallErrorNumber=, RestrictAddressFamilies=,
  MemoryDenyWriteExecute= and NoNewPrivileges= lines the way systemd 252 builds it (libseccomp).
  The rest of the sandbox (ProtectSystem=, User=, ...) needs systemd as PID 1, which the tests
  do not have.
"""

import ctypes
import fcntl
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path

from fixture import Fixture
from harness import (LOAD_FROM_ONE_CLIENT, REPO, SANITIZER_MARKERS, Stack, WORKER,
                     sanitized_build)

UNITS = REPO / "systemd"
SOCKET_UNIT = UNITS / "connector-worker.socket"
SERVICE_UNIT = UNITS / "connector-worker.service"
EVENTS_UNIT = UNITS / "connector-events.service"
EXAMPLE_CONFIG = REPO / "fcgi" / "connector.conf.example"
INSTALLED_WORKER = "/usr/bin/connector-worker"
INSTALLED_CONFIG = "/etc/connector/connector.conf"
# systemd names a socket unit's fd after the unit unless FileDescriptorName= says otherwise.
FDNAME = "connector-worker.socket"
INHERITED_LOG_LINE = "listening on the socket passed by systemd (fd 3)"

CORE = {"network": "UNITCore", "chain_id": "36888", "base_chain": "MainBase", "slug": "unitcore"}
IOT = {"network": "UNITIoT", "chain_id": "1012", "base_chain": "SideBase", "slug": "unitiot"}
NETWORKS = {"networks": [CORE, IOT]}

stack = None


def setUpModule():
    global stack
    # nginx's cache off: each request must reach the worker this test started under systemd's
    # stand-in (it checks that one answers); loads from 127.0.0.1 (LOAD_FROM_ONE_CLIENT).
    stack = Stack(fixture=Fixture().path, nginx_cache=False, nginx_env=LOAD_FROM_ONE_CLIENT)
    # Every test here starts its own worker on the stack's socket path, the way systemd would.
    stack.stop_worker()


def tearDownModule():
    stack.stop()


# --- unit files ------------------------------------------------------------------------------

def parse_unit(path):
    """{section: [(key, value), ...]} of a unit file; repeated keys stay repeated."""
    sections, current = {}, None
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def unit_values(path, section, key):
    return [v for k, v in parse_unit(path).get(section, []) if k == key]


def unit_value(path, section, key):
    values = unit_values(path, section, key)
    if len(values) != 1:
        raise AssertionError(f"{path.name}: [{section}] {key}= set {len(values)} times: {values}")
    return values[0]


def seconds(span):
    """A systemd time span as used in our units: "45s", "2min", "30"."""
    m = re.fullmatch(r"(\d+)\s*(s|sec|min|)", span)
    if not m:
        raise AssertionError(f"unexpected time span {span!r}")
    return int(m.group(1)) * (60 if m.group(2) == "min" else 1)


def worker_defaults(config_path):
    """The worker's own view of a config file: `--check-config` prints key=value pairs."""
    result = subprocess.run([str(WORKER), "--config", str(config_path), "--check-config"],
                            capture_output=True, text=True, timeout=30, env=clean_env())
    if result.returncode != 0:
        raise AssertionError(f"--check-config failed:\n{result.stdout}{result.stderr}")
    return dict(item.split("=", 1) for item in result.stdout.split())


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECTOR_")}
    env.update(extra or {})
    return env


def make_verify_root(base):
    """A root directory for `systemd-analyze verify --root`: our units unchanged, the worker at
    the path of ExecStart, /bin/kill, nginx and /bin/rm (connector-events.service), and the
    host's targets (the default dependencies)."""
    root = Path(base) / "root"
    units = root / "lib/systemd/system"
    units.mkdir(parents=True)
    for unit in (SOCKET_UNIT, SERVICE_UNIT, EVENTS_UNIT):
        shutil.copyfile(unit, units / unit.name)
    for target in Path("/lib/systemd/system").glob("*.target"):
        if target.is_file():
            shutil.copyfile(target, units / target.name)
    (root / "usr/bin").mkdir(parents=True)
    shutil.copy2(WORKER, root / INSTALLED_WORKER.lstrip("/"))
    (root / "bin").mkdir(exist_ok=True)
    shutil.copy2(os.path.realpath("/bin/kill"), root / "bin/kill")
    shutil.copy2(os.path.realpath("/bin/rm"), root / "bin/rm")  # connector-events.service's
    (root / "usr/sbin").mkdir(parents=True)
    shutil.copy2(os.path.realpath("/usr/sbin/nginx"), root / "usr/sbin/nginx")
    return root



class CheckConfig(unittest.TestCase):
    def test_check_config_reads_the_environment_file_as_the_service_would(self):
        # Passwords live in connector.env, which systemd reads for the service; --check-config
        # sees them only with --env-file (without it, the same file reports no password).
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "connector.conf"
            config.write_text("threads = 5\n")
            env_file = Path(tmp) / "connector.env"
            env_file.write_text("# secrets\nCONNECTOR_DB_PASSWORD=s3cr3t\nCONNECTOR_THREADS=3\n")
            runs = {}
            for name, extra in (("plain", []), ("env file", ["--env-file", str(env_file)])):
                result = subprocess.run([str(WORKER), "--config", str(config), *extra,
                                         "--check-config"], capture_output=True, text=True,
                                        timeout=30, env=clean_env())
                self.assertEqual(result.returncode, 0, result.stderr)
                runs[name] = dict(item.split("=", 1) for item in result.stdout.split())
            self.assertEqual((runs["plain"]["db_password"], runs["plain"]["threads"]),
                             ("(empty)", "5"))
            self.assertEqual((runs["env file"]["db_password"], runs["env file"]["threads"]),
                             ("(set)", "3"))
            self.assertNotIn("s3cr3t", " ".join(str(r) for r in runs.values()))

class UnitFiles(unittest.TestCase):
    def verify(self, root):
        result = subprocess.run(
            ["systemd-analyze", "verify", f"--root={root}", SOCKET_UNIT.name, SERVICE_UNIT.name,
             EVENTS_UNIT.name],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        return result.returncode, (result.stdout + result.stderr).strip()

    def test_units_pass_systemd_analyze_verify(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            for unit in (SOCKET_UNIT, SERVICE_UNIT, EVENTS_UNIT):  # what is verified ships
                self.assertEqual((root / "lib/systemd/system" / unit.name).read_bytes(),
                                 unit.read_bytes())
            code, output = self.verify(root)
        ours = [line for line in output.splitlines() if "connector" in line]
        self.assertEqual(code, 0, output)
        self.assertEqual(ours, [], output)

    def test_verify_reports_a_broken_unit(self):
        # The check above is not vacuous: the same root with a mistake in the service is caught.
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            service = root / "lib/systemd/system" / SERVICE_UNIT.name
            text = service.read_text().replace("[Service]\n", "[Service]\nRestrat=always\n", 1)
            service.write_text(text)
            (root / INSTALLED_WORKER.lstrip("/")).unlink()
            _, output = self.verify(root)
        self.assertIn("Unknown key 'Restrat' in section [Service]", output)
        self.assertIn(f"Command {INSTALLED_WORKER} is not executable", output)

    def test_service_sandbox_exposure_is_low(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_verify_root(tmp)
            result = subprocess.run(
                ["systemd-analyze", "security", "--offline=true", f"--root={root}",
                 "--no-pager", SERVICE_UNIT.name],
                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        output = result.stdout + result.stderr
        m = re.search(r"Overall exposure level for connector-worker\.service: ([0-9.]+)", output)
        self.assertIsNotNone(m, output)
        # 0 = fully locked down, 10 = unprotected; systemd calls <= 2 "OK". Ours is 1.2 (1.4
        # before IPAddressDeny and ProcSubset); the rest is network access and the host's root
        # directory, which the worker needs. It may not grow back.
        self.assertLessEqual(float(m.group(1)), 1.4, output)

    def test_socket_unit_owns_the_workers_default_socket(self):
        defaults = worker_defaults(EXAMPLE_CONFIG)
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "ListenStream"), defaults["listen"])
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "Backlog"), defaults["listen_backlog"])
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "SocketMode"), defaults["listen_mode"])
        # nginx connects through a group of its own, which the package's postinst creates with
        # nginx's user (www-data on Debian) in it: not www-data, which every other web
        # application on the host shares, nor connector, which reads the config.
        group = unit_value(SOCKET_UNIT, "Socket", "SocketGroup")
        self.assertEqual(group, "connector-fcgi")
        postinst = (REPO / "cmake" / "debian" / "postinst").read_text()
        self.assertIn(f"addgroup --system {group}", postinst)
        self.assertIn(f"adduser www-data {group}", postinst)
        self.assertEqual(unit_value(SOCKET_UNIT, "Socket", "Service"), SERVICE_UNIT.name)
        self.assertEqual(unit_value(SOCKET_UNIT, "Install", "WantedBy"), "sockets.target")

    def test_service_unit_matches_the_worker(self):
        defaults = worker_defaults(EXAMPLE_CONFIG)
        value = lambda key: unit_value(SERVICE_UNIT, "Service", key)  # noqa: E731
        self.assertEqual(value("ExecStart"), f"{INSTALLED_WORKER} --config {INSTALLED_CONFIG}")
        self.assertEqual(unit_values(SERVICE_UNIT, "Service", "ExecReload"), [
            f"{INSTALLED_WORKER} --config {INSTALLED_CONFIG} --check-config",
            "/bin/kill -HUP $MAINPID"])
        self.assertEqual(value("Type"), "notify")
        self.assertEqual(value("NotifyAccess"), "main")
        self.assertEqual(value("KillMode"), "mixed")
        self.assertEqual(value("Restart"), "on-failure")
        self.assertEqual(value("User"), "connector")
        self.assertEqual(value("UMask"), "0077")
        self.assertEqual(value("ProcSubset"), "pid")
        self.assertEqual((value("IPAddressDeny"), value("IPAddressAllow")), ("any", "localhost"))
        self.assertIn(SOCKET_UNIT.name, unit_value(SERVICE_UNIT, "Unit", "Requires").split())
        self.assertIn(SOCKET_UNIT.name, unit_value(SERVICE_UNIT, "Unit", "After").split())
        # systemd waits for the drain (shutdown_timeout_s) before it kills anything.
        self.assertGreater(seconds(value("TimeoutStopSec")), int(defaults["shutdown_timeout_s"]))
        self.assertGreaterEqual(seconds(value("WatchdogSec")), 10)
        # The default access log goes to the journal; nothing else is written.
        self.assertEqual(defaults["access_log"], "stderr")
        self.assertEqual(value("StandardError"), "journal")
        for key, expected in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"),
                              ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                              ("PrivateDevices", "yes"), ("MemoryDenyWriteExecute", "yes"),
                              ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
                              ("CapabilityBoundingSet", ""), ("SystemCallArchitectures", "native")]:
            self.assertEqual(value(key), expected, key)
        self.assertRegex(value("MemoryMax"), r"^\d+[KMG]$")
        self.assertIn("@system-service", unit_values(SERVICE_UNIT, "Service", "SystemCallFilter"))


# --- the worker as systemd runs it -------------------------------------------------------------

SO_TIMESTAMPNS = 35  # also SCM_TIMESTAMPNS (asm-generic/socket.h); not in Python's socket module


class NotifySocket:
    """The receiving end of sd_notify(), as systemd has it: a datagram socket whose messages
    carry the sender's pid (SO_PASSCRED), so NotifyAccess=main can be checked."""

    def __init__(self, path):
        self.path = Path(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        # The kernel's arrival time of each message, so intervals do not depend on when this
        # test got round to reading them.
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind(str(self.path))
        self.messages = []  # (arrival, unix seconds; sender pid; {field: value})

    def close(self):
        self.sock.close()
        self.path.unlink(missing_ok=True)

    def _receive(self, timeout):
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data, ancdata, _, _ = self.sock.recvmsg(
                4096, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(16))
        except socket.timeout:
            return None
        pid, arrival = None, time.time()
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", payload[:12])[0]
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:  # SCM_TIMESTAMPNS
                seconds, nanoseconds = struct.unpack("2q", payload[:16])
                arrival = seconds + nanoseconds / 1e9
        fields = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
        message = (arrival, pid, fields)
        self.messages.append(message)
        return message

    def wait_for(self, field, value="1", timeout=30, since=0):
        """The first message at or after index `since` with field=value; waits for it."""
        deadline = time.monotonic() + timeout
        index = since
        while True:
            while index < len(self.messages):
                if self.messages[index][2].get(field) == value:
                    return index, self.messages[index]
                index += 1
            if self._receive(deadline - time.monotonic()) is None:
                raise AssertionError(f"no {field}={value} within {timeout} s; got "
                                     f"{[m[2] for m in self.messages]}")

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._receive(deadline - time.monotonic())


def sanitizer_env():
    return {k: v for k, v in os.environ.items()
            if k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")}


def listening_unix_sockets(path):
    """Inodes of the listening sockets bound to `path`, from /proc/net/unix (a socket that was
    unlinked and replaced still shows its path there)."""
    inodes = []
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        # Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = listening
        if len(fields) >= 8 and fields[7] == str(path) and int(fields[3], 16) & 0x10000:
            inodes.append(int(fields[6]))
    return inodes


def socket_inode_of_fd(pid, fd):
    m = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
    return int(m.group(1)) if m else None


def children_of(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def proc_status(pid):
    return dict(line.split(":\t", 1) for line in
                Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)


class WorkerRun:
    """One worker process of a test, its log, and stopping it (SIGTERM; the master drains)."""

    def __init__(self, proc, log_path):
        self.proc = proc
        self.log_path = log_path

    def log(self):
        return self.log_path.read_text(errors="replace")

    def stop(self, testcase, timeout=40):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            testcase.fail(f"worker did not exit {timeout} s after SIGTERM:\n{self.log()[-4000:]}")
        log = self.log()
        testcase.assertEqual(code, 0, log[-4000:])
        for marker in SANITIZER_MARKERS:
            testcase.assertNotIn(marker, log)
        return log

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class HeldSocket:
    """What systemd does for connector-worker.socket: the listening socket belongs to this
    process, outlives every worker, and is passed to each as fd 3 with LISTEN_FDS=1,
    LISTEN_PID=<the worker's pid> and LISTEN_FDNAMES."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.unlink(missing_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))
        os.chmod(self.path, 0o666)
        self.sock.listen(1024)

    def close(self):
        self.sock.close()
        self.path.unlink(missing_ok=True)

    def spawn(self, args, env, log_path, sandbox=None):
        """Starts `args` with the socket as fd 3. sandbox: loaded in the child before exec
        (a preexec_fn: only where no other thread of this process runs)."""
        # A copy above the low fds for bash to move to 3 (and close) before exec.
        passed = fcntl.fcntl(self.sock.fileno(), fcntl.F_DUPFD_CLOEXEC, 10)
        env = dict(env, LISTEN_FDS="1", LISTEN_FDNAMES=FDNAME)
        log = open(log_path, "ab")
        try:
            # bash sets LISTEN_PID to its own pid, which exec hands on to the worker.
            proc = subprocess.Popen(
                ["/bin/bash", "-c",
                 'fd=$1; shift; exec 3<&"$fd" {fd}<&-; LISTEN_PID=$$; export LISTEN_PID; '
                 'exec "$@"', "activator", str(passed), *[str(a) for a in args]],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(passed,),
                preexec_fn=sandbox.apply if sandbox is not None else None)
        finally:
            log.close()
            os.close(passed)
        return WorkerRun(proc, log_path)


class Load:
    """Threads sending GET /v1/networks through nginx back to back; records every answer."""

    def __init__(self, threads=3):
        self.results = []  # (start, end, status or exception text)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self):
        while not self.stopping.is_set():
            start = time.monotonic()
            try:
                r = stack.get("/v1/networks")
                outcome = r.status if r.json() == NETWORKS else f"{r.status} {r.body[:200]!r}"
            except Exception as e:  # noqa: BLE001 - every failure counts
                outcome = repr(e)
            with self.lock:
                self.results.append((start, time.monotonic(), outcome))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=60)
        return False

    def failures(self):
        return [r for r in self.results if r[2] != 200]


class Sandbox:
    """The seccomp part of the service unit's sandbox, built from the unit file the way systemd
    252 builds it: an allow list (SystemCallFilter= lines, `~` removing groups) whose other
    syscalls fail with SystemCallErrorNumber=; a second filter for MemoryDenyWriteExecute=
    (no W+X mmap, no PROT_EXEC mprotect, no SHM_EXEC) and RestrictAddressFamilies=
    (EAFNOSUPPORT); NoNewPrivileges. The BPF is compiled here with libseccomp (systemd's own
    dependency); the child only loads it."""

    SCMP_ACT_ALLOW = 0x7FFF0000
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    CMP_EQ, CMP_GT, CMP_MASKED_EQ = 4, 6, 7
    AF_MAX = 46  # Linux 6.x

    class ArgCmp(ctypes.Structure):
        _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                    ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    def __init__(self, unit):
        import errno
        self.lib = ctypes.CDLL("libseccomp.so.2")
        self.lib.seccomp_init.restype = ctypes.c_void_p
        self.lib.seccomp_init.argtypes = [ctypes.c_uint32]
        self.lib.seccomp_rule_add_array.argtypes = [
            ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
        self.lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        self.lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.lib.seccomp_release.argtypes = [ctypes.c_void_p]
        self.libc = ctypes.CDLL(None, use_errno=True)

        service = lambda key: unit_values(unit, "Service", key)  # noqa: E731
        error_name = (service("SystemCallErrorNumber") or ["EPERM"])[-1]
        deny = 0x00050000 | getattr(errno, error_name)
        allowed = set()
        for entry in service("SystemCallFilter"):
            remove = entry.startswith("~")
            names = set()
            for group in entry.lstrip("~").split():
                names |= expand_syscall_group(group)
            allowed = allowed - names if remove else allowed | names
        self.allowed = allowed
        self.programs = [self._compile(deny, [(name, []) for name in sorted(allowed)])]

        rules = []
        if service("MemoryDenyWriteExecute") == ["yes"]:
            prot_exec, prot_write, shm_exec = 0x4, 0x2, 0o100000
            eperm = 0x00050000 | errno.EPERM
            wx = prot_exec | prot_write
            rules += [(eperm, "mmap", [(2, self.CMP_MASKED_EQ, wx, wx)]),
                      (eperm, "mprotect", [(2, self.CMP_MASKED_EQ, prot_exec, prot_exec)]),
                      (eperm, "pkey_mprotect", [(2, self.CMP_MASKED_EQ, prot_exec, prot_exec)]),
                      (eperm, "shmat", [(2, self.CMP_MASKED_EQ, shm_exec, shm_exec)])]
        families = service("RestrictAddressFamilies")
        if families:
            keep = {getattr(socket, name) for name in families[-1].split()}
            no_family = 0x00050000 | errno.EAFNOSUPPORT
            rules += [(no_family, "socket", [(0, self.CMP_EQ, f, 0)])
                      for f in range(self.AF_MAX) if f not in keep]
            rules.append((no_family, "socket", [(0, self.CMP_GT, self.AF_MAX - 1, 0)]))
        if rules:
            self.programs.append(self._compile_rules(self.SCMP_ACT_ALLOW, rules))

    def _compile(self, default, allow):
        return self._compile_rules(default, [(self.SCMP_ACT_ALLOW, name, args)
                                             for name, args in allow])

    def _compile_rules(self, default, rules):
        ctx = self.lib.seccomp_init(default)
        if not ctx:
            raise RuntimeError("seccomp_init failed")
        try:
            for action, name, args in rules:
                number = self.lib.seccomp_syscall_resolve_name(name.encode())
                if number < 0:  # not a syscall of this architecture
                    continue
                array = (self.ArgCmp * max(len(args), 1))(*[self.ArgCmp(*a) for a in args])
                rc = self.lib.seccomp_rule_add_array(ctx, action, number, len(args), array)
                if rc != 0:
                    raise RuntimeError(f"seccomp_rule_add {name}: {rc}")
            with tempfile.TemporaryFile() as out:
                if self.lib.seccomp_export_bpf(ctx, out.fileno()) != 0:
                    raise RuntimeError("seccomp_export_bpf failed")
                out.seek(0)
                code = out.read()
        finally:
            self.lib.seccomp_release(ctx)
        buffer = ctypes.create_string_buffer(code, len(code))
        program = self.SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        return buffer, program

    def apply(self):
        """In the child: no new privileges (NoNewPrivileges=yes; seccomp needs it anyway), then
        every filter."""
        if self.libc.prctl(self.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(120)
        for _, program in self.programs:
            if self.libc.prctl(self.PR_SET_SECCOMP, self.SECCOMP_MODE_FILTER,
                               ctypes.byref(program), 0, 0) != 0:
                os._exit(121)


_groups = {}


def expand_syscall_group(name):
    """The syscalls of a systemd group (@name, recursively) or a single syscall name."""
    if not name.startswith("@"):
        return {name}
    if name not in _groups:
        result = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager", name],
                                capture_output=True, text=True, timeout=30, check=True)
        members = set()
        for line in result.stdout.splitlines()[1:]:
            line = line.strip()
            if line and not line.startswith("#"):
                members |= expand_syscall_group(line)
        _groups[name] = members
    return _groups[name]


class WorkerUnderSystemd(unittest.TestCase):
    def setUp(self):
        self.runs = []
        self.cleanups = []
        stack.fcgi_socket.unlink(missing_ok=True)

    def tearDown(self):
        for run in self.runs:
            run.kill()
        for cleanup in reversed(self.cleanups):
            cleanup()
        stack.fcgi_socket.unlink(missing_ok=True)

    def notify_socket(self, name):
        notify = NotifySocket(stack.dir / name)
        self.cleanups.append(notify.close)
        return notify

    def get_networks(self):
        r = stack.get("/v1/networks")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json(), NETWORKS)
        # Through to the worker, not from nginx's cache.
        self.assertNotIn(r.headers.get("X-Cache-Status"), ("HIT", "STALE", "UPDATING"))
        return r

    def activate(self, name, extra_env=None):
        """The worker under systemd-socket-activate, which creates and listens on the socket
        itself and execs the worker (same pid) at the first connection."""
        log_path = stack.dir / f"{name}.log"
        env = dict(sanitizer_env(), **(extra_env or {}))
        args = ["systemd-socket-activate", "-l", str(stack.fcgi_socket), f"--fdname={FDNAME}",
                *[f"--setenv={k}={v}" for k, v in env.items()],
                str(WORKER), "--config", str(stack.config_path)]
        log = open(log_path, "ab")
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        finally:
            log.close()
        run = WorkerRun(proc, log_path)
        self.runs.append(run)
        deadline = time.monotonic() + 10
        while "Listening on" not in run.log():
            self.assertIsNone(proc.poll(), run.log())
            self.assertLess(time.monotonic(), deadline, run.log())
            time.sleep(0.02)
        return run

    def test_socket_activated_worker_answers_through_nginx(self):
        run = self.activate("activated")
        # The activator created the socket and waits; no worker runs yet.
        created = os.stat(stack.fcgi_socket)
        self.assertTrue(stat.S_ISSOCK(created.st_mode))
        self.assertEqual(listening_unix_sockets(stack.fcgi_socket),
                         [socket_inode_of_fd(run.proc.pid, 3)])
        self.assertNotIn("starting:", run.log())

        # The first request reaches the socket before any worker exists: it waits in the
        # accept queue, the activator execs the worker, and the worker answers it.
        first = self.get_networks()
        self.assertEqual(first.json(), NETWORKS)
        for _ in range(5):
            self.get_networks()

        log = run.log()
        self.assertIn(INHERITED_LOG_LINE, log)
        self.assertNotIn(f"listening on {stack.fcgi_socket}", log)
        # Same file, and one listening socket on that path: the one the activator made, which
        # the worker (the activator's pid after exec) and its children serve. Had the worker
        # unlinked and recreated the path, /proc/net/unix would list a second listener.
        now = os.stat(stack.fcgi_socket)
        self.assertEqual((now.st_ino, now.st_dev), (created.st_ino, created.st_dev))
        inodes = listening_unix_sockets(stack.fcgi_socket)
        self.assertEqual(len(inodes), 1, inodes)
        self.assertEqual(socket_inode_of_fd(run.proc.pid, 3), inodes[0])
        children = children_of(run.proc.pid)
        self.assertTrue(children, "the master has no worker processes")
        for child in children:
            fds = {socket_inode_of_fd(child, int(fd)) for fd in os.listdir(f"/proc/{child}/fd")
                   if os.readlink(f"/proc/{child}/fd/{fd}").startswith("socket:")}
            self.assertIn(inodes[0], fds, f"worker process {child} does not hold the socket")
        run.stop(self)

    def test_notify_protocol_from_the_main_pid(self):
        notify = self.notify_socket("notify.sock")
        run = self.activate("notify", {"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        self.get_networks()  # starts it
        pid = run.proc.pid
        ready, _ = notify.wait_for("READY")
        # WATCHDOG_USEC=1 s: pings every 0.5 s.
        first_ping, _ = notify.wait_for("WATCHDOG", since=ready + 1, timeout=5)
        second_ping, _ = notify.wait_for("WATCHDOG", since=first_ping + 1, timeout=5)
        third_ping, _ = notify.wait_for("WATCHDOG", since=second_ping + 1, timeout=5)
        interval = notify.messages[third_ping][0] - notify.messages[second_ping][0]
        self.assertLess(interval, 0.9)

        mark = len(notify.messages)
        run.proc.send_signal(signal.SIGHUP)
        reloading, _ = notify.wait_for("RELOADING", since=mark)
        notify.wait_for("READY", since=reloading + 1)
        self.get_networks()

        mark = len(notify.messages)
        run.proc.send_signal(signal.SIGTERM)
        notify.wait_for("STOPPING", since=mark)
        run.stop(self)
        notify.drain(0.2)
        senders = {m[1] for m in notify.messages}
        self.assertEqual(senders, {pid}, "NotifyAccess=main: only the master may notify; got "
                                         f"{[(m[1], m[2]) for m in notify.messages]}")

    def test_the_watchdog_is_fed_only_while_every_process_beats(self):
        """A worker process made to hang (SIGSTOP) stops beating; past the heartbeat limit
        (2 x fcgi_read_timeout_ms + request_timeout_ms + 3 s: 4.5 s here) the master stops
        feeding the watchdog, so systemd would restart the service; once it beats again, the
        pings resume."""
        notify = self.notify_socket("watchdog.sock")
        run = self.activate("watchdog", {
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000",
            "CONNECTOR_FCGI_READ_TIMEOUT_MS": "500", "CONNECTOR_REQUEST_TIMEOUT_MS": "500"})
        self.get_networks()  # starts it
        ready, _ = notify.wait_for("READY")
        notify.wait_for("WATCHDOG", since=ready + 1, timeout=5)
        stuck = children_of(run.proc.pid)[0]
        os.kill(stuck, signal.SIGSTOP)
        try:
            withheld = f"worker process {stuck} shows no progress for over 4500 ms"
            deadline = time.monotonic() + 60
            while withheld not in run.log():
                self.assertLess(time.monotonic(), deadline, run.log()[-3000:])
                notify.drain(0.1)
            notify.drain(0.5)  # pings sent before the line was written
            mark = len(notify.messages)
            notify.drain(2.5)  # five ping intervals
            self.assertEqual([m[2] for m in notify.messages[mark:] if "WATCHDOG" in m[2]], [])
        finally:
            os.kill(stuck, signal.SIGCONT)
        notify.wait_for("WATCHDOG", since=mark, timeout=30)
        self.assertIn("every worker process beats again; feeding the watchdog", run.log())
        run.stop(self)

    def test_restart_under_a_held_socket_drops_no_request(self):
        held = HeldSocket(stack.fcgi_socket)
        self.cleanups.append(held.close)
        notify = self.notify_socket("notify.sock")
        env = clean_env(dict(sanitizer_env(), NOTIFY_SOCKET=str(notify.path)))
        args = [WORKER, "--config", stack.config_path]

        first = held.spawn(args, env, stack.dir / "held-1.log")
        self.runs.append(first)
        mark, _ = notify.wait_for("READY")
        self.get_networks()
        with Load() as load:
            time.sleep(1.0)
            first.stop(self)
            gone = time.monotonic()
            time.sleep(0.5)  # no worker at all: requests wait in the accept queue
            second = held.spawn(args, env, stack.dir / "held-2.log")
            self.runs.append(second)
            notify.wait_for("READY", since=mark + 1)
            back = time.monotonic()
            time.sleep(1.0)
        second.stop(self)

        self.assertEqual(load.failures(), [])
        self.assertGreater(len(load.results), 20)
        # Requests sent before the first worker was gone and answered after the second was
        # ready: they waited in the socket's queue while no worker ran at all.
        waited = [r for r in load.results if r[0] < gone and r[1] > back]
        self.assertTrue(waited, "no request waited for the second worker")
        self.assertIn(INHERITED_LOG_LINE, first.log())
        self.assertIn(INHERITED_LOG_LINE, second.log())

    def test_worker_serves_reloads_and_drains_inside_the_units_sandbox(self):
        sandbox = Sandbox(SERVICE_UNIT)
        self.assertIn("clone3", sandbox.allowed)
        self.assertNotIn("ptrace", sandbox.allowed)
        held = HeldSocket(stack.fcgi_socket)
        self.cleanups.append(held.close)
        notify = self.notify_socket("notify.sock")
        extra = dict(sanitizer_env(), NOTIFY_SOCKET=str(notify.path))
        if sanitized_build():
            # LeakSanitizer inspects the process with ptrace, which the filter denies (as it
            # would under systemd); AddressSanitizer and UBSan still check everything else.
            extra["ASAN_OPTIONS"] = extra.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        run = held.spawn([WORKER, "--config", stack.config_path], clean_env(extra),
                         stack.dir / "sandbox.log", sandbox=sandbox)
        self.runs.append(run)
        ready, _ = notify.wait_for("READY")
        for pid in [run.proc.pid, *children_of(run.proc.pid)]:
            status = proc_status(pid)
            self.assertEqual(status["NoNewPrivs"].strip(), "1")
            self.assertEqual(status["Seccomp"].strip(), "2")  # filter mode
            self.assertEqual(status["Seccomp_filters"].strip(), str(len(sandbox.programs)))
        for _ in range(10):
            self.get_networks()
        before = set(children_of(run.proc.pid))
        run.proc.send_signal(signal.SIGHUP)  # new worker processes are forked in the sandbox
        reloading, _ = notify.wait_for("RELOADING", since=ready + 1)
        notify.wait_for("READY", since=reloading + 1)
        deadline = time.monotonic() + 20
        while set(children_of(run.proc.pid)) & before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(set(children_of(run.proc.pid)) & before, "old worker processes stayed")
        self.assertTrue(children_of(run.proc.pid), "no new worker processes")
        for _ in range(10):
            self.get_networks()
        log = run.stop(self)
        self.assertNotIn("Operation not permitted", log)
        self.assertNotIn("Address family not supported", log)


if __name__ == "__main__":
    unittest.main()
