"""The generated data sets the benchmarks share (scripts/bench, scripts/profile): one MariaDB
data directory per size under .bench/, db-N, made once and reused by later runs. A new size
starts as a copy of the largest smaller one, so only the difference is generated."""

import shutil
import subprocess
import time
from pathlib import Path

STATE = Path(__file__).resolve().parents[2] / ".bench"
# MariaDB's settings for them (Stack(mariadb_env=...)): 2,000,000 records fit in the pool.
MARIADB_ENV = {"CONNECTOR_MARIADB_BUFFER_POOL": "4G", "CONNECTOR_MARIADB_LOG_FILE_SIZE": "512M"}


def data_dir(rows):
    """The data directory for `rows` records, copied from the largest smaller one if new (the
    caller's Stack starts MariaDB on it: Stack(db_dir=...), and keeps it at stop)."""
    path = STATE / f"db-{rows}"
    if not path.exists():
        smaller = sorted((int(d.name[3:]), d) for d in STATE.glob("db-*")
                         if d.name[3:].isdigit() and int(d.name[3:]) < rows)
        if smaller:
            shutil.copytree(smaller[-1][1], path, symlinks=True,
                            ignore=shutil.ignore_patterns("*.sock", "*.pid"))
    return path


def fill(stack, rows, admin):
    """Brings the stack's database to exactly `rows` history records: the reference data
    (connector-admin sample) if it has none, then the missing records (gen-history seeded by
    the first new id, so a size holds the same records however it was reached)."""
    if stack.sql("SELECT COUNT(*) FROM pairs") == [["0"]]:
        STATE.mkdir(exist_ok=True)
        reference = STATE / "reference.json"
        reference.write_text(subprocess.run([str(admin), "sample", "--history", "0"],
                                            capture_output=True, text=True, check=True).stdout)
        _admin(stack, "import", reference)
    have = int(stack.sql("SELECT COUNT(*) FROM history")[0][0])
    if have > rows:
        raise SystemExit(f"{stack.db_dir} holds {have} records, more than {rows}; remove it first")
    if have < rows:
        print(f"generating {rows - have} history records ...", flush=True)
        started = time.monotonic()
        _admin(stack, "gen-history", rows - have, "--seed", have + 1, timeout=7200)
        print(f"generated in {time.monotonic() - started:.0f} s", flush=True)
        stack.sql("ANALYZE TABLE history")


def _admin(stack, *args, timeout=600):
    done = stack.admin(*args, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"connector-admin {args[0]} failed: {done.stderr.strip()}")
