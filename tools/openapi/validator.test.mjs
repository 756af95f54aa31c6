// Proof that the response validator bites: answers built from the document's own examples pass,
// and each kind of drift (a JSON type, an extra or missing field, a header, a status, a method,
// the body's request id) is reported. Also: every example in the document is valid for its
// schema under Ajv (Redocly's lint checks them too, with its own validator).
// Run: node --test tools/openapi/validator.test.mjs   (ctest: openapi.validator)
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { test } from "node:test";
import { deref, loadDocument } from "./openapi-document.mjs";
import { normalisePath, ResponseValidator } from "./validate-responses.mjs";

const documentPath = fileURLToPath(new URL("../../docs/openapi.yaml", import.meta.url));
const document = loadDocument(documentPath);
const validator = new ResponseValidator(document);

const JSON_TYPE = "application/json; charset=utf-8";
const REQUEST_ID = "0123456789abcdef0123456789abcdef";
const ETAG = '"0123456789abcdef0123456789abcdef"';

function example(path, status, name) {
  const response = deref(document, document.paths[path].get.responses[status]);
  const examples = response.content["application/json"].examples;
  return structuredClone(examples[name ?? Object.keys(examples)[0]].value);
}

function record({ method = "GET", target, status = 200, headers = {}, body, raw }) {
  const pairs = Object.entries({ "Content-Type": JSON_TYPE, "X-Request-Id": REQUEST_ID,
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "ETag, X-Request-Id, Retry-After", ...headers })
    .filter(([, value]) => value !== undefined);
  const bytes = raw ?? Buffer.from(body === undefined ? "" : JSON.stringify(body));
  return { method, target, status, headers: pairs, body_base64: bytes.toString("base64") };
}

function ok200(target, body, cacheControl) {
  return record({ target, body, headers: { "Cache-Control": cacheControl, ETag: ETAG } });
}

function errorBody(code, extra = {}) {
  return { error: { code, message: "A sentence.", ...extra, request_id: REQUEST_ID } };
}

const networks = () => example("/v1/networks", "200");
const matches = (r) => assert.deepEqual(validator.check(r), []);
const mismatches = (r, pattern) => {
  const problems = validator.check(r);
  assert.ok(problems.length > 0, "expected a mismatch");
  assert.match(problems.join("\n"), pattern);
};

test("answers shaped like the document's examples match", () => {
  matches(ok200("/v1/networks", networks(), "public, max-age=60"));
  matches(ok200("/v1/pairs?x=1", example("/v1/pairs", "200"), "public, max-age=60"));
  matches(ok200("/v1/history?page_size=1&status=pending", example("/v1/history", "200"),
    "public, max-age=2"));
  matches(ok200("/v1/history/hash?hash=ab", example("/v1/history/hash", "200", "deposit"),
    "public, max-age=2"));
  matches(ok200("/v1/ab", example("/v1/ab", "200"), "public, max-age=5"));
  matches(ok200("/v1/account?recipient_address=x", example("/v1/account", "200"),
    "public, max-age=86400, immutable"));
});

test("a wrong JSON type, an extra field or a missing field is reported", () => {
  const numberId = networks();
  numberId.networks[0].chain_id = 36888;
  mismatches(ok200("/v1/networks", numberId, "public, max-age=60"), /chain_id: must be string/);
  const extra = networks();
  extra.networks[1].rpc = "x";
  mismatches(ok200("/v1/networks", extra, "public, max-age=60"), /additional properties/);
  const missing = example("/v1/history", "200");
  delete missing.list[0].fee;
  mismatches(ok200("/v1/history", missing, "public, max-age=2"), /required property 'fee'/);
  const listed = example("/v1/history", "200");
  listed.list[0].status_message = "only in the by-hash answer";
  mismatches(ok200("/v1/history", listed, "public, max-age=2"), /unevaluated properties/);
  const byHash = example("/v1/history/hash", "200");
  delete byHash.status_message;
  mismatches(ok200("/v1/history/hash?hash=a", byHash, "public, max-age=3600"), /status_message/);
  const amount = example("/v1/ab", "200");
  amount.chains[0].supply = "1.50";
  mismatches(ok200("/v1/ab", amount, "public, max-age=5"), /supply: must match pattern/);
  const pageSize = example("/v1/history", "200");
  pageSize.page_size = "101";
  mismatches(ok200("/v1/history", pageSize, "public, max-age=2"), /page_size/);
});

test("headers: required ones, documented values", () => {
  mismatches(record({ target: "/v1/networks", body: networks(),
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG, "X-Request-Id": undefined } }),
    /X-Request-Id is required/);
  mismatches(ok200("/v1/networks", networks(), "public, max-age=61"), /Cache-Control/);
  mismatches(ok200("/v1/networks", networks(), undefined), /Cache-Control is required/);
  mismatches(record({ target: "/v1/networks", body: networks(),
    headers: { "Cache-Control": "public, max-age=60", ETag: '"xyz"' } }), /ETag/);
  mismatches(record({ target: "/v1/networks", body: networks(),
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG,
      "Content-Type": "application/json" } }), /charset=utf-8/);
  mismatches(record({ target: "/v1/ab", status: 503, body: errorBody("unavailable") }),
    /Retry-After is required/);
  matches(record({ target: "/v1/ab", status: 503, body: errorBody("unavailable"),
    headers: { "Retry-After": "1" } }));
  mismatches(record({ method: "POST", target: "/v1/ab", status: 405,
    body: errorBody("method_not_allowed") }), /Allow is required/);
});

