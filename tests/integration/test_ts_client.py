"""A real client, proven against the stack: the TypeScript types generated from
docs/openapi.yaml (openapi-typescript), type-checked strictly (tsc), and tools/client/
client-test.mts, which calls every endpoint of the document, its errors and a CORS preflight
with openapi-fetch only and compares every answer with the fixture, run three ways:

* straight to nginx;
* through Prism's validating proxy with --errors (Prism answers 422 instead of passing a request
  that breaks the document, and 500 instead of an answer that breaks it);
* through Prism without --errors (Prism passes everything and names violations in an
  `sl-violations` header).

Zero violations either way for every request the document accepts (status and order in any
case, page_size above 100 included, page_id and page_size up to 2^64 - 1 with any number of
leading zeros), and every request it does not accept flagged by Prism (page_size=1e2, +5, 0x10,
1.0 or 2^64 among them: the service's 400). The client counts the violations Prism reports and
prints that number. Control runs of Prism on a copy of the document that forbids a slug the
service answers show that Prism does check the answers and that the client's count sees them.
docs/tour.md's TypeScript example is type-checked too. npm packages: tools/client/install
(scripts/install-deps runs it).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request
from pathlib import Path

import harness
from fixture import Fixture
from harness import Stack

CLIENT = harness.REPO / "tools" / "client"
MODULES = CLIENT / "node_modules"
DOCUMENT = harness.REPO / "docs" / "openapi.yaml"
NODE = shutil.which("node") or "node"
TSC = MODULES / "typescript" / "bin" / "tsc"
OPENAPI_TS = MODULES / "openapi-typescript" / "bin" / "cli.js"
PRISM = MODULES / "@stoplight" / "prism-cli" / "dist" / "index.js"

# What one run of client-test.mts sends (the same list in every mode), and the preflights it
# sends with fetch when it talks to nginx directly (Prism routes only the document's operations).
REQUESTS = 77
PREFLIGHTS = 3
SUMMARY = re.compile(r"^ts-client: mode=(\w+) requests=(\d+) preflights=(\d+) checks=(\d+) "
                     r"violations=(\d+) endpoints=(\S+)$", re.M)

fixture = Fixture()
stack = None
work = None
prisms = {}
_built = None


def documented_paths():
    """The paths of docs/openapi.yaml (the keys under `paths:`)."""
    return sorted(re.findall(r"^  (/v1/\S*):$", DOCUMENT.read_text(), re.M))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prism:
    """`prism proxy DOCUMENT UPSTREAM` on a free loopback port, its log in work/."""

    def __init__(self, name, document, upstream, errors):
        self.name = name
        self.log_path = work / f"prism-{name}.log"
        self.process = None
        for attempt in range(3):  # the free port can be taken between picking and binding
            self.port = _free_port()
            log = open(self.log_path, "wb")
            # Its own process group, so that stop() ends Prism and anything it starts; `timeout`
            # bounds it even if this test is killed before tearDownModule.
            self.process = subprocess.Popen(
                ["timeout", "--kill-after=5", "600", NODE, str(PRISM), "proxy", str(document),
                 upstream, "--host", "127.0.0.1", "--port", str(self.port),
                 "--errors" if errors else "--errors=false", "--cors=false",
                 "--multiprocess=false"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                cwd=work)
            log.close()
            if self.wait_listening():
                return
            self.stop()
            if attempt == 2:
                raise harness.StackError(f"Prism ({name}) did not start:\n{self.log()[-3000:]}")

    def wait_listening(self, timeout=90):
        """Whether Prism says it listens within `timeout` seconds (False: it exited, or not)."""
        harness.wait_for(lambda: self.process.poll() is not None
                         or "Prism is listening" in self.log(), timeout, 0.2)
        return self.process.poll() is None and "Prism is listening" in self.log()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass


def setUpModule():
    global stack, work
    if not (PRISM.exists() and TSC.exists() and OPENAPI_TS.exists()):
        raise AssertionError(f"{MODULES} is not installed: run tools/client/install "
                             "(scripts/install-deps runs it)")
    work = Path(tempfile.mkdtemp(prefix="connector-ts-client-"))
    try:
        # No per-client rate: the scripted client and prism send their bursts from 127.0.0.1
        # (the limits themselves: test_nginx, test_write_limits).
        stack = Stack(fixture=fixture.path, nginx_env={"NGINX_CONNECTOR_RATE": "off"})
        # A document that forbids a slug the service answers (UNITIoT's): the control run.
        control = work / "openapi-control.yaml"
        text = DOCUMENT.read_text()
        slug_enum = "      enum: [unitcore, unitiot, unitcoretestnet, unitiottestnet]\n"
        assert text.count(slug_enum) == 1, "the Slug schema changed: update the control document"
        control.write_text(text.replace(slug_enum, slug_enum.replace(" unitiot,", "")))
        for name, document, errors in (("errors", DOCUMENT, True), ("report", DOCUMENT, False),
                                       ("control", control, True),
                                       ("control-report", control, False)):
            prisms[name] = Prism(name, document, stack.base_url, errors)
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    for prism in prisms.values():
        prism.stop()
    try:
        if stack is not None:
            stack.stop()
    finally:
        if work is not None and os.environ.get("KEEP_STACK") != "1":
            shutil.rmtree(work, ignore_errors=True)


def run(args, timeout, **kwargs):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)


def readme_example():
    """The TypeScript example of docs/tour.md's "Typed client" section."""
    section = harness.REPO.joinpath("docs/tour.md").read_text().split("## Typed client", 1)[1]
    return re.search(r"```ts\n(.*?)```", section, re.S).group(1)


