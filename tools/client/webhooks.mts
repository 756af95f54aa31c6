// The check a receiver of connector-webhooks makes on each delivery (docs/webhooks.md,
// "Verifying a delivery"), with node:crypto only. docs/webhooks.md shows this file from its import
// on, verbatim; tests/integration/test_webhook_verify.py holds the two equal and runs
// webhooks-test.mts on the signatures the C++ signer and Python agree on.
import { createHmac, timingSafeEqual } from "node:crypto";

/** "valid", or why not: "malformed" (a header absent or not of its form), "mismatch" (not
 * signed with this secret: refuse it) or "outside_tolerance" (signed, but its timestamp is more
 * than the tolerance from now: a replay, or a clock off). */
export type WebhookVerdict = "valid" | "malformed" | "mismatch" | "outside_tolerance";

/** Checks a delivery. `secret`: as `connector-admin webhook add` printed it; the headers as
 * received (`Connector-Timestamp`, `Connector-Signature`: null or undefined when absent; an
 * array, which Node's header type allows, is malformed); `body`: the request's body exactly as
 * received, before any parsing. `now` and `tolerance` in seconds. */
export function verifyWebhook(
  secret: string,
  timestampHeader: string | string[] | null | undefined,
  signatureHeader: string | string[] | null | undefined,
  body: Uint8Array,
  { now = Math.floor(Date.now() / 1000), tolerance = 300 }: { now?: number; tolerance?: number } = {},
): WebhookVerdict {
  if (typeof timestampHeader !== "string" || !/^[0-9]{1,18}$/.test(timestampHeader) ||
      typeof signatureHeader !== "string" || !signatureHeader.startsWith("v1=") ||
      signatureHeader.length !== 67) {
    return "malformed";
  }
  const hmac = createHmac("sha256", secret).update(`${timestampHeader}.`).update(body);
  const expected = Buffer.from(`v1=${hmac.digest("hex")}`);
  const received = Buffer.from(signatureHeader);
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    return "mismatch";
  }
  if (Math.abs(now - Number(timestampHeader)) > tolerance) return "outside_tolerance";
  return "valid";
}
