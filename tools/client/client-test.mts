// A real client of the service: openapi-fetch's createClient<paths>() with the types that
// openapi-typescript generates from docs/openapi.yaml, calling every endpoint of the document,
// its errors and (with fetch: the document has no OPTIONS operation) a CORS preflight, and
// comparing every answer exactly with what the fixture the stack was started with implies.
//
// Environment:
//   CLIENT_TEST_BASE_URL  where to send the requests (nginx, or Prism in front of it)
//   CLIENT_TEST_FIXTURE   the import document the stack was loaded with (tests/fixtures/*.json)
//   CLIENT_TEST_PRISM     empty: straight to the service; "errors": through `prism proxy --errors`
//                         (Prism answers 422 instead of passing a request that breaks the
//                         document, and an error instead of a response that breaks it);
//                         "report": through `prism proxy` without --errors (Prism passes
//                         everything and reports violations in an `sl-violations` header)
// Through Prism, every request the document accepts must pass with no violation at all, and
// every request it does not accept must be flagged (so a quiet Prism is not a blind one).
// Ends with one line "ts-client: mode=... requests=N preflights=N checks=N violations=N
// endpoints=...", also after a failed check. `violations` is the number this run observed: each
// entry of an `sl-violations` header Prism put on the answer to a request the document accepts
// (and each violation of an answer to one it does not), and each of Prism's own refusals
// (--errors) of a request the document accepts; every one is also printed on stderr. Exit
// status 0 only when every check passed and violations=0; else 1 (a failed check's message on
// stderr).
//
// tests/integration/test_ts_client.py generates the types, type-checks this file (tsc, strict)
// and runs it against a stack, directly and through Prism.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];

