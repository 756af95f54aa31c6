// Builds the static API reference folder nginx serves at /docs/ (and /v1/openapi.json):
//   index.html               Redoc, loading ./openapi.json (tools/openapi/docs-page.html)
//   redoc.standalone.js      from the pinned redoc package, with its licence file
//   openapi.json             docs/openapi.yaml as JSON
// Usage: node build-docs-site.mjs OPENAPI.yaml OUT_DIR   (scripts/docs-site runs it)
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadDocument } from "./openapi-document.mjs";

const here = dirname(fileURLToPath(import.meta.url));

function main([documentPath, out]) {
  if (!documentPath || !out) {
    console.error("usage: node build-docs-site.mjs OPENAPI.yaml OUT_DIR");
    return 2;
  }
  const document = loadDocument(documentPath);
  const redoc = dirname(createRequire(import.meta.url).resolve("redoc/package.json"));
  mkdirSync(out, { recursive: true });
  // Each file is written beside its final name and renamed: nginx never serves half a file.
  const put = (name, write) => {
    const partial = join(out, `.${name}.partial`);
    write(partial);
    renameSync(partial, join(out, name));
  };
  put("openapi.json", (p) => writeFileSync(p, JSON.stringify(document, null, 2) + "\n"));
  for (const name of ["redoc.standalone.js", "redoc.standalone.js.LICENSE.txt"]) {
    put(name, (p) => copyFileSync(join(redoc, "bundles", name), p));
  }
  put("index.html", (p) => copyFileSync(join(here, "docs-page.html"), p));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
