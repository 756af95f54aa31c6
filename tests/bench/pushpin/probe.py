#!/usr/bin/env python3
"""The client of scripts/bench-pushpin (Pushpin 1.36 feasibility, issue 34;
tests/bench/pushpin/README.md): one asyncio client for every figure, RSS and CPU from /proc.

  probe.py --state DIR idle [--n 10000] [--wrk-seconds 10]
      RSS per idle SSE subscriber (each on its own channel), backend connections and threads
      while they are held, wrk on the /v1/networks stand-in without and with them
  probe.py --state DIR throughput [--subs 1000] [--items 30000] [--batch 50] [--inflight 4]
      items published per second (accepted, and delivered to the subscribers), CPU us per item
  probe.py --state DIR latency [--rate 20] [--seconds 10] [--idle N]
      publish -> event at an SSE subscriber, and -> a long-poll's answer: p50 / p99 / max
  probe.py --state DIR kill [--subs 1000] [--rate 200] [--wrk-seconds 10]
      SIGKILL of the whole Pushpin instance during wrk on the stand-in, subscribers held and
      publishes flowing: wrk's errors (the instance stays dead: the driver restarts it)

DIR (or PUSHPIN_BENCH_STATE) is the driver's state dir: ports.json ({"http", "publish",
"backend", "networks"}), pushpin.pid (the runner, whose children are condure, zurl,
pushpin-proxy and pushpin-handler) and backend.pid. Each figure prints one JSON object.
"""
import argparse
import asyncio
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
LATENCY_CHANNEL = 900000  # latency and kill use channels of their own, away from 0..N
IDLE_CHANNEL = 100000
KILL_CHANNEL = 500000


class State:
    """The driver's state dir: ports and pid files."""

    def __init__(self, path):
        self.dir = Path(path)
        ports = json.loads((self.dir / "ports.json").read_text())
        self.http, self.publish = ports["http"], ports["publish"]
        self.backend = ports["backend"]
        self.networks = "http://127.0.0.1:%d/v1/networks" % ports["networks"]

    def pid(self, name):
        return int((self.dir / f"{name}.pid").read_text())

    def pushpin_pids(self):
        root = self.pid("pushpin")
        kids = subprocess.run(["pgrep", "-P", str(root)], capture_output=True,
                              text=True).stdout.split()
        return [root] + [int(k) for k in kids]


def proc_field(pid, name):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def names(pids):
    return {p: Path(f"/proc/{p}/comm").read_text().strip() for p in pids}


def rss_kb(pids):
    return {p: proc_field(p, "VmRSS") for p in pids}


def cpu_s(pids):
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def established_to(port):
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( dport = :{port} )"],
                         capture_output=True, text=True).stdout
    return len(out.splitlines())


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(len(s) * p / 100.0)) - 1))]


def spread(values):
    """p50 / p99 / max in ms, rounded, or Nones when nothing arrived."""
    if not values:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"p50_ms": round(statistics.median(values), 2), "p99_ms": round(pct(values, 99), 2),
            "max_ms": round(max(values), 2)}


class Sub:
    """One SSE subscriber: the receipt time of every `id: N` line."""

    def __init__(self, port, channel, query=""):
        self.port, self.channel, self.query = port, channel, query
        self.received = {}
        self.count = 0

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET /s/{self.channel}?log=0{self.query} HTTP/1.1\r\nHost: x\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"subscriber {self.channel}: {head[:200]!r}")
        await self.reader.readuntil(b"data: first\n\n")  # the backend's first bytes (chunked)
        return self

    async def run(self):
        buf = b""
        while True:
            try:
                chunk = await self.reader.read(65536)
            except ConnectionError:  # the kill figure resets every stream
                return
            if not chunk:
                return
            now = time.monotonic()
            buf += chunk
            for m in re.findall(rb"\nid: ([0-9]+)\n", buf):
                self.count += 1
                self.received.setdefault(int(m), now)
            buf = buf[buf.rfind(b"\n"):]

    def close(self):
        self.writer.close()