def build():
    """Generates the types into work/gen, type-checks client-test.mts and docs/tour.md's example
    with tsc --noEmit (strict), then compiles the client test into work/js. Once per module;
    returns the three CompletedProcesses (None for a step not reached)."""
    global _built
    if _built is not None:
        return _built
    gen, out = work / "gen", work / "js"
    gen.mkdir(exist_ok=True)
    # The compiled test imports openapi-fetch, and tsc looks for @types/node, from here.
    (work / "node_modules").symlink_to(MODULES)
    generate = run([NODE, OPENAPI_TS, DOCUMENT, "-o", gen / "schema.d.ts"], timeout=120)
    (gen / "readme-example.mts").write_text(readme_example())
    # rootDirs: the generated folder counts as tools/client, so `./schema.js` finds schema.d.ts.
    files = [str(CLIENT / "client-test.mts"), str(gen / "schema.d.ts")]
    options = {"rootDirs": [str(CLIENT), str(gen)]}
    (work / "tsconfig-check.json").write_text(json.dumps({
        "extends": str(CLIENT / "tsconfig.json"), "compilerOptions": {**options, "noEmit": True},
        "files": [*files, str(gen / "readme-example.mts")]}))
    (work / "tsconfig.json").write_text(json.dumps({
        "extends": str(CLIENT / "tsconfig.json"),
        "compilerOptions": {**options, "rootDir": str(CLIENT), "outDir": str(out)},
        "files": files}))
    check = compile_ = None
    if generate.returncode == 0:
        check = run([NODE, TSC, "-p", work / "tsconfig-check.json", "--noEmit"], timeout=300)
        if check.returncode == 0:
            compile_ = run([NODE, TSC, "-p", work / "tsconfig.json"], timeout=300)
    _built = (generate, check, compile_)
    return _built


def client_test(base_url, prism_mode):
    """Runs the compiled client test; returns (CompletedProcess, summary match or None)."""
    generate, check, compile_ = build()
    if compile_ is None or compile_.returncode != 0:
        raise AssertionError("the client test did not compile (see the type-check test)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLIENT_TEST_")}
    env.update({"CLIENT_TEST_BASE_URL": base_url, "CLIENT_TEST_FIXTURE": str(fixture.path),
                "CLIENT_TEST_PRISM": prism_mode})
    result = run([NODE, work / "js" / "client-test.mjs"], timeout=180, env=env)
    return result, SUMMARY.search(result.stdout)


