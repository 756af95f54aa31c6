"""The parts of scripts/bench-webhooks (issue 37's targets; docs/BENCHMARKS.md, section
"scripts/bench-webhooks"): the writer that commits history changes through one long-lived
`mariadb` client, the receipts followed in the receiver's JSON-lines logs, the feed read back
from history_changes, the checks (every change delivered, in order per record, each repeat
explained) and the CPU clocks of processes. Standard library only."""

import calendar
import json
import math
import os
import re
import subprocess
import time
from collections import Counter, defaultdict, deque
from pathlib import Path

FIRST_ID = 50_000_000  # the bench's records: far above the fixture's and the tests' ids
TICK = os.sysconf("SC_CLK_TCK")
# What an attempt's status says about its request: only these never reached the receiver.
NEVER_SENT = {"connect-failed", "refused-address", "dns-failed", "tls-failed", "not-sent",
              "protocol-refused"}
ATTEMPT = re.compile(r"webhook subscription=(\d+) event=(\S+) attempt=(\d+) status=(\S+)")


def address(subscription_index, j):
    """The j-th recipient address the subscription of that index (0..) follows."""
    return f"0xbebebebe{subscription_index:016x}{j:016x}"


def sql_address(k, subscriptions, per):
    """address() in SQL for the k-th record (an SQL expression): subscription k mod n, its
    address (k div n) mod per, as the writer spreads records."""
    return (f"CONCAT('0xbebebebe', LPAD(LOWER(HEX(({k}) MOD {subscriptions})), 16, '0'), "
            f"LPAD(LOWER(HEX((({k}) DIV {subscriptions}) MOD {per})), 16, '0'))")


