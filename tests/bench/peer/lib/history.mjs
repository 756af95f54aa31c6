// GET /v1/history and GET /v1/history/hash: validation, SQL and the record's JSON shape.
import { ApiError, formatUnits, invalidParameter, missingParameter } from './format.mjs';

export const HISTORY_PARAMS = [
  'page_id', 'page_size', 'source_deposit_address', 'source_sender', 'source_blockchain',
  'source_asset_id', 'source_tx_hash', 'destination_address', 'destination_blockchain',
  'destination_asset_id', 'destination_tx_hash', 'pair_id', 'status', 'order',
];
export const HASH_PARAMS = ['hash'];

const STATUSES = ['Deposit', 'Pending', 'Confirmed', 'Error'];
const UINT64_MAX = 18446744073709551615n;
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

const RECORD_COLUMNS = 'id, hash, pair_id, source_chain, destination_chain, ' +
  'source_deposit_address, source_sender, destination_address, source_block_number, ' +
  'destination_block_number, source_block_timestamp, destination_block_timestamp, ' +
  'source_tx_hash, destination_tx_hash, source_asset_id, destination_asset_id, source_amount, ' +
  'destination_amount, fee, status, status_message';

// --- validation ----------------------------------------------------------------------------

function uint64(name, value) {
  if (!/^[0-9]+$/.test(value)) throw invalidParameter(name, `${name} must be an unsigned decimal integer`);
  const n = BigInt(value);
  if (n > UINT64_MAX) {
    throw invalidParameter(name, `${name} is too large (the maximum is 18446744073709551615)`);
  }
  return n;
}

// A BIGINT UNSIGNED for the driver: a number while exact, else its digits.
const sqlId = (n) => (n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString());

function address(name, value) {
  if (value.length === 42 && value.startsWith('0x') && /^[0-9a-fA-F]{40}$/.test(value.slice(2))) {
    return value.toLowerCase();
  }
  throw invalidParameter(name, `${name} must be 0x followed by 40 hex digits`);
}

function txHash(name, value) {
  if (value.length === 66 && value.startsWith('0x') && /^[0-9a-fA-F]{64}$/.test(value.slice(2))) {
    return value.toLowerCase();
  }
  throw invalidParameter(name, `${name} must be 0x followed by 64 hex digits`);
}

function chain(name, value, reference) {
  const c = reference.chainBySlug.get(value);
  if (c) return c;
  throw invalidParameter(name,
    `${name} must be the slug of a chain of this service: ${reference.slugList()}`);
}

function status(name, value) {
  const canonical = STATUSES.find((s) => s.toLowerCase() === value.toLowerCase());
  if (canonical) return canonical;
  throw invalidParameter(name, `${name} must be one of Deposit, Pending, Confirmed, Error`);
}

function order(name, value) {
  const upper = value.toUpperCase();
  if (upper === 'ASC' || upper === 'DESC') return upper;
  throw invalidParameter(name, `${name} must be ASC or DESC`);
}

// Filters in the order they are checked: [parameter, column, parse, coarse (history_counts)].
const FILTERS = [
  ['source_deposit_address', 'source_deposit_address', address, false],
  ['source_sender', 'source_sender', address, false],
  ['source_blockchain', 'source_chain', (n, v, ref) => chain(n, v, ref).id, true],
  ['source_asset_id', 'source_asset_id', (n, v) => sqlId(uint64(n, v)), true],
  ['source_tx_hash', 'source_tx_hash', txHash, false],
  ['destination_address', 'destination_address', address, false],
  ['destination_blockchain', 'destination_chain', (n, v, ref) => chain(n, v, ref).id, true],
  ['destination_asset_id', 'destination_asset_id', (n, v) => sqlId(uint64(n, v)), true],
  ['destination_tx_hash', 'destination_tx_hash', txHash, false],
  ['pair_id', 'pair_id', (n, v) => sqlId(uint64(n, v)), true],
  ['status', 'status', status, true],
];

// The filters echoed in the answer, with their wire names.
const ECHOED = [
  ['source_deposit_address', 'source_deposit_address'], ['source_sender', 'source_sender'],
  ['source_blockchain', 'source_blockchain'], ['source_asset_id', 'source_asset_id'],
  ['destination_address', 'destination_address'],
  ['destination_blockchain', 'destination_blockchain'],
  ['destination_asset_id', 'destination_asset_id'], ['pair_id', 'pairId'], ['status', 'status'],
];