// --- settings ---------------------------------------------------------------------------------

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set`);
  return value;
}
const baseUrl = setting("CLIENT_TEST_BASE_URL").replace(/\/$/, "");
const mode = process.env["CLIENT_TEST_PRISM"] ?? "";
if (mode !== "" && mode !== "errors" && mode !== "report") {
  throw new Error(`CLIENT_TEST_PRISM must be empty, "errors" or "report", not ${mode}`);
}

// --- the fixture, and the answers it implies ------------------------------------------------

interface FixtureNetwork { network: string; chain_id: string; base_chain: string; slug: string }
interface FixtureAsset {
  id: string; asset: string; name: string; symbol: string; decimals: number;
  asset_type: string; slug: string;
}
interface FixturePair {
  id: string; asset_a_id: string; asset_b_id: string;
  a2b_min_deposit_amount: string; b2a_min_deposit_amount: string;
  a2b_fee_percent: string; b2a_fee_percent: string;
  a2b_fee_min_amount: string; b2a_fee_min_amount: string;
  a2b_auto_confirm_deposit_amount: string; b2a_auto_confirm_deposit_amount: string;
  a2b_disabled: boolean; b2a_disabled: boolean;
}
interface FixtureChain { slug: string; status: string; latest_height: string; supply: string }
interface FixtureRecord {
  id: string; hash: string; pair_id: number; source_slug: string; destination_slug: string;
  source_deposit_address: string; source_sender: string; destination_address: string;
  source_block_number: string; destination_block_number?: string;
  source_block_timestamp: string; destination_block_timestamp?: string;
  source_tx_hash: string; destination_tx_hash?: string;
  source_asset_id: string; destination_asset_id: string;
  source_amount: string; destination_amount?: string; fee?: string;
  status: Schemas["HistoryStatus"]; status_message?: string;
}
interface FixtureDocument {
  networks: FixtureNetwork[]; assets: FixtureAsset[]; pairs: FixturePair[];
  chains: FixtureChain[]; history: FixtureRecord[];
}

const fixture = JSON.parse(readFileSync(setting("CLIENT_TEST_FIXTURE"), "utf8")) as FixtureDocument;

function find<T>(items: T[], predicate: (item: T) => boolean, what: string): T {
  const found = items.find(predicate);
  if (found === undefined) throw new Error(`the fixture has no ${what}`);
  return found;
}

function network(slug: string): Schemas["Blockchain"] {
  const n = find(fixture.networks, (x) => x.slug === slug, `network ${slug}`);
  return {
    network: n.network as Schemas["Network"], chain_id: String(n.chain_id),
    base_chain: n.base_chain as Schemas["BaseChain"], slug: n.slug as Schemas["Slug"],
  };
}

function asset(id: string): Schemas["Asset"] {
  const a = find(fixture.assets, (x) => String(x.id) === String(id), `asset ${id}`);
  return {
    id: String(a.id), asset: a.asset, name: a.name, symbol: a.symbol, decimals: a.decimals,
    asset_type: a.asset_type as Schemas["AssetType"], ...network(a.slug),
  };
}

function pair(p: FixturePair): Schemas["Pair"] {
  const a = asset(p.asset_a_id);
  const b = asset(p.asset_b_id);
  return {
    id: String(p.id), asset_a_id: String(p.asset_a_id), asset_b_id: String(p.asset_b_id),
    asset_a: a, asset_b: b,
    a2b_min_deposit_amount: p.a2b_min_deposit_amount, b2a_min_deposit_amount: p.b2a_min_deposit_amount,
    a2b_fee_percent: p.a2b_fee_percent, b2a_fee_percent: p.b2a_fee_percent,
    a2b_fee_min_amount: p.a2b_fee_min_amount, b2a_fee_min_amount: p.b2a_fee_min_amount,
    a2b_auto_confirm_deposit_amount: p.a2b_auto_confirm_deposit_amount,
    b2a_auto_confirm_deposit_amount: p.b2a_auto_confirm_deposit_amount,
    connect_pair: `${a.slug}-${b.slug}`, a2b_disabled: p.a2b_disabled, b2a_disabled: p.b2a_disabled,
  };
}

const STATUS_MESSAGES: Record<Schemas["HistoryStatus"], string> = {
  Deposit: "The deposit was seen on the source chain and awaits confirmation.",
  Pending: "The deposit is confirmed and the payout on the destination chain is under way.",
  Confirmed: "The transfer is complete: the payout is confirmed on the destination chain.",
  Error: "The transfer could not be completed; contact support with this record's hash.",
};

// The API's rendering of a fixture record, in the contract's field order.
function record(r: FixtureRecord): Schemas["HistoryRecord"] {
  const src = network(r.source_slug);
  const dst = network(r.destination_slug);
  const sa = asset(r.source_asset_id);
  const da = asset(r.destination_asset_id);
  return {
    id: String(r.id), hash: r.hash, pair_id: Number(r.pair_id),
    source_slug: src.slug, source_network: src.network, source_chain_id: src.chain_id,
    source_base_chain: src.base_chain,
    destination_slug: dst.slug, destination_network: dst.network,
    destination_chain_id: dst.chain_id, destination_base_chain: dst.base_chain,
    source_deposit_address: r.source_deposit_address, source_sender: r.source_sender,
    destination_address: r.destination_address,
    source_block_number: String(r.source_block_number),
    destination_block_number: String(r.destination_block_number ?? ""),
    source_block_timestamp: String(r.source_block_timestamp),
    destination_block_timestamp: String(r.destination_block_timestamp ?? ""),
    source_tx_hash: r.source_tx_hash, destination_tx_hash: r.destination_tx_hash ?? "",
    source_asset_id: sa.id, destination_asset_id: da.id,
    source_asset_address: sa.asset, destination_asset_address: da.asset,
    source_asset_name: sa.name, destination_asset_name: da.name,
    source_asset_symbol: sa.symbol, destination_asset_symbol: da.symbol,
    source_asset_decimals: sa.decimals, destination_asset_decimals: da.decimals,
    source_asset_type: sa.asset_type, destination_asset_type: da.asset_type,
    source_amount: r.source_amount, destination_amount: r.destination_amount ?? "",
    fee: r.fee ?? "", status: r.status,
  };
}

function recordWithMessage(r: FixtureRecord): Schemas["HistoryRecordWithMessage"] {
  return { ...record(r), status_message: r.status_message || STATUS_MESSAGES[r.status] };
}

// The matching records in the service's order (by id, newest first unless ascending).
function records(predicate: (r: FixtureRecord) => boolean, ascending = false) {
  return fixture.history.filter(predicate)
    .sort((x, y) => (Number(x.id) - Number(y.id)) * (ascending ? 1 : -1))
    .map(record);
}

const NO_FILTER = {
  source_deposit_address: "", source_sender: "", source_blockchain: "", source_asset_id: "",
  destination_address: "", destination_blockchain: "", destination_asset_id: "", pairId: "",
  status: "",
} as const;

// One history page as the service must answer it: the records of page `pageId` of `pageSize`
// among `all`, the totals, and the echo block (NO_FILTER with `echo` over it). `pageId` is any
// value up to 2^64 - 1 as the client wrote it (leading zeros too); the answer says it canonically.
function page(all: Schemas["HistoryRecord"][], pageId: number | string, pageSize: number,
              echo: Partial<Record<keyof typeof NO_FILTER, string>> = {}): Schemas["HistoryPage"] {
  const id = BigInt(pageId);
  const start = id * BigInt(pageSize);
  return {
    page_id: id.toString(), page_size: String(pageSize),
    total_page: String(Math.ceil(all.length / pageSize)), total_history: String(all.length),
    list: start >= BigInt(all.length) ? [] : all.slice(Number(start), Number(start) + pageSize),
    ...NO_FILTER, ...echo,
  } as Schemas["HistoryPage"];
}

// --- checks -----------------------------------------------------------------------------------

let checks = 0;
let requests = 0;
// What Prism said was wrong with a request the document accepts or with an answer: counted and
// listed here (not thrown at once, so that one run shows them all), printed at the end.
let violations = 0;
const violationLog: string[] = [];

function eq(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what);
  checks++;
}

// Equal values, JSON types and key order (the JSON texts are the same).
function same(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${what}: key order`);
  checks++;
}