async def open_subs(st, channels, query="", parallel=50):
    """Opens the streams 50 at a time: each is one backend request, and a burst of hundreds
    at once overran the Python stand-in (502s), which the real worker would not show."""
    subs = [Sub(st.http, c, query) for c in channels]
    sem = asyncio.Semaphore(parallel)

    async def one(s):
        async with sem:
            await s.open()
    await asyncio.gather(*(one(s) for s in subs))
    return subs


async def publish(st, items):
    body = json.dumps({"items": items}).encode()
    r, w = await asyncio.open_connection("127.0.0.1", st.publish)
    w.write(b"POST /publish/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    data = await r.read()
    w.close()
    if not data.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(data[:300])


def item(channel, seq):
    """One change in both formats: an SSE event for streams, a JSON body for long-polls."""
    payload = json.dumps({"seq": str(seq), "record": {"hash": "%064x" % seq,
                                                      "status": "Pending"}})
    return {"channel": channel, "id": str(seq),
            "formats": {"http-stream": {"content": f"id: {seq}\ndata: {payload}\n\n"},
                        "http-response": {"body": json.dumps({"changes": [{"seq": str(seq)}]})}}}


def wrk(url, seconds):
    """wrk -t2 -c32 as in docs/BENCHMARKS.md: requests, req/s, socket errors, non-2xx."""
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", url],
                         capture_output=True, text=True).stdout
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "rps": float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1)),
            "socket_errors": sum(int(g) for g in errors.groups()) if errors else 0,
            "non_2xx": int(non2xx.group(1)) if non2xx else 0}


async def in_thread(fn, *args):
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def cmd_idle(a, st):
    pids = st.pushpin_pids()
    without = wrk(st.networks, a.wrk_seconds)["rps"]
    before = rss_kb(pids)
    t = time.monotonic()
    subs = await open_subs(st, range(a.n))
    opened = time.monotonic() - t
    readers = [asyncio.ensure_future(s.run()) for s in subs]
    await asyncio.sleep(3)  # the once-per-stream recovery request (README) settles first
    held = rss_kb(pids)
    conns, bthreads = established_to(st.backend), proc_field(st.pid("backend"), "Threads")
    with_subs = (await in_thread(wrk, st.networks, a.wrk_seconds))["rps"]
    nm = names(pids)
    total = sum(held.values()) - sum(before.values())
    print(json.dumps({"n": a.n, "opened_s": round(opened, 1),
                      "still_open": sum(1 for r in readers if not r.done()),
                      "rss_before_kb": {nm[p]: before[p] for p in pids},
                      "rss_held_kb": {nm[p]: held[p] for p in pids},
                      "delta_kb_by_process": {nm[p]: held[p] - before[p] for p in pids},
                      "kb_per_subscriber": round(total / a.n, 2),
                      "backend_established_conns": conns, "backend_threads": bthreads,
                      "networks_rps_without": without, "networks_rps_with": with_subs,
                      "ratio": round(with_subs / without, 3)}, indent=1))
    for s in subs:
        s.close()