export function parseHistoryQuery(params, reference) {
  const q = {
    pageId: params.has('page_id') ? uint64('page_id', params.get('page_id')) : 0n,
    pageSize: DEFAULT_PAGE_SIZE,
    order: 'DESC',
    conditions: [],
    values: [],
    fine: false,
    status: null,
    addresses: [],  // [column, value] of each address filter
  };
  if (params.has('page_size')) {
    const size = uint64('page_size', params.get('page_size'));
    q.pageSize = size === 0n ? DEFAULT_PAGE_SIZE : Number(size > MAX_PAGE_SIZE ? MAX_PAGE_SIZE : size);
  }
  if (params.has('order')) q.order = order('order', params.get('order'));
  for (const [name, column, parse, coarse] of FILTERS) {
    if (!params.has(name)) continue;
    const value = parse(name, params.get(name), reference);
    if (name === 'status') q.status = value;
    q.conditions.push(`${column} = ?`);
    q.values.push(value);
    if (!coarse) q.fine = true;
    if (parse === address) q.addresses.push([column, value]);
  }
  return q;
}

// --- the reads -----------------------------------------------------------------------------

// Exact totals from the counter rows the schema keeps (kept by triggers): coarse filters only
// (status, pair, chains, assets) sum history_counts; one address, alone or with a status, sums
// history_address_counts; anything else (a transaction hash, an address with another filter)
// names few records, counted on its index.
async function countHistory(pool, q) {
  const where = q.conditions.length ? ` WHERE ${q.conditions.join(' AND ')}` : '';
  const oneAddress = q.addresses.length === 1 && q.conditions.length === (q.status ? 2 : 1);
  let sql = q.fine
    ? `SELECT COUNT(*) AS total FROM history${where}`
    : `SELECT COALESCE(SUM(records), 0) AS total FROM history_counts${where}`;
  let values = q.values;
  if (oneAddress) {
    const [[column, value]] = q.addresses;
    sql = 'SELECT COALESCE(SUM(records), 0) AS total FROM history_address_counts ' +
      `WHERE address_column = ? AND address = ?${q.status ? ' AND status = ?' : ''}`;
    values = q.status ? [column, value, q.status] : [column, value];
  }
  const [rows] = await pool.execute(sql, values);
  return BigInt(rows[0].total);
}

async function pageOfHistory(pool, q, offset) {
  const where = q.conditions.length ? ` WHERE ${q.conditions.join(' AND ')}` : '';
  const [rows] = await pool.execute(
    `SELECT ${RECORD_COLUMNS} FROM history${where} ORDER BY id ${q.order} LIMIT ? OFFSET ?`,
    [...q.values, String(q.pageSize), String(offset)]);
  return rows;
}

// --- rendering -----------------------------------------------------------------------------

const STATUS_MESSAGES = {
  Deposit: 'The deposit was seen on the source chain and awaits confirmation.',
  Pending: 'The deposit is confirmed and the payout on the destination chain is under way.',
  Confirmed: 'The transfer is complete: the payout is confirmed on the destination chain.',
  Error: "The transfer could not be completed; contact support with this record's hash.",
};

const text = (value) => (value === null ? '' : String(value));