function matches(actual: string | null, pattern: RegExp, what: string): void {
  assert.match(actual ?? "(absent)", pattern, what);
  checks++;
}

function ok(condition: boolean, what: string): void {
  assert.ok(condition, what);
  checks++;
}

const JSON_TYPE = "application/json; charset=utf-8";
const EXPOSE = "ETag, X-Request-Id, Retry-After";

// What Prism must say about the request being sent, when it is not one the document accepts:
// where the violation is (["query", name], or [] when no operation of the document matches),
// and what `prism proxy --errors` answers instead of passing it on.
interface Outside { location: string[]; prismStatus: number; prismType: string }
let outside: Outside | null = null;

// Every answer the service wrote (directly or passed on by Prism): status, CORS, request id,
// content type, and, for a request the document does not accept, that Prism reported it (the
// violations Prism reports otherwise are counted by `track`).
function fromService(r: Response, status: number, what: string): void {
  eq(r.status, status, `${what}: status`);
  eq(r.headers.get("access-control-allow-origin"), "*", `${what}: Access-Control-Allow-Origin`);
  eq(r.headers.get("access-control-expose-headers"), EXPOSE, `${what}: Access-Control-Expose-Headers`);
  eq(r.headers.get("access-control-allow-credentials"), null, `${what}: no credentials`);
  matches(r.headers.get("x-request-id"), /^[0-9a-f]{32}$/, `${what}: X-Request-Id`);
  if (status !== 304) eq(r.headers.get("content-type"), JSON_TYPE, `${what}: Content-Type`);
  if (mode === "" || outside === null) return;
  // Without --errors Prism passes the request on and names its violations.
  const header = r.headers.get("sl-violations");
  const reported = JSON.parse(header ?? "[]") as { location: string[] }[];
  ok(reported.some((v) => JSON.stringify(v.location) === JSON.stringify(["request", ...outside!.location])),
     `${what}: Prism reports the request's violation at ${outside.location.join(".")}: ${header}`);
}

function json200(r: Response, cacheControl: string, what: string): void {
  fromService(r, 200, what);
  eq(r.headers.get("cache-control"), cacheControl, `${what}: Cache-Control`);
  matches(r.headers.get("etag"), /^(W\/)?"[0-9a-f]{32}"$/, `${what}: ETag`);
}

// An error the service wrote: the one body shape, with the answer's own request id.
function serviceError(r: Response, error: unknown, status: number, code: string, message: string,
                      param: string | undefined, what: string): void {
  fromService(r, status, what);
  eq(r.headers.get("cache-control"), "no-store", `${what}: Cache-Control`);
  const body = { code, message, ...(param === undefined ? {} : { param }),
                 request_id: r.headers.get("x-request-id") };
  same(error, { error: body }, `${what}: body`);
}

interface Sent { response: Response; error?: unknown }

// A request the document does not accept (a value outside a parameter's schema, a missing
// required parameter, a path that is no endpoint). Straight to the service and through Prism
// without --errors, the service's own answer is checked (`direct`), and Prism must report the
// request's violation; through Prism with --errors, Prism must answer instead of the service.
async function outsideDocument(what: string, expected: Outside, send: () => Promise<Sent>,
                               direct: (s: Sent) => void): Promise<void> {
  outside = expected;
  try {
    const s = await send();
    if (mode !== "errors") {
      direct(s);
      return;
    }
    eq(s.response.status, expected.prismStatus, `${what}: Prism's status`);
    eq(s.response.headers.get("content-type"), "application/problem+json", `${what}: Prism's problem`);
    eq(s.response.headers.get("x-request-id"), null, `${what}: not passed to the service`);
    const problem = s.error as { type: string; validation?: { location: string[] }[] };
    eq(problem.type, `https://stoplight.io/prism/errors#${expected.prismType}`, `${what}: Prism's type`);
    if (expected.location.length > 0) {
      ok((problem.validation ?? []).some((v) => JSON.stringify(v.location) === JSON.stringify(expected.location)),
         `${what}: Prism names ${expected.location.join(".")}: ${JSON.stringify(problem)}`);
    }
  } finally {
    outside = null;
  }
}

const badQuery = (name: string): Outside =>
  ({ location: ["query", name], prismStatus: 422, prismType: "UNPROCESSABLE_ENTITY" });
const missingQuery: Outside = { location: ["query"], prismStatus: 422, prismType: "UNPROCESSABLE_ENTITY" };
const noOperation: Outside = { location: [], prismStatus: 404, prismType: "NO_PATH_MATCHED_ERROR" };

// Deliberately outside the document's types (the request is meant to be refused).
function offDocument<T>(value: unknown): T {
  return value as T;
}

// --- the client -------------------------------------------------------------------------------

const client = createClient<paths>({ baseUrl });