test("statuses and methods must be documented", () => {
  mismatches(record({ target: "/v1/networks", status: 418, body: errorBody("internal") }),
    /418 is not documented/);
  mismatches(record({ target: "/v1/networks", status: 404, body: errorBody("not_found") }),
    /404 is not documented for GET \/v1\/networks/);
  mismatches(record({ method: "POST", target: "/v1/networks", status: 200, body: networks(),
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG } }), /POST is not documented/);
  matches(record({ method: "DELETE", target: "/v1/history", status: 405,
    body: errorBody("method_not_allowed"), headers: { Allow: "GET, HEAD, OPTIONS" } }));
  mismatches(record({ target: "/v1/history", status: 400, body: errorBody("not_found") }),
    /code: must be equal to one of the allowed values/);
});

test("a CORS preflight on any /v1 path is nginx's 204 with the preflight headers", () => {
  const headers = { "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "If-None-Match, Content-Type",
    "Access-Control-Max-Age": "86400", Allow: "GET, HEAD, OPTIONS" };
  for (const target of ["/v1/networks", "/v1/nope/deeper"]) {
    matches(record({ method: "OPTIONS", target, status: 204, headers }));
  }
  mismatches(record({ method: "OPTIONS", target: "/v1/pairs", status: 204,
    headers: { ...headers, "Access-Control-Max-Age": "5" } }), /Access-Control-Max-Age/);
  mismatches(record({ method: "OPTIONS", target: "/v1/pairs", status: 204, headers,
    body: errorBody("internal") }), /expected no body/);
});

test("every /v1 answer carries the CORS headers", () => {
  mismatches(record({ target: "/v1/history?order=x", status: 400,
    body: errorBody("invalid_parameter", { param: "order" }),
    headers: { "Access-Control-Allow-Origin": undefined } }), /Access-Control-Allow-Origin/);
  mismatches(record({ target: "/v1/nope", status: 404, body: errorBody("not_found"),
    headers: { "Access-Control-Expose-Headers": "ETag" } }), /Access-Control-Expose-Headers/);
});

test("error bodies: shape and the request id of the answer", () => {
  matches(record({ target: "/v1/history?order=x", status: 400,
    body: errorBody("invalid_parameter", { param: "order" }) }));
  mismatches(record({ target: "/v1/history?order=x", status: 400,
    body: { error: { code: "invalid_parameter", message: "m", request_id: "other" } } }),
    /request_id "other" is not the X-Request-Id/);
  mismatches(record({ target: "/v1/history?order=x", status: 400,
    body: { error: { code: "invalid_parameter", message: "m", request_id: REQUEST_ID,
      stack: "trace" } } }), /additional properties/);
  mismatches(record({ target: "/v1/history", status: 400, raw: Buffer.from("oops") }),
    /not JSON/);
});

test("bodies: HEAD and 304 have none; gzip is undone", () => {
  matches(record({ method: "HEAD", target: "/v1/networks",
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG } }));
  mismatches(record({ method: "HEAD", target: "/v1/networks", body: networks(),
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG } }), /expected no body/);
  matches(record({ target: "/v1/networks", status: 304,
    headers: { "Cache-Control": "public, max-age=60", ETag: ETAG } }));
  const zipped = gzipSync(Buffer.from(JSON.stringify(networks())));
  matches(record({ target: "/v1/networks", raw: zipped, headers: {
    "Cache-Control": "public, max-age=60", ETag: `W/${ETAG}`, "Content-Encoding": "gzip" } }));
});

test("other paths: unknown /v1/ paths are the JSON 404, the rest is skipped", () => {
  matches(record({ target: "/v1/nope", status: 404, body: errorBody("not_found"),
    headers: { "Cache-Control": "no-store" } }));
  mismatches(record({ target: "/v1/networks/", status: 200, body: networks() }),
    /200 is not an answer for a path outside the document/);
  assert.equal(validator.check(record({ target: "/healthz", body: { status: "ok" } })), null);
  assert.equal(validator.check(record({ target: "/docs/", raw: Buffer.from("<html>") })), null);
  assert.equal(validator.check(record({ target: "/v1/openapi.json", body: {} })), null);
  assert.equal(normalisePath("/v1//history/./hash"), "/v1/history/hash");
  assert.equal(normalisePath("/v1/x/../networks"), "/v1/networks");
  assert.equal(normalisePath("/v1/%6eetworks"), "/v1/networks");
});

test("every example of the document is valid for its schema", () => {
  let count = 0;
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const media of Object.values(deref(document, response).content ?? {})) {
          const validate = validator.validatorFor(media.schema);
          for (const [name, ex] of Object.entries(media.examples ?? {})) {
            assert.ok(validate(ex.value), `${name}: ${JSON.stringify(validate.errors)}`);
            count += 1;
          }
        }
      }
    }
  }
  assert.ok(count >= 15, `only ${count} examples`);
});

test("an event stream's text is checked for its type and UTF-8, not as JSON", () => {
  const stream = (raw, contentType) => record({
    target: `/v1/history/hash/events?hash=${"ab".repeat(32)}`,
    headers: { "Content-Type": contentType, "Cache-Control": "no-store" }, raw });
  const again = Buffer.from("retry: 3000\n: again shortly\n\n");
  matches(stream(again, "text/event-stream; charset=utf-8"));
  mismatches(stream(again, "text/plain"), /Content-Type "text\/plain" is not one of/);
  mismatches(stream(Buffer.from([0xff, 0xfe]), "text/event-stream"), /not UTF-8/);
});
