"""What every part of the integration-test harness shares (harness.py re-exports it all): where
the repository, the build and the scripts are, the test accounts' passwords, the endpoint
descriptions of the build, and running a command. Python 3 standard library only."""

import importlib.machinery
import importlib.util
import json
import os
import pwd
import shlex
import socket
import subprocess
from pathlib import Path

REPO = Path(os.environ.get("CONNECTOR_REPO") or Path(__file__).resolve().parents[2])
BUILD_DIR = Path(os.environ.get("CONNECTOR_BUILD_DIR") or REPO / "build")
WORKER = BUILD_DIR / "fcgi" / "connector-worker"
ADMIN = BUILD_DIR / "src" / "connector-admin"
SCRIPTS = REPO / "scripts"
DB_PASSWORD = os.environ.get("CONNECTOR_DB_PASSWORD", "connector-dev")
READ_USER, READ_PASSWORD = "connector_reader", "connector-read-test"
WRITE_USER, WRITE_PASSWORD = "connector_writer", "connector-write-test"
WEBHOOKS_USER, WEBHOOKS_PASSWORD = "connector_webhooks", "connector-webhooks-test"
REPL_PASSWORD = "connector-repl-test"
# The passwords scripts/db-accounts and scripts/mariadb-replica set (only they get these).
ACCOUNTS_ENV = {"CONNECTOR_DB_READ_PASSWORD": READ_PASSWORD,
                "CONNECTOR_DB_WRITE_PASSWORD": WRITE_PASSWORD,
                "CONNECTOR_DB_WEBHOOKS_PASSWORD": WEBHOOKS_PASSWORD,
                "CONNECTOR_DB_REPL_PASSWORD": REPL_PASSWORD}

# nginx_env of a test that loads the stack from a few kept connections (load_client.Load): it
# measures the service, not the per-client rate, which it would reach at once from 127.0.0.1
# (the limits themselves: test_nginx, test_write_limits, test_events_hostile).
LOAD_FROM_ONE_CLIENT = {"NGINX_CONNECTOR_RATE": "off"}


def endpoint_descriptions():
    """The service's endpoint descriptions (api::kEndpoints, printed by the build's
    tests/endpoints-dump): {"endpoints": [{"path", "cache_control", "final_cache_control" ("" when
    none), "params": [{"name", "kind", "schema", "required", "echo"}]}], "page_size": {"default",
    "max"}, "statuses": [...]}."""
    dump = BUILD_DIR / "tests" / "endpoints-dump"
    return json.loads(subprocess.run([str(dump)], capture_output=True, check=True, text=True,
                                     timeout=30).stdout)


def nginx_contract():
    """scripts/nginx-contract as a module (its front_cached(): whether nginx may store an
    endpoint's answers, from its description)."""
    loader = importlib.machinery.SourceFileLoader("nginx_contract",
                                                  str(REPO / "scripts" / "nginx-contract"))
    spec = importlib.util.spec_from_loader("nginx_contract", loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def endpoint_params():
    """{path: [the names of the parameters it knows, in its table's order]}, every endpoint."""
    return {e["path"]: [p["name"] for p in e["params"]]
            for e in endpoint_descriptions()["endpoints"]}


# scripts/mariadb-start copies an initialised datadir from here instead of running
# mariadb-install-db (~5 s) for each of the suite's ~100 servers.
MARIADB_INIT_CACHE = f"/tmp/connector-tests-mariadb-init-{os.getuid()}"
# A command put before the worker's, e.g. valgrind (tests/integration/memcheck.py sets it);
# stopping then takes longer (each process checks its memory on the way out).
WORKER_WRAPPER = shlex.split(os.environ.get("CONNECTOR_WORKER_WRAPPER", ""))
WORKER_STOP_TIMEOUT = 120 if WORKER_WRAPPER else 10
WORKER_START_TIMEOUT = 120 if WORKER_WRAPPER else 30  # to serving, refreshed copies loaded

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer")


class StackError(RuntimeError):
    """The stack could not be started, or a process of it misbehaved."""


def _tail(path, lines=40):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args, timeout=120, **kwargs):
    """Runs a command, raising StackError with its output when it fails."""
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    if result.returncode != 0:
        raise StackError(f"{' '.join(map(str, args))} exited {result.returncode}:\n"
                         f"{result.stdout}{result.stderr}")
    return result


def sanitized_build():
    """True when BUILD_DIR is a sanitizer (ASan+UBSan) build tree."""
    cache = BUILD_DIR / "CMakeCache.txt"
    return cache.exists() and "CONNECTOR_SANITIZE:BOOL=ON" in cache.read_text(errors="replace")


def _os_user():
    return pwd.getpwuid(os.getuid()).pw_name