// Every violation Prism reports on an answer: each entry of its `sl-violations` header, except
// the request's own violations when the request is meant to be outside the document (those are
// checked, not counted), and, with --errors, Prism's own answer (a problem, no request id) to a
// request the document accepts, each violation it names (at least one).
async function countViolations(request: Request, response: Response): Promise<void> {
  const what = `${request.method} ${new URL(request.url).pathname}${new URL(request.url).search}`;
  const header = response.headers.get("sl-violations");
  if (header !== null) {
    let entries: { location?: unknown[]; message?: string }[];
    try {
      entries = JSON.parse(header) as typeof entries;
    } catch {
      entries = [{ message: header }];  // "Too many violations! ..." (cut at 8 kB)
    }
    for (const v of entries) {
      if (outside !== null && v.location?.[0] === "request") continue;
      violations++;
      violationLog.push(`${what}: ${response.status} ${(v.location ?? []).join(".")} ${v.message ?? ""}`);
    }
    return;
  }
  if (mode === "" || outside !== null || response.headers.get("x-request-id") !== null) return;
  const problem = await response.clone().json().catch(() => ({})) as
    { type?: string; validation?: { location?: unknown[]; message?: string }[] };
  const named = problem.validation ?? [];
  const entries = named.length > 0 ? named : [{ location: [], message: problem.type ?? "no problem type" }];
  for (const v of entries) {
    violations++;
    violationLog.push(`${what}: Prism answered ${response.status} ${(v.location ?? []).join(".")} ` +
                      `${v.message ?? ""}`);
  }
}

// The statuses the service answered per documented path (Prism's own answers carry no request
// id), and the violations Prism reported.
const answered = new Map<string, Set<number>>();
const track: Middleware = {
  async onResponse({ schemaPath, request, response }) {
    requests++;
    await countViolations(request, response);
    if (response.headers.get("x-request-id") === null) return undefined;
    const statuses = answered.get(schemaPath) ?? new Set<number>();
    statuses.add(response.status);
    answered.set(schemaPath, statuses);
    return undefined;
  },
};
client.use(track);

// Every path of the document, with the statuses the service must have answered on it by the
// end (the rest of the run may see more). A path added to the document fails the type check
// here until this test calls it.
const coverage = {
  "/v1/networks": [200, 304],
  "/v1/connects": [200, 304],
  "/v1/pairs": [200, 304],
  "/v1/account": [200, 400],
  "/v1/history": [200, 400],
  "/v1/history/hash": [200, 404],
  "/v1/history/hash/events": [404],
  "/v1/history/events": [404],
  "/v1/history/hash/changes": [404],
  "/v1/history/changes": [404],
  "/v1/ab": [200, 304],
} satisfies Record<keyof paths, number[]>;

// --- reference data ---------------------------------------------------------------------------

