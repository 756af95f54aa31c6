"""The parts of a fleet of scripts/fleet, each started and stopped on its own: the primary
MariaDB and the front nginx (scripts/fleet start-PART|stop-PART), and per node its worker, nginx,
events nginx and replica (scripts/fleet-node start-PART|stop-PART), each also a script of that
name in the fleet's folder or the node's (write_part_scripts); a node made and added to a
running fleet, or removed from it. Standard library only."""

import http.client
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from fleet_state import REPO, SCRIPTS, log, node_address, run, running_pid, signals_deferred

FLEET_PARTS = ("primary", "front")
NODE_PARTS = ("worker", "nginx", "events", "replica")
BALANCER_EXAMPLE = REPO / "nginx" / "connector-balancer.conf.example"
# The example's upstream lines: "    server 10.0.0.11:80 max_fails=1 fail_timeout=5s;".
EXAMPLE_SERVERS = re.compile(r"(    server 10\.0\.0\.\d+:80 ([^\n]*)\n)+")
UPSTREAM = "upstream connector_nodes {\n"


def wait_until(condition, seconds, step=0.1):
    """Whether condition() became true within seconds (tried every step)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def tail(path, lines=20):
    """The last lines of a log, to stderr (what a part that did not start said)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    sys.stderr.write("".join(text.splitlines(keepends=True)[-lines:]))


def write_part_scripts(folder, program, args, parts, what):
    """start-PART and stop-PART in folder for each part, each running `program start-PART
    ARGS...` (scripts/fleet or scripts/fleet-node)."""
    for part in parts:
        for verb in ("start", "stop"):
            command = shlex.join([str(SCRIPTS / program), f"{verb}-{part}", *map(str, args)])
            script = folder / f"{verb}-{part}"
            script.write_text(f"#!/bin/sh\n# {what}: {verb}-{part} (written by scripts/"
                              f"{program}).\nexec {command}\n")
            script.chmod(0o755)


# --- the primary -------------------------------------------------------------------------------

def start_primary(fleet):
    """The primary again, as scripts/fleet first started it (its options are kept in its
    folder's mariadb-start.conf), with the fleet's password for the full account."""
    env = {**os.environ, "CONNECTOR_DB_PASSWORD": fleet.settings()["admin_password"]}
    run([SCRIPTS / "mariadb-start", fleet.settings()["primary_dir"]], env=env)


def stop_primary(fleet):
    run([SCRIPTS / "mariadb-stop", fleet.settings()["primary_dir"]])


# --- the front -----------------------------------------------------------------------------------