function record(row, reference, withStatusMessage) {
  const sc = reference.chainById.get(row.source_chain);
  const dc = reference.chainById.get(row.destination_chain);
  const sa = reference.assetById.get(String(row.source_asset_id));
  const da = reference.assetById.get(String(row.destination_asset_id));
  const r = {
    id: String(row.id),
    hash: row.hash,
    pair_id: Number(row.pair_id),
    source_slug: sc.slug,
    source_network: sc.network,
    source_chain_id: String(sc.chain_id),
    source_base_chain: sc.base_chain,
    destination_slug: dc.slug,
    destination_network: dc.network,
    destination_chain_id: String(dc.chain_id),
    destination_base_chain: dc.base_chain,
    source_deposit_address: row.source_deposit_address,
    source_sender: row.source_sender,
    destination_address: row.destination_address,
    source_block_number: text(row.source_block_number),
    destination_block_number: text(row.destination_block_number),
    source_block_timestamp: text(row.source_block_timestamp),
    destination_block_timestamp: text(row.destination_block_timestamp),
    source_tx_hash: row.source_tx_hash,
    destination_tx_hash: text(row.destination_tx_hash),
    source_asset_id: String(sa.id),
    destination_asset_id: String(da.id),
    source_asset_address: sa.address,
    destination_asset_address: da.address,
    source_asset_name: sa.name,
    destination_asset_name: da.name,
    source_asset_symbol: sa.symbol,
    destination_asset_symbol: da.symbol,
    source_asset_decimals: sa.decimals,
    destination_asset_decimals: da.decimals,
    source_asset_type: sa.asset_type,
    destination_asset_type: da.asset_type,
    // The fee is charged in the source asset.
    source_amount: formatUnits(row.source_amount, sa.decimals),
    destination_amount: formatUnits(row.destination_amount, da.decimals),
    fee: formatUnits(row.fee, sa.decimals),
    status: row.status,
  };
  if (withStatusMessage) r.status_message = row.status_message || STATUS_MESSAGES[row.status];
  return r;
}

// --- the JSON schemas of the answers (Fastify serializes with them) ------------------------

const str = { type: 'string' };
const int = { type: 'integer' };
const recordProperties = {
  id: str, hash: str, pair_id: int,
  source_slug: str, source_network: str, source_chain_id: str, source_base_chain: str,
  destination_slug: str, destination_network: str, destination_chain_id: str,
  destination_base_chain: str,
  source_deposit_address: str, source_sender: str, destination_address: str,
  source_block_number: str, destination_block_number: str,
  source_block_timestamp: str, destination_block_timestamp: str,
  source_tx_hash: str, destination_tx_hash: str,
  source_asset_id: str, destination_asset_id: str,
  source_asset_address: str, destination_asset_address: str,
  source_asset_name: str, destination_asset_name: str,
  source_asset_symbol: str, destination_asset_symbol: str,
  source_asset_decimals: int, destination_asset_decimals: int,
  source_asset_type: str, destination_asset_type: str,
  source_amount: str, destination_amount: str, fee: str, status: str,
};

export const historySchema = {
  type: 'object',
  properties: {
    page_id: str, page_size: str, total_page: str, total_history: str,
    list: { type: 'array', items: { type: 'object', properties: recordProperties } },
    ...Object.fromEntries(ECHOED.map(([, wire]) => [wire, str])),
  },
};

export const recordSchema = {
  type: 'object',
  properties: { ...recordProperties, status_message: str },
};

// --- the endpoints -------------------------------------------------------------------------

export async function history(pool, reference, params) {
  const q = parseHistoryQuery(params, reference);
  const total = await countHistory(pool, q);
  const pageSize = BigInt(q.pageSize);
  const totalPage = (total + pageSize - 1n) / pageSize;
  let rows = [];
  if (q.pageId < totalPage) {
    rows = await pageOfHistory(pool, q, q.pageId * pageSize);
    await reference.covering(rows);
  }
  const answer = {
    page_id: q.pageId.toString(),
    page_size: String(q.pageSize),
    total_page: totalPage.toString(),
    total_history: total.toString(),
    list: rows.map((row) => record(row, reference, false)),
  };
  for (const [name, wire] of ECHOED) {
    answer[wire] = name === 'status' && q.status ? q.status : (params.get(name) ?? '');
  }
  return answer;
}

export async function historyByHash(pool, reference, params) {
  let hash = params.get('hash');
  if (hash === undefined) throw missingParameter('hash');
  if (hash.startsWith('0x') || hash.startsWith('0X')) hash = hash.slice(2);
  if (!/^[0-9a-fA-F]{64}$/.test(hash)) {
    throw invalidParameter('hash', 'hash must be 64 hex digits, with or without 0x');
  }
  const [rows] = await pool.execute(`SELECT ${RECORD_COLUMNS} FROM history WHERE hash = ?`,
    [hash.toLowerCase()]);
  if (rows.length === 0) throw new ApiError(404, 'not_found', 'No history record has this hash', 'hash');
  await reference.covering(rows);
  return record(rows[0], reference, true);
}

// Confirmed and Error are final: the record will not change again.
export const isFinal = (r) => r.status === 'Confirmed' || r.status === 'Error';
