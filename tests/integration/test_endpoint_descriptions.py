"""The endpoint descriptions (src/api/endpoints.h, one per endpoint file) against what repeats
them outside the code: docs/openapi.yaml (the paths, each parameter's name, whether it is
required, its schema by kind, its default, the echoed members of the answer, the Cache-Control
values, the statuses and the page size's limits) and nginx's cache rules in
nginx/connector-http.conf (the names a canonical request may carry, and the cache key's). A
parameter added in one place and forgotten in another fails here, as does a parameter of a kind
the tests have no valid sample of (fixture.py). What the documents and the benchmark's peers say
of /v1/history's filters is held to kHistoryFilters too (Documents, BenchPeers). No stack: the
build's tests/endpoints-dump prints the descriptions."""

import re
import unittest

import yaml

from fixture import Fixture, valid_params
from harness import REPO, endpoint_descriptions, nginx_contract

DESCRIPTIONS = endpoint_descriptions()
ENDPOINTS = {e["path"]: e for e in DESCRIPTIONS["endpoints"]}
DOCUMENT = yaml.safe_load((REPO / "docs" / "openapi.yaml").read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
NGINX_HTTP = (REPO / "nginx" / "connector-http.conf").read_text()


def follow(ref):
    node = DOCUMENT
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def schema_name(schema):
    """The component a parameter's schema names, directly or as the first of its allOf."""
    ref = schema.get("$ref") or schema.get("allOf", [{}])[0].get("$ref", "")
    return ref.rsplit("/", 1)[-1]


def documented_params(path):
    """{name: (required, schema component)} of the document's GET on path."""
    params = {}
    for param in DOCUMENT["paths"][path]["get"].get("parameters", []):
        if "$ref" in param:
            param = follow(param["$ref"])
        if param["in"] == "query":
            params[param["name"]] = (param.get("required", False), schema_name(param["schema"]))
    return params


def documented_defaults(path):
    """{name: its schema's default as text ("" when it has none)} of the document's GET on path."""
    defaults = {}
    for param in DOCUMENT["paths"][path]["get"].get("parameters", []):
        if "$ref" in param:
            param = follow(param["$ref"])
        if param["in"] == "query":
            defaults[param["name"]] = str(param["schema"].get("default", ""))
    return defaults


def ok_answer(path):
    answer = DOCUMENT["paths"][path]["get"]["responses"]["200"]
    return follow(answer["$ref"]) if "$ref" in answer else answer


# The endpoints whose answers nginx never caches, which scripts/nginx-contract leaves out: the
# event streams and long-polls (each answer for one client at one moment), and those whose
# description says so (the deposit addresses: connector-cache-rules.conf).
NGINX_CONTRACT = nginx_contract()
UNCACHED = {path for path, e in ENDPOINTS.items() if not NGINX_CONTRACT.front_cached(e)}


def map_block(name):
    """The body of nginx's `map ... $name { ... }`."""
    return re.search(r"map [^{]*\$" + name + r" \{\n(.*?)\n\}", NGINX_HTTP, re.S).group(1)


def names_in(text):
    """The parameter names a rule of the cache map spells: each followed by `=`, or listed in an
    alternation `(?:a|b)=`."""
    return set(re.findall(r"(?<![A-Za-z0-9_])([a-z]+(?:_[a-z]+)*)(?=\)?=|\|)", text))


class OpenApi(unittest.TestCase):
    def test_the_document_has_exactly_the_described_endpoints(self):
        self.assertEqual(set(DOCUMENT["paths"]), set(ENDPOINTS))

    def test_each_parameter_has_its_name_requirement_and_schema(self):
        for path, endpoint in ENDPOINTS.items():
            described = {p["name"]: (p["required"], p["schema"]) for p in endpoint["params"]}
            self.assertEqual(documented_params(path), described, path)
            for _, schema in described.values():
                self.assertIn(schema, SCHEMAS, path)

    def test_each_default_is_what_an_absent_parameter_stands_for(self):
        """A documented default is the value the description reads an absent parameter as
        (absent_means, which nginx's cache key writes out); a parameter without one documents
        none."""
        for path, endpoint in ENDPOINTS.items():
            self.assertEqual(documented_defaults(path),
                             {p["name"]: p["absent_means"] for p in endpoint["params"]}, path)

    def test_echoed_parameters_are_members_of_the_answer(self):
        echoed = set()
        for path, endpoint in ENDPOINTS.items():
            if endpoint["body"] != "json":
                media = {"event_stream": "text/event-stream", "long_poll": "application/json"}
                self.assertEqual(list(ok_answer(path)["content"]), [media[endpoint["body"]]],
                                 path)
                self.assertFalse([p for p in endpoint["params"] if p["echo"]], path)
                continue
            schema = ok_answer(path)["content"]["application/json"]["schema"]
            if "$ref" in schema:
                schema = follow(schema["$ref"])
            for param in endpoint["params"]:
                if param["echo"]:
                    echoed.add((path, param["echo"]))
                    self.assertIn(param["echo"], schema["required"], (path, param))
                    self.assertIn(param["echo"], schema["properties"], (path, param))
                    examples = ok_answer(path)["content"]["application/json"].get("examples", {})
                    for name, example in examples.items():
                        self.assertIn(param["echo"], example["value"], (path, name, param))
        # Every echo the descriptions name was checked, each a member of its own.
        self.assertEqual(echoed, {(path, p["echo"]) for path, e in ENDPOINTS.items()
                                  for p in e["params"] if p["echo"]})
        self.assertTrue(echoed)

    def test_the_cache_control_is_documented_exactly(self):
        """Each endpoint's 200 and 304 answers document exactly its described Cache-Control values
        (the usual one, and the one of final answers if it has one): the router sets them from
        the description (test_reference_endpoints checks what each endpoint answers)."""
        for path, endpoint in ENDPOINTS.items():
            described = {endpoint["cache_control"], endpoint["final_cache_control"]} - {""}
            responses = DOCUMENT["paths"][path]["get"]["responses"]
            # An event stream or a long-poll has no 304: not a document to revalidate.
            document = endpoint["body"] == "json"
            self.assertEqual("304" in responses, document, path)
            for status in ("200", "304") if document else ("200",):
                answer = responses[status]
                if "$ref" in answer:
                    answer = follow(answer["$ref"])
                header = answer["headers"]["Cache-Control"]
                if "$ref" in header:
                    header = follow(header["$ref"])
                schema = header["schema"]
                allowed = {schema["const"]} if "const" in schema else set(schema.get("enum", []))
                self.assertEqual(allowed, described, (path, status))

    def test_every_described_kind_has_sample_values(self):
        # The tests that need a valid value of a kind take it from fixture.py, one place: a
        # parameter of a kind it has no value for fails here first.
        samples = Fixture().sample_values()
        for path, endpoint in ENDPOINTS.items():
            for param in endpoint["params"]:
                self.assertTrue(samples.get(param["kind"]), (path, param))
            self.assertEqual(set(valid_params(endpoint, samples, required_only=False)),
                             {p["name"] for p in endpoint["params"]}, path)

    def test_statuses_and_page_size_limits_match(self):
        self.assertEqual(SCHEMAS["HistoryStatus"]["enum"], DESCRIPTIONS["statuses"])
        pattern = SCHEMAS["HistoryStatusParameter"]["pattern"]
        for status in DESCRIPTIONS["statuses"]:
            for spelling in (status, status.lower(), status.upper()):
                self.assertRegex(spelling, pattern)
        self.assertNotRegex("Pendin", pattern)
        page_size = next(p for p in DOCUMENT["paths"]["/v1/history"]["get"]["parameters"]
                         if p.get("name") == "page_size")
        limits = DESCRIPTIONS["page_size"]
        self.assertEqual(page_size["schema"]["default"], str(limits["default"]))
        self.assertIn(f"means the default ({limits['default']})", page_size["description"])
        self.assertIn(f"any value above {limits['max']} is accepted and served as {limits['max']}",
                      " ".join(page_size["description"].split()))


class NginxCacheRules(unittest.TestCase):
    def test_canonical_requests_carry_only_described_parameters(self):
        skip = map_block("connector_cache_skip")
        rules = {}
        for pattern in re.findall(r'^\s*"~\^(.*?)" "";$', skip, re.M):
            paths = re.match(r"/v1/(?:\(\?:([a-z|]+)\)|([a-z/]+))\\\?", pattern)
            for name in (paths.group(1) or paths.group(2)).split("|"):
                rules[f"/v1/{name}"] = pattern
        # Every endpoint nginx caches.
        self.assertEqual(set(rules), set(ENDPOINTS) - UNCACHED)
        for path, pattern in rules.items():
            query = pattern.split("\\?", 1)[1]
            described = {p["name"] for p in ENDPOINTS[path]["params"]}
            self.assertEqual(names_in(query), described, path)

    def test_the_cache_key_names_every_parameter_once(self):
        key = map_block("connector_cache_args")
        keyed = dict(re.findall(r'^\s*(/v1/[a-z/]+) "(.*)";$', key, re.M))
        self.assertEqual(set(keyed), {path for path, e in ENDPOINTS.items()
                                      if e["params"] and path not in UNCACHED})
        for path, args in keyed.items():
            names = re.findall(r"(?:^|&)([a-z_]+)=", args)
            self.assertEqual(sorted(names), sorted(p["name"] for p in ENDPOINTS[path]["params"]),
                             path)


class Documents(unittest.TestCase):
    """What the documents say of the filters of /v1/history, derived from the code: the tour
    names each, docs/schema.md each one's indexes, and the counts (the history statements,
    db::all_history_statements() as tests/endpoints-dump prints it; a connection's whole set,
    those and db::other_statements(); the filters and their combinations).
    A filter added changes them all: this fails until the documents say so."""

    HISTORY = DESCRIPTIONS["history_statements"]
    PER_CONNECTION = HISTORY + DESCRIPTIONS["other_statements"]
    FILTERS = len([p for p in ENDPOINTS["/v1/history"]["params"]
                   if p["name"] not in ("page_id", "page_size", "order")])

    def numbers(self, document, pattern):
        text = " ".join((REPO / "docs" / document).read_text().split())
        found = []
        for match in re.findall(pattern, text):
            found += [int(n) for n in (match if isinstance(match, tuple) else [match]) if n]
        self.assertTrue(found, (document, pattern))
        return found

    def test_the_tour_names_every_filter(self):
        tour = (REPO / "docs" / "tour.md").read_text().split("## GET /v1/history\n", 1)[1]
        listed = " ".join(tour.split("; paging with", 1)[0].split())
        self.assertEqual(re.findall(r"`([a-z_]+)`", listed.removeprefix("Filters: ")),
                         [f["param"] for f in DESCRIPTIONS["history_filters"]])

    def test_the_schema_explains_every_filter_index(self):
        """Each filter's index a row of the index table, and the column of each (column, status)
        index in the paragraph that lists them."""
        schema = (REPO / "docs" / "schema.md").read_text()
        pairs = schema.split("pairs of a filter with `status`", 1)[1].split("With other", 1)[0]
        for f in DESCRIPTIONS["history_filters"]:
            if f["index"]:
                self.assertIn(f"| `{f['index']}` |", schema, f)
            if f["status_index"]:
                self.assertIn(f"`{f['column']}`", pairs, f)

    def test_architecture(self):
        self.assertEqual(self.numbers("architecture.md", r"fixed set of (\d+) statement texts"),
                         [self.HISTORY])
        self.assertEqual(self.numbers("architecture.md", r"prepares at most (\d+) statements"),
                         [self.PER_CONNECTION])
        self.assertEqual(self.numbers("architecture.md", r"statements \((\d+) history"),
                         [self.HISTORY])
        self.assertEqual(self.numbers("architecture.md", r"maps all (\d+) filter combinations"),
                         [2 ** self.FILTERS - 1])

    def test_reliability(self):
        per_connection = self.numbers("reliability.md", r"at most (\d+) (?:statements )?per "
                                      r"connection|threads x (\d+) x 2")
        self.assertEqual(per_connection, [self.PER_CONNECTION] * 3)
        self.assertEqual(self.numbers("reliability.md", r"all (\d+) (?:filter )?combinations"),
                         [2 ** self.FILTERS - 1] * 2)
        self.assertEqual(self.numbers("reliability.md", r"of the (\d+) history filters"),
                         [self.FILTERS])
        # Threads in all that fit MariaDB's default max_prepared_stmt_count, two generations each.
        self.assertEqual(self.numbers("reliability.md", r"\(16,382 by default: up to (\d+) "
                                      r"threads in all\)"),
                         [16382 // (2 * self.PER_CONNECTION)])


class BenchPeers(unittest.TestCase):
    """The benchmark's peers (scripts/bench; tests/bench/go-peer and tests/bench/peer, the same
    API on other stacks) copy /v1/history's filters: a filter added to the service is added to
    them too, or they would not answer the same requests."""

    FILTERS = DESCRIPTIONS["history_filters"]
    ECHOES = {p["name"]: p["echo"] for p in ENDPOINTS["/v1/history"]["params"]}

    def test_the_go_peer_has_every_filter(self):
        go = (REPO / "tests" / "bench" / "go-peer" / "statements.go").read_text()
        rows = re.findall(r'\{"([a-z_]+)", kind\w+, "(\w*)", "(\w+)", \d+,\s*"(\w+)", "(\w*)"\}',
                          go)
        self.assertEqual(rows, [(f["param"], self.ECHOES[f["param"]], f["column"], f["index"],
                                 f["status_index"]) for f in self.FILTERS])
        self.assertIn(f"type filterValues [{len(self.FILTERS)}]any", go)
        status = [f["param"] for f in self.FILTERS].index("status")
        self.assertIn(f"const statusFilter = {status} ", go)

    def test_the_node_peer_has_every_filter(self):
        node = (REPO / "tests" / "bench" / "peer" / "lib" / "history.mjs").read_text()

        def block(name):
            return node.split(f"const {name} = [", 1)[1].split("\n];", 1)[0]

        self.assertEqual(re.findall(r"^  \['(\w+)', '(\w+)',", block("FILTERS"), re.M),
                         [(f["param"], f["column"]) for f in self.FILTERS])
        self.assertEqual(re.findall(r"\['(\w+)', '(\w+)'\]", block("ECHOED")),
                         [(f["param"], self.ECHOES[f["param"]]) for f in self.FILTERS
                          if self.ECHOES[f["param"]]])
        self.assertEqual(sorted(re.findall(r"'(\w+)'", block("HISTORY_PARAMS"))),
                         sorted(self.ECHOES))


if __name__ == "__main__":
    unittest.main()
