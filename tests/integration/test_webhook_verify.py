"""The verification code docs/webhooks.md gives webhook receivers, run as the page shows it:

* Python: the page's verify() (the block the tests' receiver, webhook_receiver.py, executes) on
  the signatures of tests/fixtures/webhook_signatures.json, the very digests the C++ signer's
  unit test (tests/unit/test_webhook_signature.cpp) expects, and on its verdict cases;

No stack."""

import ast
import hashlib
import hmac
import json
import re
import unittest
from pathlib import Path

import webhook_receiver

REPO = Path(__file__).resolve().parents[2]
DOCUMENT = REPO / "docs" / "webhooks.md"
VECTORS_FILE = REPO / "tests" / "fixtures" / "webhook_signatures.json"
VECTORS = json.loads(VECTORS_FILE.read_text())
CPP_TEST = REPO / "tests" / "unit" / "test_webhook_signature.cpp"
verify = webhook_receiver.verify


def blocks(language):
    return re.findall(rf"^```{language}\n(.*?)^```$", DOCUMENT.read_text(), re.S | re.M)


class PythonVerify(unittest.TestCase):
    def test_the_receiver_runs_the_documents_block(self):
        self.assertEqual(verify.__code__.co_filename, f"{DOCUMENT} (verify)")
        [block] = [b for b in blocks("python") if "\ndef verify(" in b]
        self.assertIn("hmac.compare_digest(", block)
        # Nothing but imports and the function: a receiver copies it whole.
        self.assertEqual([type(node).__name__ for node in ast.parse(block).body],
                         ["Import"] * 4 + ["FunctionDef"])

    def test_the_cpp_signers_digests_are_these(self):
        cpp = CPP_TEST.read_text()
        ours = [v["signature"] for v in VECTORS["signatures"] if v["in_cpp_test"]]
        self.assertEqual(sorted(re.findall(r'"(v1=[0-9a-f]{64})"', cpp)), sorted(ours))
        for v in VECTORS["signatures"]:  # and they are Python's hmac
            digest = hmac.new(v["secret"].encode(), f"{v['timestamp']}.".encode()
                              + v["body"].encode(), hashlib.sha256).hexdigest()
            self.assertEqual(v["signature"], "v1=" + digest)

    def test_each_signature_verifies_at_its_timestamp_and_not_changed(self):
        for v in VECTORS["signatures"]:
            body, timestamp = v["body"].encode(), str(v["timestamp"])
            self.assertEqual(verify(v["secret"], timestamp, v["signature"], body,
                                    now=v["timestamp"]), "valid")
            changed = v["signature"][:-1] + ("1" if v["signature"].endswith("0") else "0")
            self.assertEqual(verify(v["secret"], timestamp, changed, body, now=v["timestamp"]),
                             "mismatch")

    def test_the_verdict_cases(self):
        self.assertEqual(len(VECTORS["verdicts"]), 23)
        for i, v in enumerate(VECTORS["verdicts"]):
            self.assertEqual(verify(v["secret"], v["timestamp"], v["signature"],
                                    v["body"].encode(), now=v["now"], tolerance=v["tolerance"]),
                             v["verdict"], f"verdicts[{i}]")

    def test_the_default_clock_is_now(self):
        body = b'{"seq":1}'
        for age, verdict in ((0, "valid"), (-30, "valid"), (3600, "outside_tolerance")):
            timestamp = str(int(webhook_receiver.time.time()) - age)
            signature = "v1=" + hmac.new(b"k", f"{timestamp}.".encode() + body,
                                         hashlib.sha256).hexdigest()
            self.assertEqual(verify("k", timestamp, signature, body), verdict)


if __name__ == "__main__":
    unittest.main()