async function referenceEndpoints(): Promise<void> {
  const networks = await client.GET("/v1/networks");
  json200(networks.response, "public, max-age=60", "networks");
  same(networks.data, { networks: fixture.networks.map((n) => network(n.slug)) }, "networks: body");
  eq(typeof networks.data?.networks[0]?.chain_id, "string", "networks: chain_id is a string");

  const etag = networks.response.headers.get("etag") ?? "";
  const notModified = await client.GET("/v1/networks", { params: { header: { "If-None-Match": etag } } });
  fromService(notModified.response, 304, "networks If-None-Match");
  eq(notModified.data, undefined, "networks 304: no data");
  eq(notModified.error, "", "networks 304: no body");
  eq(notModified.response.headers.get("etag")?.replace(/^W\//, ""), etag.replace(/^W\//, ""),
     "networks 304: the same ETag");
  eq(notModified.response.headers.get("cache-control"), "public, max-age=60", "networks 304: Cache-Control");
  const other = await client.GET("/v1/networks", { params: { header: { "If-None-Match": '"0123"' } } });
  json200(other.response, "public, max-age=60", "networks other If-None-Match");
  same(other.data, networks.data, "networks other If-None-Match: the whole body");

  const connects = await client.GET("/v1/connects");
  json200(connects.response, "public, max-age=60", "connects");
  const joined = [...new Set(fixture.pairs.map((p) => {
    const a = asset(p.asset_a_id).slug;
    const b = asset(p.asset_b_id).slug;
    return `${a} ${b}`;
  }))];
  same(connects.data, { connects: joined.map((j) => {
    const [a, b] = j.split(" ") as [string, string];
    return { bc1: network(a), bc2: network(b) };
  }) }, "connects: body");
  const connectsTag = connects.response.headers.get("etag") ?? "";
  const connects304 = await client.GET("/v1/connects", { params: { header: { "If-None-Match": connectsTag } } });
  fromService(connects304.response, 304, "connects If-None-Match");

  const pairs = await client.GET("/v1/pairs");
  json200(pairs.response, "public, max-age=60", "pairs");
  same(pairs.data, { pairs: fixture.pairs.map(pair) }, "pairs: body");
  const usdt = pairs.data?.pairs[1];
  eq([usdt?.b2a_disabled, usdt?.asset_a.decimals, usdt?.a2b_auto_confirm_deposit_amount],
     [true, 6, "88.45"], "pairs: the USDT pair's types");
  const pairs304 = await client.GET("/v1/pairs", {
    params: { header: { "If-None-Match": pairs.response.headers.get("etag") ?? "" } } });
  fromService(pairs304.response, 304, "pairs If-None-Match");

  const ab = await client.GET("/v1/ab");
  json200(ab.response, "public, max-age=5", "ab");
  same(ab.data, { chains: fixture.networks.map((n) => {
    const c = find(fixture.chains, (x) => x.slug === n.slug, `chain ${n.slug}`);
    const coin = find(fixture.assets, (x) => x.slug === n.slug && x.asset_type === "Coin", `coin on ${n.slug}`);
    const net = network(n.slug);
    return { slug: net.slug, network: net.network, chain_id: net.chain_id, base_chain: net.base_chain,
             status: c.status, latest_height: c.latest_height, name: coin.name, symbol: coin.symbol,
             decimals: coin.decimals, supply: c.supply };
  }) }, "ab: body");
  const ab304 = await client.GET("/v1/ab", {
    params: { header: { "If-None-Match": ab.response.headers.get("etag") ?? "" } } });
  fromService(ab304.response, 304, "ab If-None-Match");

  await outsideDocument("networks/ (not an endpoint)", noOperation,
    () => client.GET(offDocument<"/v1/networks">("/v1/networks/")),
    (s) => serviceError(s.response, s.error, 404, "not_found", "No such endpoint", undefined,
                        "networks/ (not an endpoint)"));
  await outsideDocument("/v1/nope", noOperation,
    () => client.GET(offDocument<"/v1/ab">("/v1/nope")),
    (s) => serviceError(s.response, s.error, 404, "not_found", "No such endpoint", undefined, "/v1/nope"));
}

// --- /v1/account ------------------------------------------------------------------------------

const MAIN_RECIPIENT = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
// Its deposit address on UNITIoT: the CREATE2 rule with the fixture's UNITIoT factory (the
// example of docs/tour.md, the same sample networks).
const MAIN_RECIPIENT_DEPOSIT = "0x617866C9257ef02cEf8074A5D1a7D372B142cbEb";
const SIDE_RECIPIENT = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE";

async function account(): Promise<void> {
  const query = { recipient_address: MAIN_RECIPIENT, recipient_blockchain: "unitcore",
                  deposit_blockchain: "unitiot" } as const;
  const first = await client.GET("/v1/account", { params: { query } });
  json200(first.response, "public, max-age=86400, immutable", "account");
  same(first.data, { ...query, deposit_address: MAIN_RECIPIENT_DEPOSIT }, "account: body");

  // On a SideBase recipient chain any case is accepted and echoed; the address is the same.
  const lower = await client.GET("/v1/account", { params: { query: {
    recipient_address: SIDE_RECIPIENT.toLowerCase(), recipient_blockchain: "unitiot",
    deposit_blockchain: "unitcore" } } });
  json200(lower.response, "public, max-age=86400, immutable", "account lower case");
  const deposit = lower.data?.deposit_address ?? "";
  matches(deposit, /^0x[0-9a-fA-F]{40}$/, "account lower case: deposit address");
  ok(deposit !== deposit.toLowerCase(), "account lower case: the deposit address is checksummed");
  same(lower.data, { recipient_address: SIDE_RECIPIENT.toLowerCase(), recipient_blockchain: "unitiot",
                     deposit_blockchain: "unitcore", deposit_address: deposit }, "account lower case: body");
  const upper = await client.GET("/v1/account", { params: { query: {
    recipient_address: SIDE_RECIPIENT, recipient_blockchain: "unitiot", deposit_blockchain: "unitcore" } } });
  json200(upper.response, "public, max-age=86400, immutable", "account checksummed");
  eq(upper.data?.deposit_address, deposit, "account: the same deposit address in any case");

  const checksum = await client.GET("/v1/account", { params: { query: { ...query,
    recipient_address: MAIN_RECIPIENT.toLowerCase() } } });
  serviceError(checksum.response, checksum.error, 400, "invalid_parameter",
               `recipient_address must be in checksum form on unitcore: ${MAIN_RECIPIENT}`,
               "recipient_address", "account not checksummed");
  const twice = await client.GET("/v1/account", { params: { query: { ...query, deposit_blockchain: "unitcore" } } });
  serviceError(twice.response, twice.error, 400, "invalid_parameter",
               "deposit_blockchain must differ from recipient_blockchain", "deposit_blockchain",
               "account same chain twice");
  const elsewhere = await client.GET("/v1/account", { params: { query: { ...query,
    recipient_blockchain: "unitcoretestnet" } } });
  serviceError(elsewhere.response, elsewhere.error, 400, "invalid_parameter",
               "recipient_blockchain must be the slug of a chain of this service: unitcore, unitiot",
               "recipient_blockchain", "account chain of another deployment");

  await outsideDocument("account short address", badQuery("recipient_address"),
    () => client.GET("/v1/account", { params: { query: { ...query, recipient_address: "0x1234" } } }),
    (s) => serviceError(s.response, s.error, 400, "invalid_parameter",
                        "recipient_address must be 0x followed by 40 hex digits", "recipient_address",
                        "account short address"));
  await outsideDocument("account without recipient", missingQuery,
    () => client.GET("/v1/account", { params: { query: offDocument<typeof query>({
      recipient_blockchain: "unitcore", deposit_blockchain: "unitiot" }) } }),
    (s) => serviceError(s.response, s.error, 400, "missing_parameter", "recipient_address is required",
                        "recipient_address", "account without recipient"));
  await outsideDocument("account unknown slug", badQuery("deposit_blockchain"),
    () => client.GET("/v1/account", { params: { query: { ...query,
      deposit_blockchain: offDocument<"unitiot">("mars") } } }),
    (s) => serviceError(s.response, s.error, 400, "invalid_parameter",
                        "deposit_blockchain must be the slug of a chain of this service: unitcore, unitiot",
                        "deposit_blockchain", "account unknown slug"));
}

// --- /v1/history ------------------------------------------------------------------------------

async function history(): Promise<void> {
  const all = records(() => true);
  const get = async (query: NonNullable<paths["/v1/history"]["get"]["parameters"]["query"]>,
                     expected: Schemas["HistoryPage"], what: string) => {
    const r = await client.GET("/v1/history", { params: { query } });
    json200(r.response, "public, max-age=2", what);
    same(r.data, expected, `${what}: body`);
    return r.data;
  };

  const first = await get({}, page(all, 0, 20), "history defaults");
  eq([typeof first?.list[0]?.pair_id, typeof first?.list[0]?.source_asset_decimals, typeof first?.total_history],
     ["number", "number", "string"], "history: JSON types");
  ok(all.length > 20, "history: the fixture fills more than one default page");
  await get({ page_id: "1", page_size: "7" }, page(all, 1, 7), "history page 1 of 7");
  await get({ page_id: "1000", order: "DESC" }, page(all, 1000, 20), "history past the end");
  await get({ page_size: "0" }, page(all, 0, 20), "history page_size=0 is the default");
  // The spellings the document accepts since it agrees with the service (issue 11): page sizes
  // above 100 are served as 100, status and order in any case.
  await get({ page_size: "500" }, page(all, 0, 100), "history page_size=500");
  await get({ page_size: "101", page_id: "0" }, page(all, 0, 100), "history page_size=101");
  await get({ order: "asc", page_size: "5", page_id: "1" }, page(records(() => true, true), 1, 5),
            "history order=asc");
  await get({ order: "Desc", page_size: "3" }, page(all, 0, 3), "history order=Desc");
  // Any unsigned decimal up to 2^64 - 1 with any number of leading zeros (the pattern of
  // Uint64Parameter): past the end, an empty page with the true totals; the largest page size
  // is served as 100.
  const longFive = "00000000000000000000000005";
  for (const pageId of [longFive, "18446744073709551615"]) {
    const body = await get({ page_id: pageId }, page(all, pageId, 20), `history page_id=${pageId}`);
    eq([body?.list.length, body?.total_history], [0, String(all.length)],
       `history page_id=${pageId}: an empty page, the true total`);
  }
  await get({ page_size: "18446744073709551615" }, page(all, 0, 100), "history page_size=2^64-1");
  await get({ page_size: "0".repeat(30) + "7" }, page(all, 0, 7), "history page_size=0...07");
  const pending = records((r) => r.status === "Pending");
  ok(pending.length > 0, "history: the fixture has Pending records");
  await get({ status: "pending", page_size: "100" }, page(pending, 0, 100, { status: "Pending" }),
            "history status=pending");
  await get({ status: "CONFIRMED", order: "asc", page_size: "500" },
            page(records((r) => r.status === "Confirmed", true), 0, 100, { status: "Confirmed" }),
            "history status=CONFIRMED order=asc page_size=500");
  await get({ status: "" }, page(all, 0, 20), "history status= (unused)");

  // Every filter alone, with addresses and hashes in another case than the records'.
  const r0 = find(fixture.history, (r) => r.destination_tx_hash !== undefined && r.destination_tx_hash !== "",
                  "record with a payout");
  const alone: [NonNullable<paths["/v1/history"]["get"]["parameters"]["query"]>,
                (r: FixtureRecord) => boolean, Partial<Record<keyof typeof NO_FILTER, string>>][] = [
    [{ source_deposit_address: r0.source_deposit_address.toLowerCase() },
     (r) => r.source_deposit_address === r0.source_deposit_address,
     { source_deposit_address: r0.source_deposit_address.toLowerCase() }],
    [{ source_sender: r0.source_sender }, (r) => r.source_sender === r0.source_sender,
     { source_sender: r0.source_sender }],
    [{ source_blockchain: "unitiot" }, (r) => r.source_slug === "unitiot", { source_blockchain: "unitiot" }],
    [{ source_asset_id: "3" }, (r) => String(r.source_asset_id) === "3", { source_asset_id: "3" }],
    [{ source_tx_hash: "0x" + r0.source_tx_hash.slice(2).toUpperCase() },
     (r) => r.source_tx_hash === r0.source_tx_hash, {}],
    [{ destination_address: r0.destination_address.toUpperCase().replace("0X", "0x") },
     (r) => r.destination_address === r0.destination_address,
     { destination_address: r0.destination_address.toUpperCase().replace("0X", "0x") }],
    [{ destination_blockchain: "unitcore" }, (r) => r.destination_slug === "unitcore",
     { destination_blockchain: "unitcore" }],
    [{ destination_asset_id: "06" }, (r) => String(r.destination_asset_id) === "6", { destination_asset_id: "06" }],
    [{ destination_tx_hash: r0.destination_tx_hash ?? "" }, (r) => r.destination_tx_hash === r0.destination_tx_hash, {}],
    [{ pair_id: "2" }, (r) => Number(r.pair_id) === 2, { pairId: "2" }],
    [{ status: "Error" }, (r) => r.status === "Error", { status: "Error" }],
  ];
  for (const [query, predicate, echo] of alone) {
    const matching = records(predicate);
    ok(matching.length > 0, `history: the fixture has records for ${JSON.stringify(query)}`);
    await get({ ...query, page_size: "100" }, page(matching, 0, 100, echo), `history ${JSON.stringify(query)}`);
  }
  await get({ pair_id: "18446744073709551615" }, page([], 0, 20, { pairId: "18446744073709551615" }),
            "history pair_id=2^64-1 (no such pair)");
  await get({ pair_id: "1", source_blockchain: "unitiot", status: "confirmed", order: "ASC", page_size: "100" },
            page(records((r) => Number(r.pair_id) === 1 && r.source_slug === "unitiot" && r.status === "Confirmed", true),
                 0, 100, { pairId: "1", source_blockchain: "unitiot", status: "Confirmed" }),
            "history filters combined");

  const invalid = async (what: string, query: NonNullable<paths["/v1/history"]["get"]["parameters"]["query"]>,
                         code: string, message: string, param: string, documented: boolean) => {
    const send = () => client.GET("/v1/history", { params: { query } });
    const check = (s: Sent) => serviceError(s.response, s.error, 400, code, message, param, what);
    if (documented) check(await send());
    else await outsideDocument(what, badQuery(param), send, check);
  };
  const slugs = "unitcore, unitiot";
  await invalid("history chain of another deployment", { source_blockchain: "unitiottestnet" },
                "invalid_parameter", `source_blockchain must be the slug of a chain of this service: ${slugs}`,
                "source_blockchain", true);
  await invalid("history destination chain of another deployment", { destination_blockchain: "unitcoretestnet" },
                "invalid_parameter", `destination_blockchain must be the slug of a chain of this service: ${slugs}`,
                "destination_blockchain", true);
  await invalid("history status=nope", { status: "nope" }, "invalid_parameter",
                "status must be one of Deposit, Pending, Confirmed, Error", "status", false);
  await invalid("history order=up", { order: "up" }, "invalid_parameter", "order must be ASC or DESC",
                "order", false);
  await invalid("history page_id=-1", { page_id: "-1" }, "invalid_parameter",
                "page_id must be an unsigned decimal integer", "page_id", false);
  await invalid("history page_size=ten", { page_size: "ten" }, "invalid_parameter",
                "page_size must be an unsigned decimal integer", "page_size", false);
  await invalid("history page_size twice", { page_size: offDocument<string>(["1", "2"]) }, "duplicate_parameter",
                "page_size is given more than once", "page_size", false);
  // What a validator coercing query strings to integers would take for a number, and 2^64: the
  // document refuses them (Prism with --errors: its 422 at query.page_size) as the service does
  // (its 400 invalid_parameter, param page_size). " 5" is sent as %205, "+5" as %2B5.
  for (const size of ["1e2", "+5", "0x10", " 5", "1.0"]) {
    await invalid(`history page_size=${size}`, { page_size: size }, "invalid_parameter",
                  "page_size must be an unsigned decimal integer", "page_size", false);
  }
  await invalid("history page_size=2^64", { page_size: "18446744073709551616" }, "invalid_parameter",
                "page_size is too large (the maximum is 18446744073709551615)", "page_size", false);
  await invalid("history pair_id=99999999999999999999", { pair_id: "99999999999999999999" }, "invalid_parameter",
                "pair_id is too large (the maximum is 18446744073709551615)", "pair_id", false);
  await invalid("history short sender", { source_sender: "0x1234" }, "invalid_parameter",
                "source_sender must be 0x followed by 40 hex digits", "source_sender", false);
  await invalid("history short tx hash", { destination_tx_hash: "0x" + "a".repeat(63) }, "invalid_parameter",
                "destination_tx_hash must be 0x followed by 64 hex digits", "destination_tx_hash", false);
  await invalid("history pair_id=-1", { pair_id: "-1" }, "invalid_parameter",
                "pair_id must be an unsigned decimal integer", "pair_id", false);
}

// --- /v1/history/hash -------------------------------------------------------------------------

async function historyByHash(): Promise<void> {
  const byHash = async (hash: string, r: FixtureRecord, what: string) => {
    const got = await client.GET("/v1/history/hash", { params: { query: { hash } } });
    const final = r.status === "Confirmed" || r.status === "Error";
    json200(got.response, final ? "public, max-age=3600" : "public, max-age=2", what);
    same(got.data, recordWithMessage(r), `${what}: body`);
  };
  for (const status of ["Deposit", "Pending", "Confirmed", "Error"] as const) {
    const r = find(fixture.history, (x) => x.status === status, `${status} record`);
    await byHash(r.hash, r, `history/hash ${status}`);
  }
  const withMessage = find(fixture.history, (x) => Boolean(x.status_message), "record with a status_message");
  await byHash("0X" + withMessage.hash.toUpperCase(), withMessage, "history/hash 0X and upper case");

  const unknown = await client.GET("/v1/history/hash", { params: { query: { hash: "0".repeat(64) } } });
  serviceError(unknown.response, unknown.error, 404, "not_found", "No history record has this hash", "hash",
               "history/hash unknown");
  await outsideDocument("history/hash short", badQuery("hash"),
    () => client.GET("/v1/history/hash", { params: { query: { hash: "abc" } } }),
    (s) => serviceError(s.response, s.error, 400, "invalid_parameter",
                        "hash must be 64 hex digits, with or without 0x", "hash", "history/hash short"));
  await outsideDocument("history/hash missing", missingQuery,
    () => client.GET("/v1/history/hash", { params: { query: offDocument<{ hash: string }>({}) } }),
    (s) => serviceError(s.response, s.error, 400, "missing_parameter", "hash is required", "hash",
                        "history/hash missing"));
}

// --- the event streams and long-polls (this stack serves none: test_events.py has them) -------

async function eventStreams(): Promise<void> {
  const hash = find(fixture.history, (x) => x.status === "Pending", "Pending record").hash;
  const record = await client.GET("/v1/history/hash/events", { params: { query: { hash } } });
  serviceError(record.response, record.error, 404, "not_found", "Events are not served here",
               undefined, "history/hash/events off");
  const address = await client.GET("/v1/history/events",
                                   { params: { query: { address: fixture.history[0].destination_address } } });
  serviceError(address.response, address.error, 404, "not_found", "Events are not served here",
               undefined, "history/events off");
  const recordPoll = await client.GET("/v1/history/hash/changes", { params: { query: { hash } } });
  serviceError(recordPoll.response, recordPoll.error, 404, "not_found", "Events are not served here",
               undefined, "history/hash/changes off");
  const addressPoll = await client.GET("/v1/history/changes",
                                       { params: { query: { address: fixture.history[0].destination_address, after: "0" } } });
  serviceError(addressPoll.response, addressPoll.error, 404, "not_found", "Events are not served here",
               undefined, "history/changes off");
}

// --- the CORS preflight (fetch: the document describes it as x-preflight, not an operation) ---

const PREFLIGHT: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, HEAD, OPTIONS",
  "access-control-allow-headers": "If-None-Match, Content-Type",
  "access-control-max-age": "86400",
  "allow": "GET, HEAD, OPTIONS",
};

