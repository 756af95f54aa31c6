// Runs the events helpers (events.mts) against a stack: follows one record, by its stream
// (followEvents) or by long-polling (pollChanges), and prints each change it yields as a JSON
// line {"seq", "status", "hash"}, until COUNT of them.
// Usage (compiled): node events-test.mjs BASE_URL HASH COUNT stream|poll
//   (tests/integration/test_events.py)
import { followEvents, pollChanges, recordChangesUrl, recordEventsUrl } from "./events.mjs";

const [baseUrl, hash, count, mode] = process.argv.slice(2);
if (baseUrl === undefined || hash === undefined || count === undefined ||
    (mode !== "stream" && mode !== "poll")) {
  console.error("usage: node events-test.mjs BASE_URL HASH COUNT stream|poll");
  process.exit(2);
}
const stop = new AbortController();
const options = { signal: stop.signal, retryMs: 200 };
const changes = mode === "stream" ? followEvents(recordEventsUrl(baseUrl, hash), options)
                                  : pollChanges(recordChangesUrl(baseUrl, hash), options);
let seen = 0;
for await (const { seq, record } of changes) {
  console.log(JSON.stringify({ seq, status: record.status, hash: record.hash }));
  if (++seen === Number(count)) stop.abort();
}
