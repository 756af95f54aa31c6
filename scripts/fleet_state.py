"""The state folder of a fleet of scripts/fleet (docs/operations-fleet.md, section 9), shared by
scripts/fleet and scripts/fleet-node: where each part keeps its files, the fleet's settings
(fleet.json) and state.json, which says what runs now. Also how both run the other scripts
(run, run_side_by_side) and stop on Ctrl-C (stop_on_signals). Standard library only.

The folder (.fleet/ by default):
  .connector-fleet   the mark of a fleet's folder: any other non-empty folder is refused
  fleet.json         the settings scripts/fleet wrote (port, build, primary, the nodes' nginx
                     and worker settings, passwords: mode 600)
  fleet.pid          the pid of the scripts/fleet that runs the fleet in the foreground
  state.json         where everything is and the pids running now (write_state)
  admin.conf, sample.json  the sample data and its import (as the full account: mode 600)
  primary/           the primary MariaDB (scripts/mariadb-start)
  front/             the front nginx (conf.d/connector-balancer.conf: its upstream)
  nodeK/             node K: connector.conf, worker.pid, worker.log, fcgi.sock, nginx/ (and its
                     events nginx, nginx/events/), replica/
  start-PART, stop-PART  a script per part of the fleet (fleet_parts.write_part_scripts)
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
MARK = ".connector-fleet"
MAX_NODES = 9


def node_address(k):
    """Node k's own loopback address."""
    return f"127.0.0.{10 + k}"


def log(message):
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr, flush=True)


def running_pid(pid_file, program):
    """The pid in pid_file if that process runs `program` (its command line's first word),
    else None: never another program that reused the pid, nor a zombie."""
    try:
        pid = int(Path(pid_file).read_text().strip())
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except (OSError, ValueError):
        return None
    # nginx's master names itself "nginx: master process nginx ...".
    return pid if command.split(":")[0].rsplit("/", 1)[-1] == program else None


# --- running the other scripts ---------------------------------------------------------------

def _start_time(pid):
    """When the process started, in clock ticks since boot (/proc/PID/stat's 22nd field; the
    command name before it is in parentheses and may hold spaces)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2:].split()[19]


class Interrupted(Exception):
    """SIGINT or SIGTERM reached a program that called stop_on_signals()."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_signals = {"pending": None, "in_child": False}


def _on_signal(signum, _frame):
    _signals["pending"] = signum
    if not _signals["in_child"]:
        raise Interrupted(signum)


