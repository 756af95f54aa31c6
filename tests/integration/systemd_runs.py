"""The worker run the way systemd runs it, for test_systemd: systemd's notify socket, a worker
under systemd-socket-activate or on a socket held open by the test, a load through nginx, and the
service unit's seccomp sandbox built from its unit file. Python 3 standard library only."""

import ctypes
import fcntl
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from harness import SANITIZER_MARKERS
from systemd_units import FDNAME, NETWORKS, unit_values

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

    def __init__(self, stack, threads=3):
        self.stack = stack
        self.results = []  # (start, end, status or exception text)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self):
        while not self.stopping.is_set():
            start = time.monotonic()
            try:
                r = self.stack.get("/v1/networks")
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