def batches(a):
    """Items round-robin over the subscribers' channels, a.batch to a request. The k-th item of
    a channel has id k: ids are unique per channel on a fresh instance."""
    out = []
    for start in range(0, a.items, a.batch):
        out.append([item(f"c{i % a.subs}", i // a.subs + 1)
                    for i in range(start, min(a.items, start + a.batch))])
    return out


async def wait_delivery(subs, want, stall, deadline):
    """Until every item arrived, or none for `stall` seconds (the default limits drop
    items: they never come), or the deadline."""
    last_count, last_change = -1, time.monotonic()
    while time.monotonic() < deadline:
        count = sum(s.count for s in subs)
        if count >= want:
            return
        if count != last_count:
            last_count, last_change = count, time.monotonic()
        elif time.monotonic() - last_change > stall:
            return
        await asyncio.sleep(0.05)


async def cmd_throughput(a, st):
    pids = st.pushpin_pids()
    subs = await open_subs(st, range(a.subs))
    readers = [asyncio.ensure_future(s.run()) for s in subs]
    await asyncio.sleep(1)
    queue = batches(a)
    cpu0, t0 = cpu_s(pids), time.monotonic()

    async def sender():
        while queue:
            await publish(st, queue.pop(0))
    await asyncio.gather(*(sender() for _ in range(a.inflight)))
    t_pub = time.monotonic() - t0
    await wait_delivery(subs, a.items, a.stall, t0 + a.wait)
    delivered = sum(s.count for s in subs)
    last = max((max(s.received.values()) for s in subs if s.received), default=t0)
    await asyncio.sleep(1)  # the CPU of the last deliveries' aftermath
    cpu = cpu_s(pids) - cpu0
    t_del = last - t0
    print(json.dumps({"subs": a.subs, "streams_closed": sum(1 for r in readers if r.done()),
                      "items": a.items, "batch": a.batch, "inflight": a.inflight,
                      "publish_s": round(t_pub, 3), "accepted_items_per_s": round(a.items / t_pub),
                      "delivered": delivered, "dropped": a.items - delivered,
                      "delivered_all_s": round(t_del, 3),
                      "delivered_items_per_s": round(delivered / t_del) if t_del > 0 else None,
                      "cpu_s": round(cpu, 2),
                      "cpu_us_per_item": round(cpu / a.items * 1e6, 1)}, indent=1))
    for s in subs:
        s.close()


class Poller:
    """A long-poller re-polling at once after each answer; `held_since` is when the current
    poll was sent (None between an answer and the next poll: the hand-over gap)."""

    def __init__(self, st, channel):
        self.st, self.channel = st, channel
        self.answers, self.timeouts, self.held_since, self.stop = {}, 0, None, False

    async def run(self):
        while not self.stop:
            r, w = await asyncio.open_connection("127.0.0.1", self.st.http)
            w.write(f"GET /p/{self.channel}?log=0 HTTP/1.1\r\nHost: x\r\nConnection: close"
                    "\r\n\r\n".encode())
            self.held_since = time.monotonic()
            data = await r.read()
            now, self.held_since = time.monotonic(), None
            w.close()
            body = data.split(b"\r\n\r\n", 1)[-1]
            for m in re.findall(rb'"seq": "([0-9]+)"', body):
                self.answers.setdefault(int(m), now)
            if re.search(rb'"changes": ?\[\]', body):
                self.timeouts += 1


async def paced_publishes(st, poller, rate, seconds):
    """One POST every 1/rate s to the stream's channel, plus the poll's channel when the poll
    has been held for 20 ms (a change in the hand-over gap reaches no poll: the design reads
    the feed with `after` for those). Returns {seq: start} for the stream and the poll."""
    sent_stream, sent_poll = {}, {}
    t_next = time.monotonic()
    for seq in range(1, int(rate * seconds) + 1):
        t_next += 1.0 / rate
        items = [item(f"c{LATENCY_CHANNEL}", seq)]
        held = poller.held_since
        to_poll = held is not None and time.monotonic() - held > 0.02
        if to_poll:
            items.append(item(f"p{LATENCY_CHANNEL}", seq))
        t = time.monotonic()
        await publish(st, items)
        sent_stream[seq] = t
        if to_poll:
            sent_poll[seq] = t
        await asyncio.sleep(max(0, t_next - time.monotonic()))
    return sent_stream, sent_poll


async def cmd_latency(a, st):
    idle = await open_subs(st, range(IDLE_CHANNEL, IDLE_CHANNEL + a.idle)) if a.idle else []
    sub = (await open_subs(st, [LATENCY_CHANNEL]))[0]
    reader = asyncio.ensure_future(sub.run())
    poller = Poller(st, LATENCY_CHANNEL)
    polling = asyncio.ensure_future(poller.run())
    await asyncio.sleep(1)
    sent_stream, sent_poll = await paced_publishes(st, poller, a.rate, a.seconds)
    await asyncio.sleep(2)
    poller.stop = True
    lat_s = [(sub.received[k] - t) * 1000 for k, t in sent_stream.items() if k in sub.received]
    lat_p = [(poller.answers[k] - t) * 1000 for k, t in sent_poll.items() if k in poller.answers]
    print(json.dumps({"rate": a.rate, "seconds": a.seconds, "idle_subscribers": a.idle,
                      "stream": {"sent": len(sent_stream), "received": len(lat_s),
                                 **spread(lat_s)},
                      "poll": {"sent": len(sent_poll), "answered": len(lat_p), **spread(lat_p),
                               "unanswered_seqs": sorted(k for k in sent_poll
                                                         if k not in poller.answers)}},
                     indent=1))
    for task in (polling, reader):
        task.cancel()
    for s in idle + [sub]:
        s.close()


async def steady_publishes(st, channels, rate, stop):
    """`rate` POSTs a second over the channels until stop is set; counts what failed (every
    POST once Pushpin is dead)."""
    counts, seq = {"published": 0, "failed": 0}, 0
    while not stop.is_set():
        seq += 1
        try:
            await publish(st, [item(f"c{channels[seq % len(channels)]}", seq)])
            counts["published"] += 1
        except (OSError, RuntimeError):
            counts["failed"] += 1
        await asyncio.sleep(1.0 / rate)
    return counts


async def cmd_kill(a, st):
    channels = list(range(KILL_CHANNEL, KILL_CHANNEL + a.subs))
    subs = await open_subs(st, channels)
    readers = [asyncio.ensure_future(s.run()) for s in subs]
    stop = asyncio.Event()
    publishing = asyncio.ensure_future(steady_publishes(st, channels, a.rate, stop))
    load = asyncio.ensure_future(in_thread(wrk, st.networks, a.wrk_seconds))
    await asyncio.sleep(a.wrk_seconds * 0.4)
    pids = st.pushpin_pids()  # the runner and its children, all at once
    killed = names(pids)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    killed_at = round(a.wrk_seconds * 0.4, 1)
    result = await load
    stop.set()
    counts = await publishing
    await asyncio.sleep(0.5)
    print(json.dumps({"subs": a.subs, "publish_rate": a.rate, "killed": sorted(killed.values()),
                      "killed_at_s": killed_at, "still_alive": [p for p in pids if alive(p)],
                      "streams_ended": sum(1 for r in readers if r.done()),
                      "publishes": counts, "networks_wrk": result}, indent=1))


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--state", default=os.environ.get("PUSHPIN_BENCH_STATE"))
    sp = p.add_subparsers(dest="cmd", required=True)
    i = sp.add_parser("idle")
    i.add_argument("--n", type=int, default=10000)
    i.add_argument("--wrk-seconds", type=int, default=10)
    t = sp.add_parser("throughput")
    t.add_argument("--subs", type=int, default=1000)
    t.add_argument("--items", type=int, default=30000)
    t.add_argument("--batch", type=int, default=50)
    t.add_argument("--inflight", type=int, default=4)
    t.add_argument("--stall", type=float, default=5, help="stop waiting after s without items")
    t.add_argument("--wait", type=float, default=120, help="longest wait for the deliveries")
    lat = sp.add_parser("latency")
    lat.add_argument("--rate", type=float, default=20)
    lat.add_argument("--seconds", type=float, default=10)
    lat.add_argument("--idle", type=int, default=0)
    k = sp.add_parser("kill")
    k.add_argument("--subs", type=int, default=1000)
    k.add_argument("--rate", type=float, default=200)
    k.add_argument("--wrk-seconds", type=int, default=10)
    return p


def main():
    p = parser()
    a = p.parse_args()
    if not a.state:
        p.error("--state DIR (or PUSHPIN_BENCH_STATE) is required")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # one descriptor per stream
    figures = {"idle": cmd_idle, "throughput": cmd_throughput, "latency": cmd_latency,
               "kill": cmd_kill}
    asyncio.run(figures[a.cmd](a, State(a.state)))


if __name__ == "__main__":
    main()
