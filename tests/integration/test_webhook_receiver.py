"""The tests' webhook receiver (webhook_receiver.py) itself, with no deliverer: requests signed
right and wrong, sent with http.client over TLS verified against the receiver's own CA, and what
it records for each, exactly; its behaviours (a status, a delay, a dropped answer), going down
and coming back on its port, plain http, and the same receiver as processes of its own
(webhook_receiver_process.py, as scripts/bench-webhooks runs it)."""

import hashlib
import hmac
import http.client
import json
import shutil
import socket
import ssl
import tempfile
import time
import unittest
import unittest.mock
from pathlib import Path

from webhook_receiver import DELIVERY_FIELDS, WebhookReceiver
from webhook_receiver_process import ReceiverProcess

SECRET = "whsec_" + "5e" * 32
RECORD = {"id": "2997", "hash": "83479d2d0d29090cdb50f255be066614f485a7205efd2c16d4de1b867152390a",
          "status": "Pending", "destination_address": "0x9030707Dfbea6f6f7e52fb646461C6472B17d669"}


def delivery(seq=123, subscription=7, attempt=1, status="Pending"):
    """The body the deliverer sends for a change (docs/webhooks.md, "The request")."""
    return json.dumps({"event": f"transfer.{status.lower()}", "seq": seq,
                       "subscription": subscription, "attempt": attempt,
                       "record": {**RECORD, "status": status}}, separators=(",", ":")).encode()


def headers(body, secret=SECRET, timestamp=None, event_id="7-123"):
    timestamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return {"Content-Type": "application/json", "User-Agent": "unit-connector-webhooks/1",
            "Connector-Event-Id": event_id, "Connector-Timestamp": timestamp,
            "Connector-Signature": "v1=" + digest.hexdigest()}


def connect(test, receiver, host="localhost"):
    """A connection to the receiver (TLS verified against its CA), closed after the test."""
    if receiver.tls:
        context = ssl.create_default_context(cafile=receiver.ca_file)
        connection = http.client.HTTPSConnection(host, receiver.port, timeout=30,
                                                 context=context)
    else:
        connection = http.client.HTTPConnection(host, receiver.port, timeout=30)
    test.addCleanup(connection.close)
    return connection


