// Wire formatting and query-string rules shared by the endpoints: the contract's
// (docs/openapi.yaml, docs/contract-notes.md), as the project's worker applies them.
import { createXXHash128 } from 'hash-wasm';

// One hasher per process (WebAssembly, made once; strongEtag runs synchronously).
const xxh128 = await createXXHash128();

// Base units -> whole units with `decimals` fraction digits: plain decimal, no exponent, no
// trailing zeros, no trailing dot, "0" for zero. Text only, so amounts up to 2^256-1 stay exact.
// A NULL amount (not recorded yet) is "".
export function formatUnits(baseUnits, decimals) {
  if (baseUnits === null || baseUnits === undefined || baseUnits === '') return '';
  if (decimals === 0) return baseUnits;
  const padded = baseUnits.length <= decimals ? baseUnits.padStart(decimals + 1, '0') : baseUnits;
  const point = padded.length - decimals;
  const whole = padded.slice(0, point);
  const fraction = padded.slice(point).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

// A strong ETag of the body: its XXH3-128 in canonical hex (hash-wasm), as the worker's.
export function strongEtag(body) {
  return `"${xxh128.init().update(body).digest('hex')}"`;
}

// If-None-Match: a list of tags (weak ones compare as strong), or "*".
export function ifNoneMatchMatches(header, etag) {
  for (let tag of header.split(',')) {
    tag = tag.trim();
    if (tag === '*') return true;
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}

// --- errors --------------------------------------------------------------------------------

// An error answer as a value; the app's error handler writes the one error body shape.
export class ApiError extends Error {
  constructor(status, code, message, param = '') {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

export const invalidParameter = (param, message) =>
  new ApiError(400, 'invalid_parameter', message, param);
export const missingParameter = (param) =>
  new ApiError(400, 'missing_parameter', `${param} is required`, param);
export const duplicateParameter = (param) =>
  new ApiError(400, 'duplicate_parameter', `${param} is given more than once`, param);

// --- the query string ----------------------------------------------------------------------

export const MAX_QUERY_BYTES = 4096;
const INVALID = Symbol('invalid');
const utf8 = new TextDecoder('utf-8', { fatal: true });

// application/x-www-form-urlencoded decoding: "+" is a space, %XX a byte; a bad escape, a NUL
// byte or invalid UTF-8 makes the component INVALID.
function decodeComponent(text) {
  if (!text.includes('%')) {
    const plus = text.includes('+') ? text.replaceAll('+', ' ') : text;
    return plus.includes('\0') ? INVALID : plus;
  }
  const bytes = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2b) {
      bytes.push(0x20);
    } else if (c === 0x25) {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return INVALID;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      bytes.push(...Buffer.from(text[i], 'utf8'));
    }
  }
  if (bytes.includes(0)) return INVALID;
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return INVALID;
  }
}

// Fastify's querystringParser: the raw items in order, [name, value] (undecodable names are
// dropped like unknown ones; an undecodable value is kept as INVALID until an endpoint that
// knows the name looks at it). `length` is the raw query's length for the 414 check.
export function parseQueryString(raw) {
  const items = [];
  for (const item of raw.split('&')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = decodeComponent(eq < 0 ? item : item.slice(0, eq));
    if (name === INVALID) continue;
    items.push([name, eq < 0 ? '' : item.slice(eq + 1)]);
  }
  return { items, length: raw.length };
}

// The parameters an endpoint knows, as a Map name -> value: over-long query (414), a bad
// value (400), a known name given twice (400, checked in the endpoint's order), and empty
// values dropped (an empty value means the parameter is unused).
export function knownParams(query, known) {
  if (query.length > MAX_QUERY_BYTES) {
    throw new ApiError(414, 'query_too_long',
      `The query string is longer than ${MAX_QUERY_BYTES} bytes`);
  }
  const seen = new Map();
  for (const [name, raw] of query.items) {
    if (!known.includes(name)) continue;
    const value = decodeComponent(raw);
    if (value === INVALID) {
      throw invalidParameter(name,
        `${name} has an invalid percent-escape, a NUL byte or invalid UTF-8`);
    }
    if (seen.has(name)) seen.get(name).push(value);
    else seen.set(name, [value]);
  }
  const params = new Map();
  for (const name of known) {
    const values = seen.get(name);
    if (!values) continue;
    if (values.length > 1) throw duplicateParameter(name);
    if (values[0] !== '') params.set(name, values[0]);
  }
  return params;
}
