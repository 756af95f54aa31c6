"""The verification code docs/webhooks.md gives webhook receivers, run as the page shows it:

* Python: the page's verify() (the block the tests' receiver, webhook_receiver.py, executes) on
  the signatures of tests/fixtures/webhook_signatures.json, the very digests the C++ signer's
  unit test (tests/unit/test_webhook_signature.cpp) expects, and on its verdict cases;
* TypeScript: tools/client/webhooks.mts is the page's block, verbatim; it and webhooks-test.mts
  compile with tsc --strict and the test passes on the same vectors (and fails, naming the case,
  on a wrong one); the page's receiver example type-checks.

No stack: tools/client's npm packages only (tools/client/install)."""

import ast
import hashlib
import hmac
import json
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import webhook_receiver

REPO = Path(__file__).resolve().parents[2]
DOCUMENT = REPO / "docs" / "webhooks.md"
VECTORS_FILE = REPO / "tests" / "fixtures" / "webhook_signatures.json"
VECTORS = json.loads(VECTORS_FILE.read_text())
CPP_TEST = REPO / "tests" / "unit" / "test_webhook_signature.cpp"
CLIENT = REPO / "tools" / "client"
MODULES = CLIENT / "node_modules"
TSC = MODULES / "typescript" / "bin" / "tsc"
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


class TypeScriptVerify(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not TSC.exists():
            raise AssertionError(f"{MODULES} is not installed: run tools/client/install")
        cls.work = Path(tempfile.mkdtemp(prefix="connector-webhook-verify-"))
        (cls.work / "node_modules").symlink_to(MODULES)
        # The page's example imports ./webhooks.mjs: it sits beside webhooks.mts (rootDirs).
        example = cls.work / "gen" / "webhook-receiver-example.mts"
        example.parent.mkdir()
        example.write_text(blocks("ts")[1])
        options = {"rootDirs": [str(CLIENT), str(example.parent)]}
        (cls.work / "tsconfig-example.json").write_text(json.dumps({
            "extends": str(CLIENT / "tsconfig.json"), "compilerOptions": {**options,
                                                                        "noEmit": True},
            "files": [str(example), str(CLIENT / "webhooks.mts")]}))
        (cls.work / "tsconfig.json").write_text(json.dumps({
            "extends": str(CLIENT / "tsconfig.json"),
            "compilerOptions": {"rootDir": str(CLIENT), "outDir": str(cls.work / "js")},
            "files": [str(CLIENT / "webhooks-test.mts")]}))
        cls.built = cls.tsc(cls.work / "tsconfig.json")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @staticmethod
    def tsc(config):
        return subprocess.run(["node", str(TSC), "-p", str(config)], capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)

    def run_test(self, vectors_file):
        self.assertEqual((self.built.returncode, self.built.stdout + self.built.stderr), (0, ""))
        return subprocess.run(["node", str(self.work / "js" / "webhooks-test.mjs"),
                               str(vectors_file)], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)

    def test_the_document_shows_webhooks_mts_verbatim(self):
        source = (CLIENT / "webhooks.mts").read_text()
        self.assertEqual(blocks("ts")[0], source[source.index("import "):])
        self.assertIn("timingSafeEqual(received, expected)", source)

    def test_the_vectors(self):
        result = self.run_test(VECTORS_FILE)
        checks = 2 * len(VECTORS["signatures"]) + len(VECTORS["verdicts"])
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (0, f"webhooks-test: checks={checks} failures=0\n", ""))

    def test_a_wrong_vector_fails_the_run(self):
        """The control: the test is not blind. One verdict changed, one failure named."""
        wrong = json.loads(VECTORS_FILE.read_text())
        wrong["verdicts"][3]["verdict"] = "valid"  # now 1301, the tolerance 300: outside
        path = self.work / "wrong.json"
        path.write_text(json.dumps(wrong))
        result = self.run_test(path)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.splitlines()[0],
                         "failure: verdicts[3]: outside_tolerance, not valid")
        self.assertTrue(result.stdout.endswith(" failures=1\n"), result.stdout)

    def test_the_documents_receiver_example_type_checks(self):
        self.assertIn("verifyWebhook(secret, request.headers", blocks("ts")[1])
        checked = self.tsc(self.work / "tsconfig-example.json")
        self.assertEqual((checked.returncode, checked.stdout + checked.stderr), (0, ""))


if __name__ == "__main__":
    unittest.main()
