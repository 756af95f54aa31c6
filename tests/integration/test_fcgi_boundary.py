"""The FastCGI boundary as an attacker on the worker's socket meets it (fastcgi/fcgi_screen.h,
fcgi/request_screen.h): while load runs through nginx, each hostile input is closed before
libfcgi reads it, counted by reason in /status (fcgi_rejected), and kills nothing:

* libfcgi 2.4.2's crash (a PARAMS name length written as 0xfffffffe: a failed malloc aborts
  the process), sent 100 times, and the lengths around it (0x7fffffff, 0x80000000, two that
  sum past 2^32): malformed;
* FCGI_GET_VALUES naming FCGI_MAX_CONNS eight times, a request id of 0, an unknown record
  type: management records;
* a second FCGI_BEGIN_REQUEST on a busy connection: malformed;
* a truncated header: closed at the read deadline (deadline);
* PARAMS that never end (1 KiB pairs, pushed for 4 s): too large, closed long before 1 MiB has
  gone out, and the workers' memory does not grow with it;
* a request followed by bytes streamed without pause: answered, then closed (libfcgi's own
  close would read for as long as the peer sends).

After every case the same worker processes serve (same PIDs, no "killed by" in the log), every
request of the load got its 200, and a thread is free again within the read deadline."""

import os
import struct
import time
import unittest

import fcgi_client
from fcgi_client import (BEGIN_REQUEST, PARAMS, STDIN, closed_by_peer, connect, read_response,
                         record, request_bytes, request_params)
from fixture import Fixture
from harness import LOAD_FROM_ONE_CLIENT, Stack, wait_for
from load_client import Load, Target

fixture = Fixture()
PROCESSES, THREADS = 2, 4
READ_TIMEOUT_S = 1.5
SLACK_S = 15  # a loaded machine's room beyond a deadline; the waits end as soon as they can
GET_VALUES = 9

stack = None


def setUpModule():
    global stack
    # ASan's quarantine of freed memory (256 MiB by default) is kept small so that RSS means
    # memory held (the option is ignored by a build without ASan).
    asan = os.environ.get("ASAN_OPTIONS", "")
    # A load from 127.0.0.1 beside the hostile FastCGI peers (LOAD_FROM_ONE_CLIENT).
    stack = Stack(fixture=fixture.path, threads=THREADS, nginx_env=LOAD_FROM_ONE_CLIENT,
                  config={"processes": PROCESSES,
                          "fcgi_read_timeout_ms": int(READ_TIMEOUT_S * 1000)},
                  worker_env={"ASAN_OPTIONS": f"{asan}:quarantine_size_mb=8".lstrip(":")})


def tearDownModule():
    stack.stop()


def begin(request_id=1):
    return record(BEGIN_REQUEST, request_id, struct.pack("!HB5x", 1, 0))


def lying_pair(name_length, value_length):
    """A name-value pair whose 4-byte lengths say what they like, with no bytes behind them."""
    return struct.pack("!II", name_length | 0x80000000, value_length | 0x80000000)


def rejected():
    return stack.worker_status()["fcgi_rejected"]


def rss_kb(pids):
    return sum(Stack.process_status(pid, "VmRSS") or 0 for pid in pids)