class Front:
    """The front nginx: nginx/connector-balancer.conf.example with the fleet's nodes in its
    upstream, in a folder of its own."""

    def __init__(self, fleet):
        self.fleet = fleet
        self.dir = fleet.front
        self.conf = self.dir / "conf.d" / "connector-balancer.conf"
        self.nginx_conf = self.dir / "nginx.conf"
        self.port = fleet.settings()["port"]

    def server_line(self, k):
        """Node k's line in the upstream: the example's options (max_fails, fail_timeout) with
        the node's address."""
        options = EXAMPLE_SERVERS.search(BALANCER_EXAMPLE.read_text()).group(2)
        return f"    server {node_address(k)}:{self.port} {options}\n"

    def create(self, nodes):
        """Renders the example with these nodes, and nginx.conf around it."""
        (self.dir / "conf.d").mkdir(parents=True, exist_ok=True)
        (self.dir / "tmp").mkdir(exist_ok=True)
        text = BALANCER_EXAMPLE.read_text()
        servers = "".join(self.server_line(k) for k in nodes)
        text, count = EXAMPLE_SERVERS.subn(lambda _: servers, text)
        assert count == 1, "the example's upstream servers were not found"
        for old, new in ((" listen 80;", f" listen 127.0.0.1:{self.port} default_server;"),
                         (" /var/log/nginx/connector-balancer.log ", f" {self.dir}/access.log ")):
            assert old in text, f"{old!r} not found in the example"
            text = text.replace(old, new)
        self.conf.write_text(text)
        temp = "".join(f"    {kind}_temp_path {self.dir}/tmp/{kind};\n"
                       for kind in ("client_body", "proxy", "fastcgi", "scgi", "uwsgi"))
        self.nginx_conf.write_text(
            "# Written by scripts/fleet: the front, around conf.d/connector-balancer.conf.\n"
            f"{'user root;' if os.getuid() == 0 else ''}\n"
            "worker_processes 2;\n"
            f"pid {self.dir}/nginx.pid;\n"
            f"error_log {self.dir}/error.log warn;\n"
            "events { worker_connections 1024; }\n"
            f"http {{\n{temp}    include conf.d/connector-balancer.conf;\n}}\n")

    def listed(self):
        """The upstream's server lines."""
        return [line for line in self.conf.read_text().splitlines(keepends=True)
                if line.startswith("    server ")]

    def lists(self, k):
        prefix = f"    server {node_address(k)}:{self.port} "
        return any(line.startswith(prefix) for line in self.listed())

    def add(self, k):
        text = self.conf.read_text()
        assert UPSTREAM in text, f"no {UPSTREAM!r} in {self.conf}"
        self.conf.write_text(text.replace(UPSTREAM, UPSTREAM + self.server_line(k), 1))

    def remove(self, k):
        prefix = f"    server {node_address(k)}:{self.port} "
        lines = self.conf.read_text().splitlines(keepends=True)
        self.conf.write_text("".join(line for line in lines if not line.startswith(prefix)))

    def pid(self):
        return running_pid(self.dir / "nginx.pid", "nginx")

    def start(self):
        """nginx -t, then the front, then waits (10 s at most) until it answers /v1/networks."""
        if not self.nginx_conf.exists():
            log(f"no front in {self.fleet.path} (scripts/fleet makes it)")
            sys.exit(1)
        if self.pid():
            log(f"the front runs already (pid {self.pid()}); stop-front first")
            sys.exit(1)
        run(["nginx", "-t", "-q", "-p", self.dir, "-c", self.nginx_conf])
        run(["nginx", "-p", self.dir, "-c", self.nginx_conf])
        if not wait_until(self.answers, 10):
            log(f"the front does not answer on http://127.0.0.1:{self.port}:")
            tail(self.dir / "error.log")
            sys.exit(1)

    def answers(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
        try:
            connection.request("GET", "/v1/networks")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def stop(self):
        run([SCRIPTS / "nginx-stop", self.dir])

    def reload(self, wait_s):
        """Reloads the front with its edited config (nginx -t first), then waits (wait_s at
        most) until the worker processes of the old config have finished. A front that is
        stopped takes the config at its next start."""
        master = self.pid()
        if master is None:
            return
        old = subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                             text=True).stdout.split()
        run(["nginx", "-t", "-q", "-p", self.dir, "-c", self.nginx_conf])
        run(["nginx", "-s", "reload", "-p", self.dir, "-c", self.nginx_conf])
        wait_until(lambda: not any(alive(int(pid)) for pid in old), wait_s)


# --- the nodes -------------------------------------------------------------------------------------

