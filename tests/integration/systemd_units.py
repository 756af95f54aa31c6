"""The systemd unit files of systemd/ as test_systemd and test_systemd_units read them: their
paths, their settings parsed, the worker's own view of a config file, and a root directory for
`systemd-analyze verify --root`. Python 3 standard library only."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from harness import BUILD_DIR, REPO, WORKER

DELIVERER = BUILD_DIR / "src" / "connector-webhooks"

UNITS = REPO / "systemd"
SOCKET_UNIT = UNITS / "connector-worker.socket"
SERVICE_UNIT = UNITS / "connector-worker.service"
EVENTS_UNIT = UNITS / "connector-events.service"
WEBHOOKS_UNIT = UNITS / "connector-webhooks.service"
EXAMPLE_CONFIG = REPO / "fcgi" / "connector.conf.example"
INSTALLED_WORKER = "/usr/bin/connector-worker"
INSTALLED_CONFIG = "/etc/connector/connector.conf"
# systemd names a socket unit's fd after the unit unless FileDescriptorName= says otherwise.
FDNAME = "connector-worker.socket"
INHERITED_LOG_LINE = "listening on the socket passed by systemd (fd 3)"

CORE = {"network": "UNITCore", "chain_id": "36888", "base_chain": "MainBase", "slug": "unitcore"}
IOT = {"network": "UNITIoT", "chain_id": "1012", "base_chain": "SideBase", "slug": "unitiot"}
NETWORKS = {"networks": [CORE, IOT]}


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
    the path of ExecStart (and the webhook deliverer at its own), /bin/kill, nginx and /bin/rm (connector-events.service), and the
    host's targets (the default dependencies)."""
    root = Path(base) / "root"
    units = root / "lib/systemd/system"
    units.mkdir(parents=True)
    for unit in (SOCKET_UNIT, SERVICE_UNIT, EVENTS_UNIT, WEBHOOKS_UNIT):
        shutil.copyfile(unit, units / unit.name)
    for target in Path("/lib/systemd/system").glob("*.target"):
        if target.is_file():
            shutil.copyfile(target, units / target.name)
    (root / "usr/bin").mkdir(parents=True)
    shutil.copy2(WORKER, root / INSTALLED_WORKER.lstrip("/"))
    shutil.copy2(DELIVERER, root / "usr/bin/connector-webhooks")
    (root / "bin").mkdir(exist_ok=True)
    shutil.copy2(os.path.realpath("/bin/kill"), root / "bin/kill")
    shutil.copy2(os.path.realpath("/bin/rm"), root / "bin/rm")  # connector-events.service's
    (root / "usr/sbin").mkdir(parents=True)
    shutil.copy2(os.path.realpath("/usr/sbin/nginx"), root / "usr/sbin/nginx")
    return root