class Boundary(unittest.TestCase):
    def setUp(self):
        self.pids = stack.worker_pids()
        self.counted = rejected()
        self.load = Load(stack.port, [Target("/v1/networks"), Target("/v1/pairs"),
                                      Target("/v1/history?page_size=2", unique=True)],
                         connections=2)
        self.load.__enter__()

    def tearDown(self):
        # The load ran beside the case: a short case on a busy machine may end before its
        # first answer, so the load gets until its first few answers (all must be 200).
        ran = wait_for(lambda: len(self.load.records) >= 3, SLACK_S)
        self.load.__exit__(None, None, None)
        self.assertEqual([r for r in self.load.records if not r.ok], [])
        self.assertTrue(ran, "the load got no answer")
        self.assertEqual(stack.worker_pids(), self.pids)
        self.assertNotIn("killed by", stack.worker_log_text())
        # A thread is free again: every one idle but the one answering /status.
        status, _ = stack.settled_status(timeout=READ_TIMEOUT_S + SLACK_S)
        self.assertEqual(status["idle_threads"], PROCESSES * THREADS - 1)

    def rose_by(self, **reasons):
        now = rejected()
        self.assertEqual({k: now[k] - self.counted[k] for k in now},
                         {k: reasons.get(k, 0) for k in now})

    def closed_unanswered(self, data, timeout=SLACK_S):
        """Sends data on a new connection; True when the worker closes it without a byte."""
        with connect(stack.fcgi_socket) as sock:
            sock.sendall(data)
            return closed_by_peer(sock, timeout)

    def test_the_length_reproducer_sent_100_times_kills_nothing(self):
        for _ in range(100):
            self.assertTrue(self.closed_unanswered(
                begin() + record(PARAMS, 1, lying_pair(0x7FFFFFFE, 0))))
        self.rose_by(malformed=100)

    def test_lengths_around_2_31_and_past_2_32(self):
        for name, value in ((0x7FFFFFFF, 0), (0, 1), (0x7FFFFFFF, 0x7FFFFFFF)):
            self.assertTrue(self.closed_unanswered(
                begin() + record(PARAMS, 1, lying_pair(name, value))), (name, value))
        # 0x80000000 in the 4-byte form is a length of 0: a pair of two empty strings is fine
        # on its own, so it is sent with a name length past its record.
        self.assertTrue(self.closed_unanswered(
            begin() + record(PARAMS, 1, struct.pack("!II", 0x80000000, 0x80000005))))
        self.rose_by(malformed=4)

    def test_management_records_and_odd_ids(self):
        get_values = fcgi_client.encode_params({"FCGI_MAX_CONNS": ""})
        self.assertTrue(self.closed_unanswered(record(GET_VALUES, 0, get_values) * 8))
        self.assertTrue(self.closed_unanswered(
            record(BEGIN_REQUEST, 0, struct.pack("!HB5x", 1, 0))))  # request id 0
        self.assertTrue(self.closed_unanswered(begin() + record(12, 1)))  # unknown type
        self.assertTrue(self.closed_unanswered(begin() + begin()))  # second BEGIN, busy
        self.rose_by(management_record=3, malformed=1)

    def test_a_truncated_header_is_closed_at_the_read_deadline(self):
        with connect(stack.fcgi_socket) as sock:
            sock.sendall(begin()[:5])
            sent = time.monotonic()
            self.assertTrue(closed_by_peer(sock, READ_TIMEOUT_S + SLACK_S))
            self.assertGreaterEqual(time.monotonic() - sent, READ_TIMEOUT_S - 0.1)
        self.rose_by(deadline=1)

    def test_parameters_that_never_end_are_cut_before_a_mebibyte(self):
        before = rss_kb(self.pids[1:])
        pair = fcgi_client.encode_params({"X": "v" * 1000})
        sent, refused = 0, None
        with connect(stack.fcgi_socket) as sock:
            # Blocking writes: with a timeout, Python waits for the socket to be writable
            # before each one, which a unix socket is only while a quarter of its buffer is in
            # use, so the writer would stop long before the bound, and meet the read deadline.
            # A blocking write ends when the worker closes the connection.
            sock.settimeout(None)
            sock.sendall(begin())
            deadline = time.monotonic() + 4
            try:
                while time.monotonic() < deadline:
                    sock.sendall(record(PARAMS, 1, pair))
                    sent += len(pair)
            except OSError as e:  # the worker closed it
                refused = e
        self.assertIsNotNone(refused, f"{sent} bytes of parameters went out unrefused")
        self.assertLess(sent, 1 << 20)
        self.assertLess(rss_kb(self.pids[1:]) - before, 32 * 1024)
        self.rose_by(too_large=1)

    def test_a_peer_that_streams_after_its_request_is_closed_after_its_answer(self):
        with connect(stack.fcgi_socket) as sock:
            sock.sendall(request_bytes(request_params("/healthz")))
            status, _, _ = read_response(sock)
            self.assertEqual(status, 200)
            stop = time.monotonic() + READ_TIMEOUT_S + SLACK_S
            cut = None
            try:
                while time.monotonic() < stop:
                    sock.sendall(b"\x01" * 4096)
            except OSError as e:
                cut = e
            self.assertIsInstance(cut, (BrokenPipeError, ConnectionResetError))
        self.rose_by()


class Stdin(unittest.TestCase):
    def test_a_body_within_its_bound_is_read_and_the_request_answered(self):
        with connect(stack.fcgi_socket) as sock:
            whole = request_bytes(request_params("/healthz"))
            end = record(STDIN, 1)
            sock.sendall(whole[:-len(end)] + record(STDIN, 1, b"x" * 1000) + end)
            self.assertEqual(read_response(sock)[0], 200)

    def test_a_body_over_its_bound_is_refused(self):
        before = rejected()["too_large"]
        with connect(stack.fcgi_socket) as sock:
            whole = request_bytes(request_params("/healthz"))
            end = record(STDIN, 1)
            sock.sendall(whole[:-len(end)] + record(STDIN, 1, b"x" * 5000))
            self.assertTrue(closed_by_peer(sock, SLACK_S))
        self.assertEqual(rejected()["too_large"], before + 1)


if __name__ == "__main__":
    unittest.main()