def post(connection, path, body, sent_headers):
    connection.request("POST", path, body, sent_headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


class InProcess(unittest.TestCase):
    def setUp(self):
        self.receiver = WebhookReceiver().start()
        self.addCleanup(self.receiver.stop)
        self.receiver.register("/hooks/7", SECRET)

    def test_a_signed_delivery_is_recorded_exactly(self):
        body = delivery()
        sent = headers(body, timestamp=1795772374)
        with unittest.mock.patch("time.time", return_value=1795772400.5):
            status, text = post(connect(self, self.receiver), "/hooks/7", body, sent)
        self.assertEqual((status, text), (200, b"ok\n"))
        [recorded] = self.receiver.deliveries()
        self.assertEqual(tuple(recorded), DELIVERY_FIELDS)
        self.assertEqual({k: v for k, v in recorded.items() if k != "monotonic"}, {
            "process": 0, "path": "/hooks/7", "method": "POST", "event_id": "7-123",
            "timestamp": "1795772374", "content_type": "application/json",
            "user_agent": "unit-connector-webhooks/1", "event": "transfer.pending", "seq": 123,
            "subscription": 7, "attempt": 1, "record_hash": RECORD["hash"],
            "record_status": "Pending", "verdict": "valid", "signature_ok": True, "answer": 200,
            "time": 1795772400.5, "body": body.decode()})
        self.assertEqual(self.receiver.bad_signatures(), 0)

    def test_every_wrong_request_is_refused_recorded_and_counted(self):
        body = delivery()
        cases = [("/hooks/7", headers(body, secret="whsec_other"), 401, "mismatch"),
                 ("/hooks/7", headers(body, timestamp=int(time.time()) - 301), 401,
                  "outside_tolerance"),
                 ("/hooks/7", {**headers(body), "Connector-Signature": "sha256=00"}, 401,
                  "malformed"),
                 ("/hooks/7", {"Content-Type": "application/json"}, 401, "malformed"),
                 ("/hooks/8", headers(body), 400, "unknown_path")]
        connection = connect(self, self.receiver)
        for path, sent, status, _ in cases:
            self.assertEqual(post(connection, path, body, sent), (status, b"refused\n"))
        # The body checked is the one received: the signature of another body does not pass.
        self.assertEqual(post(connection, "/hooks/7", delivery(seq=124), headers(body))[0], 401)
        recorded = self.receiver.deliveries()
        self.assertEqual([(d["path"], d["answer"], d["verdict"], d["signature_ok"], d["seq"])
                          for d in recorded],
                         [(path, status, verdict, False, 123)
                          for path, _, status, verdict in cases]
                         + [("/hooks/7", 401, "mismatch", False, 124)])
        self.assertEqual(self.receiver.bad_signatures(), 6)
        self.assertEqual(self.receiver.deliveries("/hooks/8")[0]["event_id"], "7-123")

    def test_one_kept_connection_many_deliveries_and_both_names_verify(self):
        for host in ("localhost", "127.0.0.1"):
            connection = connect(self, self.receiver, host)
            for seq in range(1, 4):
                body = delivery(seq=seq)
                self.assertEqual(post(connection, "/hooks/7", body, headers(body))[0], 200)
                if seq == 1:
                    first = connection.sock
                self.assertIs(connection.sock, first)  # HTTP/1.1 keep-alive: the same socket
        self.assertEqual([d["seq"] for d in self.receiver.wait_deliveries(6)], [1, 2, 3] * 2)
        # The certificate is the receiver's CA's, not one the system trusts.
        with self.assertRaises(ssl.SSLCertVerificationError):
            untrusted = http.client.HTTPSConnection("localhost", self.receiver.port, timeout=30)
            self.addCleanup(untrusted.close)
            untrusted.connect()

    def test_behaviours_status_delay_and_drop(self):
        connection = connect(self, self.receiver)
        body = delivery()
        self.receiver.set_behaviour("/hooks/7", status=503)
        self.assertEqual(post(connection, "/hooks/7", body, headers(body)), (503, b"refused\n"))
        self.receiver.set_behaviour("/hooks/7", delay=0.3)
        started = time.monotonic()
        self.assertEqual(post(connection, "/hooks/7", body, headers(body))[0], 200)
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.receiver.set_behaviour("/hooks/7", drop=True)
        with self.assertRaises(http.client.RemoteDisconnected):
            post(connection, "/hooks/7", body, headers(body))
        self.receiver.set_behaviour("/hooks/7")
        self.assertEqual(post(connect(self, self.receiver), "/hooks/7", body, headers(body))[0],
                         200)
        self.assertEqual([(d["answer"], d["signature_ok"]) for d in self.receiver.deliveries()],
                         [(503, True), (200, True), ("drop", True), (200, True)])

    def test_stop_ends_a_delayed_answer(self):
        self.receiver.set_behaviour("/hooks/7", delay=3600)
        body = delivery()
        context = ssl.create_default_context(cafile=self.receiver.ca_file)
        with socket.create_connection(("127.0.0.1", self.receiver.port), timeout=30) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers(body).items())
            tls.sendall(f"POST /hooks/7 HTTP/1.1\r\nHost: localhost\r\n{head}"
                        f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            [recorded] = self.receiver.wait_deliveries(1)
            self.assertEqual(recorded["answer"], 200)  # the answer it will give, once delayed
            self.receiver.stop()
            self.assertEqual(tls.recv(100), b"")  # closed, unanswered

    def test_down_refuses_and_closes_then_up_on_the_same_port(self):
        connection = connect(self, self.receiver)
        body = delivery()
        self.assertEqual(post(connection, "/hooks/7", body, headers(body))[0], 200)
        port = self.receiver.port
        self.receiver.down()
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=30)
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError, ssl.SSLError)):
            post(connection, "/hooks/7", body, headers(body))  # the kept connection was closed
        self.receiver.up()
        self.assertEqual(self.receiver.port, port)
        self.assertEqual(post(connect(self, self.receiver), "/hooks/7", body, headers(body))[0],
                         200)
        self.assertEqual(len(self.receiver.deliveries()), 2)

    def test_expect_continue_and_a_chunked_body(self):
        body = delivery(seq=5)
        context = ssl.create_default_context(cafile=self.receiver.ca_file)
        with socket.create_connection(("127.0.0.1", self.receiver.port), timeout=30) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers(body).items())
            tls.sendall(f"POST /hooks/7 HTTP/1.1\r\nHost: localhost\r\n{head}"
                        f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n".encode())
            self.assertEqual(tls.recv(25), b"HTTP/1.1 100 Continue\r\n\r\n")
            tls.sendall(body)
            chunked = f"{len(body) - 10:x}\r\n".encode() + body[:-10] + b"\r\n" + \
                f"{10:x}\r\n".encode() + body[-10:] + b"\r\n0\r\n\r\n"
            tls.sendall(f"POST /hooks/7 HTTP/1.1\r\nHost: localhost\r\n{head}"
                        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
                        + chunked)
            answers = b""
            while chunk := tls.recv(4096):
                answers += chunk
        self.assertEqual(answers.count(b"HTTP/1.1 200 OK\r\n"), 2)
        self.assertTrue(answers.endswith(b"Connection: close\r\n\r\nok\n"), answers)
        self.assertEqual([(d["seq"], d["verdict"]) for d in self.receiver.deliveries()],
                         [(5, "valid"), (5, "valid")])


class PlainHttp(unittest.TestCase):
    def test_plain_http(self):
        receiver = WebhookReceiver(tls=False).start()
        self.addCleanup(receiver.stop)
        receiver.register("/hook", SECRET)
        self.assertIsNone(receiver.ca_file)
        self.assertEqual(receiver.url("/hook"), f"http://127.0.0.1:{receiver.port}/hook")
        body = delivery()
        self.assertEqual(post(connect(self, receiver), "/hook", body, headers(body))[0], 200)
        self.assertEqual(receiver.deliveries()[0]["verdict"], "valid")


class AsProcesses(unittest.TestCase):
    """Two processes on one port, driven through the state directory, as the bench runs it."""

    def test_two_processes_share_the_port_the_log_and_the_control(self):
        state = tempfile.mkdtemp(prefix="webhook-receiver-test-")
        self.addCleanup(shutil.rmtree, state, True)
        receiver = ReceiverProcess(state, processes=2).start()
        self.addCleanup(receiver.stop)
        self.assertEqual(receiver.ca_file, f"{state}/ca.pem")
        self.assertEqual(len(json.loads(Path(state, "ready").read_text())["pids"]), 2)
        receiver.register("/hooks/7", SECRET)
        connections = [connect(self, receiver) for _ in range(8)]
        for seq, connection in enumerate(connections, 1):
            body = delivery(seq=seq)
            self.assertEqual(post(connection, "/hooks/7", body, headers(body))[0], 200)
        self.assertEqual(post(connections[0], "/hooks/7", body, headers(body, "bad"))[0], 401)
        receiver.set_behaviour("/hooks/7", status=500)
        self.assertEqual(post(connect(self, receiver), "/hooks/7", body, headers(body))[0], 500)
        receiver.down()
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", receiver.port), timeout=30)
        receiver.up()
        receiver.set_behaviour("/hooks/7")
        self.assertEqual(post(connect(self, receiver), "/hooks/7", body, headers(body))[0], 200)
        recorded = receiver.wait_deliveries(11)
        self.assertEqual([(d["seq"], d["answer"]) for d in recorded],
                         [(seq, 200) for seq in range(1, 9)] + [(8, 401), (8, 500), (8, 200)])
        self.assertEqual({d["body"] for d in recorded}, {None})  # not kept unless asked
        self.assertEqual(receiver.bad_signatures(), 1)
        self.assertLessEqual({d["process"] for d in recorded}, {0, 1})


if __name__ == "__main__":
    unittest.main()
