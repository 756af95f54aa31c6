// Checks recorded HTTP responses against docs/openapi.yaml, so that the document cannot drift
// from what the service sends. The integration tests' harness records every response it receives
// and runs this once per stack; a mismatch fails the tests.
//
// Usage: node validate-responses.mjs OPENAPI.yaml RESPONSES.jsonl
// RESPONSES.jsonl: one JSON object per line,
//   {"method": "GET", "target": "/v1/history?page_size=1", "status": 200,
//    "headers": [["Content-Type", "application/json; charset=utf-8"], ...],
//    "body_base64": "eyJwYWdl..."}
// Exit status: 0 every response matches, 1 at least one does not (each is printed), 2 usage or
// an unreadable document.
//
// What is checked, per response:
// * A path of the document (after nginx's normalisation): the operation of the method (HEAD
//   uses GET's); a method the document does not list must have got one of GET's error answers
//   (405, 413, ...). The status must be documented for the operation.
// * Another path under /v1/: one of the answers of `x-other-paths` (the JSON 404 and the errors
//   nginx gives any path). /v1/openapi.json and every path outside /v1/ (the internal health
//   and metrics paths, /docs/) are skipped and counted as such.
// * Headers: every header the response documents as required is present, and every documented
//   header that is present matches its schema (Content-Type is checked against `content`).
// * Body: a response with `content` has a Content-Type of one of its media types (JSON always
//   with charset=utf-8), a UTF-8 body, and for JSON a body (gzip undone) valid against the media
//   type's schema (JSON Schema 2020-12, Ajv), and an error body's request_id equal to
//   X-Request-Id (an event stream's text is checked for its type and UTF-8 only). HEAD
//   answers and responses without `content` (304) have no body.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { deref, loadDocument } from "./openapi-document.mjs";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const addFormats = addFormatsModule.default ?? addFormatsModule;

const SCHEMAS_ID = "urn:connector:openapi:schemas";
const COMPONENT_SCHEMA_REF = "#/components/schemas/";
const SKIPPED_PATHS = new Set(["/v1/openapi.json"]);  // static files nginx serves
const API_PREFIX = "/v1/";

// A schema of the document with its component references pointed at the one registered copy
// of components.schemas.
function retarget(node) {
  if (Array.isArray(node)) return node.map(retarget);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string" && value.startsWith(COMPONENT_SCHEMA_REF)) {
      out.$ref = `${SCHEMAS_ID}#/$defs/${value.slice(COMPONENT_SCHEMA_REF.length)}`;
    } else {
      out[key] = retarget(value);
    }
  }
  return out;
}

// The path nginx routes on: percent-decoded, repeated slashes merged, dot segments resolved.
export function normalisePath(rawPath) {
  let path;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return rawPath;  // nginx answers such a target 400 itself
  }
  path = path.replace(/\/{2,}/g, "/");
  const segments = [];
  const parts = path.split("/").slice(1);
  parts.forEach((segment, i) => {
    const last = i === parts.length - 1;
    if (segment === ".") {
      if (last) segments.push("");
    } else if (segment === "..") {
      segments.pop();
      if (last) segments.push("");
    } else {
      segments.push(segment);
    }
  });
  return "/" + segments.join("/");
}

function headerMap(pairs) {
  const headers = new Map();
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    headers.set(key, headers.has(key) ? `${headers.get(key)}, ${value}` : value);
  }
  return headers;
}

function describeErrors(errors) {
  return (errors ?? []).slice(0, 8).map((e) => {
    const where = e.instancePath || "(the whole body)";
    const extra = e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : "";
    return `${where}: ${e.message}${extra}`;
  });
}