class TypedClient(unittest.TestCase):
    def test_types_generate_and_the_client_test_type_checks_strictly(self):
        generate, check, compile_ = build()
        self.assertEqual(generate.returncode, 0, generate.stdout + generate.stderr)
        schema = (work / "gen" / "schema.d.ts").read_text()
        for path in documented_paths():
            self.assertIn(f'"{path}": {{', schema)
        # The request types say what the service accepts: status and order in any case (a
        # pattern, so a string); page_id, page_size and the id filters an unsigned decimal up to
        # 2^64 - 1 (a pattern, so a string: Prism does not coerce 1e2 or +5 to a number then).
        self.assertIn('status?: components["schemas"]["HistoryStatusParameter"];', schema)
        self.assertRegex(schema, r'HistoryStatusParameter: string;')
        for name in ("page_id", "page_size", "pair_id", "source_asset_id", "destination_asset_id"):
            self.assertIn(f'{name}?: components["schemas"]["Uint64Parameter"];', schema)
        self.assertRegex(schema, r'Uint64Parameter: string;')
        self.assertIsNotNone(check, "not type-checked")
        self.assertEqual((check.returncode, check.stdout + check.stderr), (0, ""))
        self.assertEqual((compile_.returncode, compile_.stdout + compile_.stderr), (0, ""))
        self.assertTrue((work / "js" / "client-test.mjs").is_file())
        self.assertIn('api.GET("/v1/history"', readme_example())

    def assert_run(self, result, summary, mode, preflights):
        output = (result.stdout + result.stderr)[-6000:]
        self.assertIsNotNone(summary, output)
        # The violations the client counted (Prism's sl-violations entries and its refusals of
        # requests the document accepts), each named on stderr; then every check passed.
        self.assertEqual(summary.group(5), "0", output)
        self.assertEqual(result.returncode, 0, output)
        self.assertEqual(summary.group(1), mode)
        self.assertEqual(int(summary.group(2)), REQUESTS)
        self.assertEqual(int(summary.group(3)), preflights)
        # Each answer gets several exact checks (status, headers, the whole body).
        self.assertGreater(int(summary.group(4)), 6 * REQUESTS)
        self.assertEqual(sorted(summary.group(6).split(",")), documented_paths())

    def test_client_against_the_stack(self):
        result, summary = client_test(stack.base_url, "")
        self.assert_run(result, summary, "direct", PREFLIGHTS)

    def assert_through_prism(self, name):
        prism = prisms[name]
        before = prism.log().count("Request received")
        result, summary = client_test(prism.url, name)
        self.assert_run(result, summary, name, 0)
        # Every request went through Prism.
        self.assertEqual(prism.log().count("Request received") - before, REQUESTS)

    def test_through_prism_with_errors(self):
        self.assert_through_prism("errors")

    def test_through_prism_reporting_violations_in_a_header(self):
        self.assert_through_prism("report")


class PrismControl(unittest.TestCase):
    def test_prism_flags_an_answer_the_document_does_not_allow(self):
        """The same checks are not blind to answers: with a document that forbids a slug the
        service answers, Prism (--errors) replaces the answer with its 500 and names the field."""
        url = prisms["control"].url + "/v1/networks"
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(url, timeout=30)
        r = caught.exception
        self.assertEqual(r.code, 500)
        self.assertEqual(r.headers["Content-Type"], "application/problem+json")
        self.assertEqual(json.loads(r.read())["type"],
                         "https://stoplight.io/prism/errors#VIOLATIONS")
        violations = json.loads(r.headers["sl-violations"])
        self.assertEqual([(v["location"], v["severity"], v["code"]) for v in violations],
                         [(["response", "body", "networks", "1", "slug"], "Error", "enum")])
        # The real document allows it: the same request through the real Prism is the answer.
        with urllib.request.urlopen(prisms["errors"].url + "/v1/networks", timeout=30) as ok:
            self.assertEqual(ok.status, 200)
            self.assertIsNone(ok.headers["sl-violations"])
            self.assertEqual(json.loads(ok.read())["networks"][1]["slug"], "unitiot")

    def test_the_client_counts_the_violations_prism_reports(self):
        """violations=N is what the client saw, not a constant: through Prism without --errors on
        the control document every answer naming UNITIoT (and every request naming it) is still
        the service's and passes the checks, but each violation Prism names in sl-violations is
        counted and listed, and the run fails."""
        result, summary = client_test(prisms["control-report"].url, "report")
        self.assertIsNotNone(summary, (result.stdout + result.stderr)[-6000:])
        self.assertGreater(int(summary.group(5)), 0)
        listed = re.findall(r"^violation: .*$", result.stderr, re.M)
        self.assertEqual(len(listed), int(summary.group(5)), result.stderr[-6000:])
        self.assertIn("violation: GET /v1/networks: 200 response.body.networks.1.slug ",
                      result.stderr)
        # Only the violations failed the run: every request was sent and every check passed.
        self.assertEqual(int(summary.group(2)), REQUESTS)
        self.assertEqual(result.returncode, 1)
        self.assertNotIn("AssertionError", result.stderr)
        # With --errors, Prism's refusal of an answer is counted too (the run stops at its check).
        result, summary = client_test(prisms["control"].url, "errors")
        self.assertIsNotNone(summary, (result.stdout + result.stderr)[-6000:])
        self.assertGreaterEqual(int(summary.group(5)), 1)
        self.assertIn("violation: GET /v1/networks: 500 response.body.networks.1.slug ",
                      result.stderr)
        self.assertEqual(result.returncode, 1)


if __name__ == "__main__":
    unittest.main()
