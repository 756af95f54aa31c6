// The typed client's helpers for following transfers (docs/events.md). followEvents reads an
// event stream (/v1/history/hash/events, /v1/history/events) with fetch (browsers and Node
// alike), parses it as EventSource does (a line ends at CRLF, LF or a lone CR; an event's id is
// the last one given) and reconnects by itself with Last-Event-ID; pollChanges long-polls the
// same changes (/v1/history/hash/changes, /v1/history/changes) for where streams cannot go.
// Both yield each change once and in order with its record typed as /v1/history/hash answers
// it, passing over what a reconnection or a failure brings again (ids at or below the last one
// yielded).
import type { components } from "./schema.js";

export type HistoryRecord = components["schemas"]["HistoryRecordWithMessage"];
export type ChangeList = components["responses"]["ChangeList"]["content"]["application/json"];

export interface RecordEvent {
  seq: number;           // the change feed's sequence number (the event's id)
  record: HistoryRecord; // the record as /v1/history/hash answered it when the change went out
}

export interface FollowOptions {
  signal?: AbortSignal;  // stops following
  retryMs?: number;      // wait before a reconnection (default 1000)
}

export function recordEventsUrl(baseUrl: string, hash: string): string {
  return `${baseUrl}/v1/history/hash/events?hash=${encodeURIComponent(hash)}`;
}

export function addressEventsUrl(baseUrl: string, address: string): string {
  return `${baseUrl}/v1/history/events?address=${encodeURIComponent(address)}`;
}

export function recordChangesUrl(baseUrl: string, hash: string): string {
  return `${baseUrl}/v1/history/hash/changes?hash=${encodeURIComponent(hash)}`;
}

export function addressChangesUrl(baseUrl: string, address: string): string {
  return `${baseUrl}/v1/history/changes?address=${encodeURIComponent(address)}`;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A 429 or a 5xx: its Retry-After, else retryMs. Any other answer but a 200 (400, 404) is an
// Error naming the status.
async function waitedOut(url: string, response: Response, options: FollowOptions): Promise<boolean> {
  if (response.status === 429 || response.status >= 500) {
    const after = Number(response.headers.get("retry-after") ?? "");
    await response.body?.cancel();
    await pause(Number.isFinite(after) && after > 0 ? after * 1000 : (options.retryMs ?? 1000));
    return true;
  }
  if (response.status !== 200) {
    throw new Error(`${url}: HTTP ${response.status}: ${await response.text()}`);
  }
  return false;
}

interface RawEvent {
  id: string;
  data: string;
}

// Splits text into complete lines; the rest (an unfinished line, or a CR that may be the start
// of a CRLF) stays for the next chunk.
function takeLines(text: string): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\n" && c !== "\r") continue;
    if (c === "\r" && i + 1 === text.length) break;
    lines.push(text.slice(start, i));
    if (c === "\r" && text[i + 1] === "\n") i++;
    start = i + 1;
  }
  return { lines, rest: text.slice(start) };
}

async function* rawEvents(response: Response): AsyncGenerator<RawEvent> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  let id = "";
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const { lines, rest } = takeLines(pending + value);
    pending = rest;
    for (const line of lines) {
      if (line === "") {
        if (data.length > 0) yield { id, data: data.join("\n") };
        data = [];
        continue;
      }
      const colon = line.indexOf(":");
      if (colon === 0) continue; // a comment (": ping")
      const field = colon < 0 ? line : line.slice(0, colon);
      let fieldValue = colon < 0 ? "" : line.slice(colon + 1);
      if (fieldValue.startsWith(" ")) fieldValue = fieldValue.slice(1);
      if (field === "id") id = fieldValue;
      if (field === "data") data.push(fieldValue);
    }
  }
}

// Follows one stream (recordEventsUrl or addressEventsUrl) until options.signal aborts. A 429 or
// a 5xx is waited out (Retry-After, else retryMs); any other error answer (400, 404) ends it with
// an Error naming the status.
export async function* followEvents(url: string, options: FollowOptions = {}): AsyncGenerator<RecordEvent> {
  let last: bigint | null = null;
  while (!options.signal?.aborted) {
    const headers: Record<string, string> = { "Accept": "text/event-stream" };
    if (last !== null) headers["Last-Event-ID"] = String(last);
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: options.signal ?? null });
    } catch {
      if (options.signal?.aborted) return;
      await pause(options.retryMs ?? 1000);
      continue;
    }
    if (await waitedOut(url, response, options)) continue;
    try {
      for await (const event of rawEvents(response)) {
        if (!/^[0-9]{1,20}$/.test(event.id)) continue;
        const seq = BigInt(event.id);
        if (last !== null && seq <= last) continue; // a repeat after reconnecting
        last = seq;
        yield { seq: Number(seq), record: JSON.parse(event.data) as HistoryRecord };
      }
    } catch {
      if (options.signal?.aborted) return;
    }
    await pause(options.retryMs ?? 1000);
  }
}

// Long-polls one list (recordChangesUrl or addressChangesUrl) until options.signal aborts: a
// record's first answer is its state; each poll asks from the last answer's `after` (an answer
// without one, nginx's "something changed, or nothing did in 30 s", keeps it). Errors as
// followEvents.
export async function* pollChanges(url: string, options: FollowOptions = {}): AsyncGenerator<RecordEvent> {
  let after: bigint | null = null;
  while (!options.signal?.aborted) {
    const target = after === null ? url : `${url}&after=${after}`;
    let response: Response;
    try {
      response = await fetch(target, { headers: { "Accept": "application/json" },
                                       signal: options.signal ?? null });
    } catch {
      if (options.signal?.aborted) return;
      await pause(options.retryMs ?? 1000);
      continue;
    }
    if (await waitedOut(url, response, options)) continue;
    let list: ChangeList;
    try {
      list = await response.json() as ChangeList;
    } catch {
      if (options.signal?.aborted) return;
      await pause(options.retryMs ?? 1000);
      continue;
    }
    for (const change of list.changes) {
      const seq = BigInt(change.seq);
      if (after !== null && seq <= after) continue; // a repeat
      yield { seq: Number(seq), record: change.record };
    }
    if (list.after !== undefined) after = BigInt(list.after);
  }
}