def stop_on_signals():
    """From now on SIGINT and SIGTERM raise Interrupted: at once, or once the command that run()
    runs has finished (as a bash trap waits for the foreground command), so that no server is
    left half started."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


@contextlib.contextmanager
def signals_deferred():
    """SIGINT and SIGTERM wait until the block has run (a process started and its pid file
    written, say), then act as they would have."""
    arrived = []
    previous = {signum: signal.signal(signum, lambda signum, _frame: arrived.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in arrived[:1]:
            signal.raise_signal(signum)


def shield_from_signals():
    """From now on SIGINT and SIGTERM do nothing here, so that a stop under way finishes (the
    commands that run() starts still get them: a handler is not inherited)."""
    signal.signal(signal.SIGINT, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: None)
    _signals["pending"] = None


def run(args, env=None, check=True, quiet=False, stdout=None):
    """Runs a command (a script of scripts/, nginx, ...) to its end; its output goes to ours
    (nowhere when quiet; its standard output to stdout when given). A failure ends this
    program with the command's status, as `set -e` would, unless check is False; returns the
    status."""
    return run_side_by_side([args], env, check, quiet, stdout)[0]


def run_side_by_side(commands, env=None, check=True, quiet=False, stdout=None,
                     new_session=False):
    """run() for several commands at once, each to its end; a failure ends this program with
    the first failed command's status. new_session: out of reach of the terminal's Ctrl-C."""
    _signals["in_child"] = True
    try:
        quiet_output = subprocess.DEVNULL if quiet else None
        children = [subprocess.Popen([str(a) for a in args], env=env, stdin=subprocess.DEVNULL,
                                     stdout=stdout or quiet_output, stderr=quiet_output,
                                     start_new_session=new_session) for args in commands]
        statuses = [child.wait() for child in children]
    finally:
        _signals["in_child"] = False
    if _signals["pending"] is not None:
        raise Interrupted(_signals["pending"])
    failed = [status for status in statuses if status != 0]
    if check and failed:
        sys.exit(failed[0])
    return statuses


# --- the folder --------------------------------------------------------------------------------

class FleetDir:
    """A fleet's state folder."""

    def __init__(self, path):
        self.path = Path(path).resolve()
        self.primary = self.path / "primary"
        self.front = self.path / "front"
        self.settings_file = self.path / "fleet.json"
        self.state_file = self.path / "state.json"
        self.pid_file = self.path / "fleet.pid"
        self._settings = None

    @classmethod
    def existing(cls, path):
        """The fleet in path, or the end of this program when path is not a fleet's folder."""
        fleet = cls(path)
        if not (fleet.path / MARK).is_file():
            log(f"{fleet.path} is not a fleet's folder")
            sys.exit(2)
        return fleet

    def node_dir(self, k):
        return self.path / f"node{k}"

    def nodes(self):
        """The numbers of the nodes whose folder exists (made by scripts/fleet-node add)."""
        return [k for k in range(1, MAX_NODES + 1)
                if (self.node_dir(k) / "connector.conf").exists()]

    def settings(self):
        """fleet.json: what scripts/fleet wrote (write_settings)."""
        if self._settings is None:
            self._settings = json.loads(self.settings_file.read_text())
        return self._settings

    def write_settings(self, values):
        self.settings_file.unlink(missing_ok=True)
        fd = os.open(self.settings_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(values, f, indent=2)
            f.write("\n")
        self._settings = dict(values)

    def write_runner_pid(self):
        """fleet.pid: this process, with its start time, so that a pid reused by another
        process (another fleet's, say) is never taken for this fleet's."""
        pid = os.getpid()
        self.pid_file.write_text(f"{pid} {_start_time(pid)}\n")

    def runner_pid(self):
        """The pid of the scripts/fleet that runs this fleet in the foreground, if it runs."""
        try:
            pid, started = self.pid_file.read_text().split()
            return int(pid) if _start_time(int(pid)) == started else None
        except (OSError, ValueError):
            return None

    def write_state(self, create=False):
        """Writes state.json from what runs now. Without create, only once scripts/fleet has
        written it (when every part answered): so it never names a fleet still starting."""
        if not create and not self.state_file.exists():
            return
        doc = self.state()
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".state.json.")
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=2)
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.state_file)

    def state(self):
        """state.json's content: the pids are those running now, None for a part stopped."""
        conf = self.settings()
        port, primary_port = conf["port"], conf["primary_port"]
        primary = Path(conf["primary_dir"])
        return {
            "front": f"http://127.0.0.1:{port}",
            "front_dir": str(self.front),
            "front_pid": running_pid(self.front / "nginx.pid", "nginx"),
            "primary": {"socket": f"{primary}/mysqld.sock",
                        "pid": running_pid(primary / "mysqld.pid", "mariadbd"),
                        "port": primary_port},
            "nodes": [self.node_state(k) for k in self.nodes()],
        }

    def node_state(self, k):
        d = self.node_dir(k)
        port, primary_port = self.settings()["port"], self.settings()["primary_port"]
        return {
            "name": f"node{k}", "url": f"http://{node_address(k)}:{port}",
            "address": node_address(k), "dir": str(d),
            "worker_pid": running_pid(d / "worker.pid", "connector-worker"),
            "nginx_pid": running_pid(d / "nginx" / "nginx.pid", "nginx"),
            "events_pid": running_pid(d / "nginx" / "events" / "nginx.pid", "nginx"),
            "fcgi_socket": f"{d}/fcgi.sock", "config": f"{d}/connector.conf",
            "replica_socket": f"{d}/replica/mysqld.sock",
            "replica_pid": running_pid(d / "replica" / "mysqld.pid", "mariadbd"),
            "replica_port": primary_port + k,
        }