async function preflight(): Promise<number> {
  // Prism routes only the document's operations: there the preflight is not its to judge.
  if (mode !== "") return 0;
  for (const path of ["/v1/networks", "/v1/history?status=Confirmed", "/v1/nope"]) {
    const r = await fetch(baseUrl + path, { method: "OPTIONS", headers: {
      "Origin": "https://explorer.example", "Access-Control-Request-Method": "GET",
      "Access-Control-Request-Headers": "if-none-match" } });
    eq(r.status, 204, `preflight ${path}: status`);
    eq(await r.text(), "", `preflight ${path}: no body`);
    for (const [name, value] of Object.entries(PREFLIGHT)) {
      eq(r.headers.get(name), value, `preflight ${path}: ${name}`);
    }
    eq(r.headers.get("access-control-allow-credentials"), null, `preflight ${path}: no credentials`);
  }
  return 3;
}

// --- run --------------------------------------------------------------------------------------

// A failed check's error goes on (uncaught: exit status 1) after the summary line.
let preflights = 0;
try {
  await referenceEndpoints();
  await account();
  await history();
  await historyByHash();
  await eventStreams();
  preflights = await preflight();

  for (const [path, statuses] of Object.entries(coverage)) {
    const seen = answered.get(path) ?? new Set<number>();
    ok(statuses.every((s) => seen.has(s)),
       `${path}: the service answered ${statuses.join(", ")} (seen: ${[...seen].join(", ") || "nothing"})`);
  }
} finally {
  for (const line of violationLog) console.error(`violation: ${line}`);
  console.log(`ts-client: mode=${mode || "direct"} requests=${requests} preflights=${preflights} ` +
              `checks=${checks} violations=${violations} endpoints=${Object.keys(coverage).join(",")}`);
}
if (violations > 0) process.exitCode = 1;
