// Reading docs/openapi.yaml: the YAML parse (js-yaml) and local $ref resolution, shared by the
// response validator and the docs-site builder.
//
// As a program it prints the document as JSON:  node openapi-document.mjs docs/openapi.yaml
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { load } from "js-yaml";

export function loadDocument(path) {
  const document = load(readFileSync(path, "utf8"));
  if (!document || typeof document !== "object" || !String(document.openapi).startsWith("3.1")) {
    throw new Error(`${path}: not an OpenAPI 3.1 document`);
  }
  return document;
}

// The value a local JSON pointer ("#/components/responses/NotFound") names in the document.
export function resolvePointer(document, ref) {
  if (!ref.startsWith("#/")) throw new Error(`only local references are supported: ${ref}`);
  let node = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (node === null || typeof node !== "object" || !(key in node)) {
      throw new Error(`unresolved reference ${ref}`);
    }
    node = node[key];
  }
  return node;
}

// An OpenAPI object (response, header, parameter) with its $ref chain followed.
export function deref(document, node) {
  const seen = new Set();
  while (node && typeof node === "object" && typeof node.$ref === "string") {
    if (seen.has(node.$ref)) throw new Error(`reference cycle at ${node.$ref}`);
    seen.add(node.$ref);
    node = resolvePointer(document, node.$ref);
  }
  return node;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) {
    console.error("usage: node openapi-document.mjs OPENAPI.yaml");
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(loadDocument(process.argv[2])) + "\n");
}
