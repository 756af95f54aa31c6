// Runs the events helper (events.mts) against a stack: follows one record's stream and prints
// each event it yields as a JSON line {"seq", "status", "hash"}, until COUNT of them.
// Usage (compiled): node events-test.mjs BASE_URL HASH COUNT   (tests/integration/test_events.py)
import { followEvents, recordEventsUrl } from "./events.mjs";

const [baseUrl, hash, count] = process.argv.slice(2);
if (baseUrl === undefined || hash === undefined || count === undefined) {
  console.error("usage: node events-test.mjs BASE_URL HASH COUNT");
  process.exit(2);
}
const stop = new AbortController();
let seen = 0;
for await (const { seq, record } of followEvents(recordEventsUrl(baseUrl, hash),
                                                 { signal: stop.signal, retryMs: 200 })) {
  console.log(JSON.stringify({ seq, status: record.status, hash: record.hash }));
  if (++seen === Number(count)) stop.abort();
}