class Writer:
    """One long-lived `mariadb` client on the primary's socket, fed on its stdin, as the
    connector's nodes write history: each change one autocommitted statement on one record (an
    insert, or a status update 0.5 s or more after the record's last change: Deposit, Pending,
    Confirmed), the k-th new record to subscription k mod n. commits holds (history id, wall
    time the statement came back, so committed) per change, in order."""

    STEPS = {"Deposit": "Pending", "Pending": "Confirmed"}

    def __init__(self, stack, os_user, subscriptions, per, template_id, gap=0.5):
        self.err = stack.dir / "writer.err"
        with open(self.err, "wb") as err:
            self.process = subprocess.Popen(
                ["mariadb", "--no-defaults", f"--socket={stack.db_socket}", "-u", os_user,
                 "--default-character-set=utf8mb4", "-N", "-B", "--unbuffered", "connector"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                bufsize=1)
        self.subscriptions, self.per, self.gap = subscriptions, per, gap
        self.next_id, self.inserted, self.acks = FIRST_ID, 0, 0
        self.advancing = deque()  # (due monotonic, history id, next status)
        self.commits = []
        self.columns = [r[0] for r in self.sql(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "'connector' AND table_name = 'history' ORDER BY ordinal_position")]
        self.sql("CREATE TEMPORARY TABLE bench_template AS SELECT * FROM history WHERE id = "
                 f"{int(template_id)}")

    def sql(self, statement):
        """Runs one statement; its rows (lists of strings) once the client has answered."""
        self.acks += 1
        marker = f"bench-ack-{self.acks}"
        self.process.stdin.write(f"{statement};\nSELECT '{marker}';\n")
        self.process.stdin.flush()
        rows = []
        while (line := self.process.stdout.readline()) != f"{marker}\n":
            if not line:
                raise RuntimeError(f"the writer's mariadb client ended: "
                                   f"{self.err.read_text()[-2000:]}")
            rows.append(line.rstrip("\n").split("\t"))
        return rows

    def _select(self, overrides):
        return ", ".join(overrides.get(column, column) for column in self.columns)

    def change(self):
        """One change, committed; returns its record's id."""
        now = time.monotonic()
        if self.advancing and self.advancing[0][0] <= now:
            _, record, status = self.advancing.popleft()
            self.sql(f"UPDATE history SET status = '{status}' WHERE id = {record}")
        else:
            record, status = self.next_id, "Deposit"
            to = address(self.inserted % self.subscriptions,
                         (self.inserted // self.subscriptions) % self.per)
            self.next_id += 1
            self.inserted += 1
            self.sql("INSERT INTO history SELECT " + self._select(
                {"id": str(record), "hash": f"'{record:064x}'", "destination_address": f"'{to}'",
                 "status": "'Deposit'"}) + " FROM bench_template")
        self.commits.append((record, time.time()))
        if status in self.STEPS:
            self.advancing.append((now + self.gap, record, self.STEPS[status]))
        return record

    def run(self, rate, seconds, stop=None):
        """rate changes a second for `seconds` (or until stop is set); the rate achieved."""
        count, start = int(rate * seconds), time.monotonic()
        done = 0
        for done in range(1, count + 1):
            if stop is not None and stop.is_set():
                break
            late = start + (done - 1) / rate - time.monotonic()
            if late > 0:
                time.sleep(late)
            self.change()
        return done / max(time.monotonic() - start, 1e-9)

    def backlog(self, count, rows_per_statement=300):
        """count new records (Deposit), rows_per_statement to an INSERT ... SELECT."""
        while count > 0:
            rows = min(count, rows_per_statement)
            k = f"{self.inserted} + s.seq"
            self.sql("INSERT INTO history SELECT " + self._select(
                {"id": f"{self.next_id} + s.seq", "hash": f"LPAD(LOWER(HEX({self.next_id} + "
                 "s.seq)), 64, '0')", "destination_address":
                 sql_address(k, self.subscriptions, self.per), "status": "'Deposit'"})
                + f" FROM bench_template JOIN seq_0_to_{rows - 1} s")
            self.next_id, self.inserted, count = self.next_id + rows, self.inserted + rows, \
                count - rows

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(30)


class Receipts:
    """The receiver's deliveries-*.jsonl files (webhook_receiver_process.py), read as they grow.
    all: (monotonic, time, event id, subscription, seq, record hash, verified, answer) per
    request; first: event id -> wall time of its first receipt."""

    def __init__(self, state_dir):
        self.dir, self.offsets = Path(state_dir), {}
        self.all, self.first, self.bad = [], {}, 0

    def poll(self):
        for log in sorted(self.dir.glob("deliveries-*.jsonl")):
            offset = self.offsets.get(log, 0)
            with open(log, "rb") as f:
                f.seek(offset)
                data = f.read()
            end = data.rfind(b"\n") + 1
            self.offsets[log] = offset + end
            for line in data[:end].splitlines():
                d = json.loads(line)
                self.all.append((d["monotonic"], d["time"], d["event_id"], d["subscription"],
                                 d["seq"], d["record_hash"], d["signature_ok"], d["answer"]))
                self.bad += not d["signature_ok"]
                if d["signature_ok"] and d["time"] < self.first.get(d["event_id"], math.inf):
                    self.first[d["event_id"]] = d["time"]
        return self

    def wait(self, event_ids, seconds, step=0.2):
        """Waits until every event id was received; the ones missing at the deadline."""
        deadline, missing = time.monotonic() + seconds, list(event_ids)
        while True:
            missing = [e for e in missing if e not in self.poll().first]
            if not missing or time.monotonic() > deadline:
                return missing
            time.sleep(step)

    def count(self, event_ids):
        """Receipts (repeats included) of these event ids."""
        wanted = set(event_ids)
        return sum(1 for r in self.all if r[2] in wanted)


def feed(stack, after, upto):
    """The feed's rows with after < seq <= upto: (seq, history id, changed_us, recipient)."""
    return [(int(seq), int(hid), int(us), to.lower()) for seq, hid, us, to in stack.sql(
        "SELECT seq, history_id, changed_us, destination_address FROM history_changes WHERE "
        f"seq > {int(after)} AND seq <= {int(upto)} ORDER BY seq")]


def feed_end(stack):
    return int(stack.sql("SELECT COALESCE(MAX(seq), 0) FROM history_changes")[0][0])


def expected_events(rows, follower):
    """{event id: (seq, history id, changed_us)} of the feed rows a subscription follows
    (follower: recipient -> subscription id)."""
    return {f"{follower[to]}-{seq}": (seq, hid, us) for seq, hid, us, to in rows if to in follower}


def commit_times(commits, rows):
    """seq -> the writer's commit time, each record's commits matched to its feed rows in
    order (each change is one statement on one record, one feed row)."""
    by_record = defaultdict(list)
    for record, at in commits:
        by_record[record].append(at)
    seqs = defaultdict(list)
    for seq, hid, _, _ in rows:
        seqs[hid].append(seq)
    times = {}
    for record, ats in by_record.items():
        if len(seqs[record]) != len(ats):
            raise RuntimeError(f"record {record}: {len(ats)} commits, {len(seqs[record])} feed "
                               "rows")
        times.update(zip(seqs[record], ats))
    return times


def percentile(values, p):
    """The nearest-rank percentile p (0-100) of values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def latencies_ms(receipts, expected, committed, exclude=()):
    """commit -> first receipt, in ms, of each expected event but the excluded subscriptions'."""
    return [(receipts.first[e] - committed[seq]) * 1000 for e, (seq, _, _) in expected.items()
            if int(e.split("-")[0]) not in exclude and seq in committed]


def order_violations(receipts):
    """First receipts of an event id whose seq is below an earlier first receipt's of the same
    record and subscription (in order per record); and of the same subscription (seq order)."""
    seen, by_record, by_subscription = set(), {}, {}
    per_record, per_subscription = [], 0
    for r in sorted(receipts.all):
        _, _, event, subscription, seq, record, verified, _ = r
        if not verified or event in seen:
            continue
        seen.add(event)
        if by_record.get((subscription, record), -1) > seq:
            per_record.append(event)
        if by_subscription.get(subscription, -1) > seq:
            per_subscription += 1
        by_record[(subscription, record)] = max(seq, by_record.get((subscription, record), -1))
        by_subscription[subscription] = max(seq, by_subscription.get(subscription, -1))
    return per_record, per_subscription


def attempts(logs):
    """(event id -> Counter of statuses) of every attempt in the deliverers' logs."""
    found = defaultdict(Counter)
    for log in logs:
        for m in ATTEMPT.finditer(log.read_text(errors="replace") if log.exists() else ""):
            found[m[2]][m[4]] += 1
    return found


def repeats(receipts, events, logs, kill_time=None):
    """(repeats, unexplained) among these event ids: receipts after an event's first. A repeat
    is explained by a logged attempt of it that got no 2xx yet may have reached the receiver
    (an acknowledgement lost), or, across kill_time, by the takeover (one repeat per event
    first received before the kill and again after it)."""
    wanted, received = set(events), defaultdict(list)
    for r in receipts.all:
        if r[2] in wanted and r[6]:
            received[r[2]].append(r[1])
    logged = attempts(logs)
    total = unexplained = 0
    for event, times in received.items():
        extra = len(times) - 1
        total += extra
        lost = sum(n for status, n in logged[event].items()
                   if not status.startswith("2") and status not in NEVER_SENT)
        takeover = int(kill_time is not None and min(times) < kill_time < max(times))
        unexplained += max(0, extra - lost - takeover)
    return total, unexplained


def cpu_seconds(pids):
    """User + system CPU seconds of these processes so far (0 for one that is gone)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def odd_lines(logs, limit=20):
    """The deliverers' lines that are not an attempt with a 2xx, nor one of its ordinary
    notices; counted by their text without times and numbers, a few of each kept."""
    ordinary = ("starts as", "delivers for the fleet", "stops and frees the lease")
    kinds = Counter()
    examples = {}
    for log in logs:
        for line in (log.read_text(errors="replace") if log.exists() else "").splitlines():
            m = ATTEMPT.search(line)
            if (m and m[4].startswith("2")) or any(o in line for o in ordinary):
                continue
            kind = re.sub(r"[0-9]+", "N", line.split(" ", 1)[-1])
            kinds[kind] += 1
            examples.setdefault(kind, f"{log.name}: {line}")
    return [{"count": n, "example": examples[k]} for k, n in kinds.most_common(limit)]


def log_time(log, text, after=0.0):
    """Unix time of the first line of `log` after `after` that contains text (the line's
    ISO-8601 UTC stamp, "2026-11-27T09:39:34.123Z"), or None."""
    for line in (log.read_text(errors="replace") if log.exists() else "").splitlines():
        stamp = line.split(" ", 1)[0]
        if text not in line or not re.fullmatch(r"[0-9-]{10}T[0-9:]{8}\.[0-9]{3}Z", stamp):
            continue
        at = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) + float(stamp[19:-1])
        if at > after:
            return at
    return None
