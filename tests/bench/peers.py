"""The peers that scripts/bench measures the project against (its section "peer"): how each is
built and started, and how the report names it. Each serves GET /v1/networks, /v1/history and
/v1/history/hash on the project's schema, answering byte for byte as the project does, on a
unix socket behind its own nginx (tests/bench/peer/nginx.conf.in, shared), and reads the
settings PEER_DB_SOCKET and PEER_DB_PASSWORD (their READMEs)."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The nginx in front of each peer: an HTTP reverse proxy with upstream keep-alive.
NGINX_CONF = HERE / "peer" / "nginx.conf.in"


class Peer:
    def __init__(self, key, name, install, command, what, app, env=None):
        self.key = key
        self.name = name  # "the {name} peer"
        self.install = install  # builds or installs it; quiet when up to date
        self.command = command  # (build dir, socket path) -> the command that serves
        self.what = what  # the report's description of the stack, {cores} filled in
        self.app = app  # how the report names its processes
        self.env = env or {}

    def describe(self):
        return self.what.format(cores=os.cpu_count())


PEERS = {peer.key: peer for peer in [
    Peer("node", "Node.js", HERE / "peer" / "install",
         lambda build, socket: ["node", HERE / "peer" / "server.mjs", "--listen", socket],
         "tests/bench/peer: Fastify 5, mysql2 prepared statements, {cores} processes",
         "Node cluster", env={"NODE_ENV": "production"}),
    Peer("go", "Go", HERE / "go-peer" / "install",
         lambda build, socket: [build / "go-peer" / "connector-go-peer", "--listen", socket],
         "tests/bench/go-peer: net/http, database/sql + go-sql-driver/mysql prepared statements "
         "(the project's own), 1 process, GOMAXPROCS {cores}", "Go process"),
]}