export class ResponseValidator {
  constructor(document) {
    this.document = document;
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: true });
    addFormats(this.ajv);
    // Schemas are compiled when a response first needs them (a stack's answers use a few).
    this.ajv.addSchema({ $id: SCHEMAS_ID, $defs: retarget(document.components?.schemas ?? {}) });
    this.compiled = new Map();
    this.otherPaths = document["x-other-paths"]?.responses ?? {};
  }

  validatorFor(schema) {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(retarget(schema));
      this.compiled.set(schema, validate);
    }
    return validate;
  }

  // The documented response for a record, or a string saying why there is none; null to skip.
  findResponse(method, path, status) {
    // A CORS preflight on any /v1 path: nginx's 204 (x-preflight), whatever the path.
    const preflight = this.document["x-preflight"];
    if (method === "OPTIONS" && status === 204 && preflight && (path === "/v1" || path.startsWith(API_PREFIX))) {
      return { response: deref(this.document, preflight), where: "x-preflight" };
    }
    const pathItem = this.document.paths?.[path];
    if (!pathItem) {
      if (SKIPPED_PATHS.has(path) || !(path === "/v1" || path.startsWith(API_PREFIX))) return null;
      const response = this.otherPaths[String(status)];
      return response
        ? { response: deref(this.document, response), where: "x-other-paths" }
        : `${status} is not an answer for a path outside the document (x-other-paths)`;
    }
    let operation = pathItem[method.toLowerCase()];
    let where = `${method} ${path}`;
    if (!operation && method === "HEAD") operation = pathItem.get;
    if (!operation) {
      if (status < 400) return `${method} is not documented for ${path}, yet it got ${status}`;
      operation = pathItem.get;
      where = `GET ${path} (for ${method})`;
    }
    const responses = operation?.responses ?? {};
    const response =
      responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    return response
      ? { response: deref(this.document, response), where: `${where} ${status}` }
      : `${status} is not documented for ${where}`;
  }

  checkHeaders(response, headers, problems) {
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (name.toLowerCase() === "content-type") continue;  // OpenAPI: described by `content`
      const spec = deref(this.document, header);
      const value = headers.get(name.toLowerCase());
      if (value === undefined) {
        if (spec.required) problems.push(`header ${name} is required but missing`);
        continue;
      }
      if (spec.schema) {
        const validate = this.validatorFor(spec.schema);
        if (!validate(value)) {
          problems.push(`header ${name}: ${JSON.stringify(value)}: ` +
            describeErrors(validate.errors).join("; "));
        }
      }
    }
  }

  checkBody(record, response, headers, body, problems) {
    const content = response.content;
    if (!content || record.method === "HEAD") {
      if (body.length) problems.push(`expected no body, got ${body.length} bytes`);
      if (!content) return;
    }
    const contentType = headers.get("content-type") ?? "";
    const [mediaType, ...parameters] = contentType.split(";").map((s) => s.trim().toLowerCase());
    const media = content[mediaType];
    if (!media) {
      problems.push(`Content-Type ${JSON.stringify(contentType)} is not one of ` +
        Object.keys(content).join(", "));
      return;
    }
    if (mediaType === "application/json" && !parameters.includes("charset=utf-8")) {
      problems.push(`Content-Type ${JSON.stringify(contentType)} lacks charset=utf-8`);
    }
    if (record.method === "HEAD" || !media.schema) return;
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
    } catch {
      problems.push("the body is not UTF-8");
      return;
    }
    if (text.startsWith("\uFEFF")) problems.push("the body starts with a byte-order mark");
    // An event stream's text is not JSON: its media type and UTF-8 are what is checked.
    if (mediaType !== "application/json") return;
    let json;
    try {
      json = JSON.parse(text);
    } catch (e) {
      problems.push(`the body is not JSON (${e.message}): ${JSON.stringify(text.slice(0, 200))}`);
      return;
    }
    const validate = this.validatorFor(media.schema);
    if (!validate(json)) {
      problems.push(...describeErrors(validate.errors).map((m) => `body ${m}`));
      if (validate.errors.length > 8) problems.push(`... ${validate.errors.length - 8} more`);
      problems.push(`body: ${text.slice(0, 300)}${text.length > 300 ? "..." : ""}`);
    }
    const requestId = json?.error?.request_id;
    if (requestId !== undefined && requestId !== headers.get("x-request-id")) {
      problems.push(`error.request_id ${JSON.stringify(requestId)} is not the X-Request-Id ` +
        JSON.stringify(headers.get("x-request-id")));
    }
  }

  // Every answer on a /v1 path carries the document's x-cors headers, whatever its status.
  checkCors(path, headers, problems) {
    if (!(path === "/v1" || path.startsWith(API_PREFIX))) return;
    for (const [name, value] of Object.entries(this.document["x-cors"] ?? {})) {
      const got = headers.get(name.toLowerCase());
      if (got !== value) problems.push(`header ${name}: ${JSON.stringify(got)}, not ${JSON.stringify(value)}`);
    }
  }

  // null when the record is outside the document; else the list of problems (empty: it matches).
  check(record) {
    const path = normalisePath(String(record.target).split("?")[0]);
    const found = this.findResponse(record.method, path, record.status);
    if (found === null) return null;
    if (typeof found === "string") return [found];
    const headers = headerMap(record.headers ?? []);
    let body = Buffer.from(record.body_base64 ?? "", "base64");
    if (body.length && /^\s*gzip\s*$/i.test(headers.get("content-encoding") ?? "")) {
      body = gunzipSync(body);
    }
    const problems = [];
    this.checkCors(path, headers, problems);
    this.checkHeaders(found.response, headers, problems);
    this.checkBody(record, found.response, headers, body, problems);
    return problems.map((p) => `${p} [${found.where}]`);
  }
}

const MAX_REPORTED = 30;

function main(argv) {
  if (argv.length !== 2) {
    console.error("usage: node validate-responses.mjs OPENAPI.yaml RESPONSES.jsonl");
    return 2;
  }
  const [documentPath, recordsPath] = argv;
  let validator;
  try {
    validator = new ResponseValidator(loadDocument(documentPath));
  } catch (e) {
    console.error(`validate-responses: ${documentPath}: ${e.message}`);
    return 2;
  }
  const lines = readFileSync(recordsPath, "utf8").split("\n").filter((l) => l.trim());
  let checked = 0;
  let skipped = 0;
  const mismatches = [];
  for (const [index, line] of lines.entries()) {
    const record = JSON.parse(line);
    const problems = validator.check(record);
    if (problems === null) {
      skipped += 1;
      continue;
    }
    checked += 1;
    if (problems.length) mismatches.push({ index, record, problems });
  }
  for (const { index, record, problems } of mismatches.slice(0, MAX_REPORTED)) {
    const target = String(record.target);
    console.log(`MISMATCH #${index + 1}: ${record.method} ${target.slice(0, 160)}` +
      `${target.length > 160 ? "..." : ""} -> ${record.status}`);
    for (const problem of problems) console.log(`  ${problem}`);
  }
  if (mismatches.length > MAX_REPORTED) {
    console.log(`... and ${mismatches.length - MAX_REPORTED} more mismatching responses`);
  }
  console.log(`openapi: ${checked} responses checked against ${documentPath}, ${skipped} ` +
    `outside it skipped, ${mismatches.length} mismatching`);
  return mismatches.length ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}