class Node:
    """Node k: its own address, worker pool, nginx (with its events nginx) and replica."""

    def __init__(self, fleet, k):
        self.fleet, self.k = fleet, k
        self.dir = fleet.node_dir(k)
        self.address = node_address(k)
        self.config = self.dir / "connector.conf"
        self.worker_pid = self.dir / "worker.pid"
        self.socket = self.dir / "fcgi.sock"

    def start_worker(self):
        """The worker pool in a session of its own; waits (30 s at most) for its socket."""
        pid = running_pid(self.worker_pid, "connector-worker")
        if pid:
            log(f"node {self.k}'s worker runs already (pid {pid}); stop-worker first")
            sys.exit(1)
        self.socket.unlink(missing_ok=True)
        # The environment would override the file's passwords (docs/operations.md, configuration).
        env = {name: value for name, value in os.environ.items()
               if name not in ("CONNECTOR_DB_PASSWORD", "CONNECTOR_DB_WRITE_PASSWORD")}
        # In a session of its own, a Ctrl-C never reaches it: its pid file must exist before one
        # can end this script, or nothing could stop it.
        with signals_deferred(), open(self.dir / "worker.log", "ab") as output:
            worker = subprocess.Popen(
                [f"{self.fleet.settings()['build']}/fcgi/connector-worker", "--config",
                 str(self.config)], stdin=subprocess.DEVNULL, stdout=output,
                stderr=subprocess.STDOUT, env=env, start_new_session=True)
            self.worker_pid.write_text(f"{worker.pid}\n")
        wait_until(lambda: self.socket.is_socket() or worker.poll() is not None, 30)
        if not self.socket.is_socket():
            log(f"node {self.k}'s worker did not start:")
            tail(self.dir / "worker.log")
            sys.exit(1)

    def stop_worker(self):
        """SIGTERM; up to 60 s for the workers to drain their requests and exit, then SIGKILL."""
        run([SCRIPTS / "worker-stop", self.worker_pid, f"connector-worker --config {self.dir}/",
             60])

    def start_nginx(self):
        """nginx with the production drop-ins (cache and limits as the fleet says, the client's
        address from the front: realip), and its events nginx unless that one runs."""
        settings = self.fleet.settings()
        env = {**os.environ, "NGINX_CONNECTOR_ADDRESS": self.address,
               "NGINX_CONNECTOR_CACHE": settings["cache"], "NGINX_CONNECTOR_RATE": settings["rate"],
               "NGINX_CONNECTOR_EVENTS_POLL_S": settings["poll_s"],
               "NGINX_CONNECTOR_REAL_IP": "on", "NGINX_CONNECTOR_EVENTS": "on"}
        run([SCRIPTS / "nginx-start", self.dir / "nginx", settings["port"], self.socket], env=env)

    def stop_nginx(self):
        """nginx -s quit (what is in flight finishes), its events nginx first (scripts/nginx-stop)."""
        run([SCRIPTS / "nginx-stop", self.dir / "nginx"])

    def start_events(self):
        run([SCRIPTS / "events-start", self.dir / "nginx" / "events"])

    def stop_events(self):
        run([SCRIPTS / "nginx-stop", self.dir / "nginx" / "events"])

    def start_replica(self):
        run([SCRIPTS / "mariadb-start", self.dir / "replica"])

    def stop_replica(self):
        run([SCRIPTS / "mariadb-stop", self.dir / "replica"])

    def stop(self):
        """nginx, then the workers, then the replica."""
        self.stop_nginx()
        self.stop_worker()
        self.stop_replica()

    def add(self):
        """Makes the node as scripts/fleet does, starts it and, when the front exists, puts the
        node in its upstream and reloads it."""
        if self.dir.exists():
            log(f"{self.dir} exists: remove node {self.k} first")
            sys.exit(1)
        self.dir.mkdir(parents=True)
        self.write_config()
        write_part_scripts(self.dir, "fleet-node", [self.fleet.path, self.k], NODE_PARTS,
                           f"Node {self.k}")
        settings = self.fleet.settings()
        primary_port = settings["primary_port"]
        # With a port and a binary log of its own, so that it can be promoted (operations-fleet.md).
        run([SCRIPTS / "mariadb-replica", "--server-id", 100 + self.k, "--port",
             primary_port + self.k, "--log-bin", self.dir / "replica", settings["primary_dir"],
             primary_port])
        self.start_worker()
        self.start_nginx()
        front = Front(self.fleet)
        if front.conf.exists() and not front.lists(self.k):
            front.add(self.k)
            front.reload(0)
        log(f"node{self.k} on http://{self.address}:{settings['port']} (its replica: "
            f"{self.dir}/replica/mysqld.sock)")

    def remove(self):
        """Out of the front's upstream (the front reloaded, its old workers given 10 s to finish
        what they hold), then stopped and deleted."""
        if not self.dir.is_dir():
            log(f"no node {self.k} in {self.fleet.path}")
            sys.exit(1)
        front = Front(self.fleet)
        if front.conf.exists() and front.lists(self.k):
            if len(front.listed()) == 1:
                log(f"node {self.k} is the front's only node; add another first")
                sys.exit(1)
            front.remove(self.k)
            front.reload(10)
        self.stop()
        shutil.rmtree(self.dir)
        log(f"node{self.k} removed")

    def write_config(self):
        settings = self.fleet.settings()
        fd = os.open(self.config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"""\
# Written by scripts/fleet-node: node {self.k}. Reads its own replica, then the primary; writes the primary.
listen = {self.socket}
listen_mode = 0666
processes = 2
threads = 4
db_host = 127.0.0.1
db_port = {settings["primary_port"]}
db_replicas = unix:{self.dir}/replica/mysqld.sock
db_name = connector
db_user = connector_reader
db_password = {settings["read_password"]}
db_write_user = connector_writer
db_write_password = {settings["write_password"]}
# The node publishes the changes its own replica shows to its own nginx (docs/events.md).
events_publisher = {self.dir}/nginx/events/publish/publish.sock
events_cursor_file = {self.dir}/events-cursor
{settings["worker_conf"]}
""")
