// Runs verifyWebhook (webhooks.mts) on the shared vectors of tests/fixtures/
// webhook_signatures.json: each signature verifies at its own timestamp (and not with a digit
// changed), and each verdict case gets its verdict. Prints one line per failure and a summary
// `webhooks-test: checks=N failures=N`; exits 1 on any failure.
// Usage (compiled): node webhooks-test.mjs VECTORS_FILE   (tests/integration/test_webhook_verify.py)
import { readFileSync } from "node:fs";
import { verifyWebhook, type WebhookVerdict } from "./webhooks.mjs";

interface Signature { secret: string; timestamp: number; body: string; signature: string }
interface VerdictCase {
  secret: string; timestamp: string | null; signature: string | null; body: string; now: number;
  tolerance: number; verdict: WebhookVerdict;
}
interface Vectors { signatures: Signature[]; verdicts: VerdictCase[] }

const file = process.argv[2];
if (file === undefined) {
  console.error("usage: node webhooks-test.mjs VECTORS_FILE");
  process.exit(2);
}
const vectors = JSON.parse(readFileSync(file, "utf8")) as Vectors;
let checks = 0;
let failures = 0;
function expect(what: string, got: WebhookVerdict, wanted: WebhookVerdict): void {
  checks++;
  if (got !== wanted) {
    failures++;
    console.log(`failure: ${what}: ${got}, not ${wanted}`);
  }
}

for (const v of vectors.signatures) {
  const body = Buffer.from(v.body, "utf8");
  const at = { now: v.timestamp };
  expect(`${v.signature} at its timestamp`,
         verifyWebhook(v.secret, String(v.timestamp), v.signature, body, at), "valid");
  const changed = v.signature.slice(0, -1) + (v.signature.endsWith("0") ? "1" : "0");
  expect(`${changed} (a digit changed)`,
         verifyWebhook(v.secret, String(v.timestamp), changed, body, at), "mismatch");
}
for (const [i, v] of vectors.verdicts.entries()) {
  expect(`verdicts[${i}]`,
         verifyWebhook(v.secret, v.timestamp, v.signature, Buffer.from(v.body, "utf8"),
                       { now: v.now, tolerance: v.tolerance }),
         v.verdict);
}
console.log(`webhooks-test: checks=${checks} failures=${failures}`);
process.exit(failures === 0 ? 0 : 1);
