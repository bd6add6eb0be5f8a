import { keys } from '../model/keys.js';
import { RETENTION_MS } from '../model/retention.js';
import { writeRecordSchema, type WriteRecord } from '../model/session.js';

/**
 * Idempotency records that leave the session object (docs/design.md, "Keyed writes"). A write with an
 * Idempotency-Key leaves a keyed record in `satchel.writes`, kept for RETENTION_MS so that a retry within
 * that time is a no-op. Kept in the object, they made every write of a busy session rewrite up to 1,000 of
 * them (about 250 KB). Now the object keeps only the newest few: once it holds KEYED_PUSH_AT, a write
 * first stores the older ones as create-only objects of their own (`k/<id>/<hash>.json`, one PUT each, in
 * parallel, before its commit) and adds their hashes to a Bloom filter in the object (`satchel.kf`). A key
 * that is not in the object is looked up in storage only when a filter may hold it: a fresh key costs no
 * request, except for the filter's false positives (under 1% per filter generation at its capacity).
 *
 * Order makes it safe: a record leaves the object only in a commit that follows its object's PUT, so a
 * reader that does not find a key in the object it read finds it in storage after that read.
 */

/** Keyed records a write leaves in the object after storing the older ones. */
export const KEYED_KEEP = 8;
/** The object holds at most this many keyed records: the write that would exceed it stores the older ones. */
export const KEYED_PUSH_AT = 24;

/** One generation of the filter: keys stored out of the object since `s`, the newest record `t`. */
export interface KeyFilter {
  /** When the generation started (ms). */
  s: number;
  /** The newest write time of a record in it (ms): once older than the retention window, it goes. */
  t: number;
  /** How many keys it holds (a new generation starts at FILTER_CAPACITY). */
  n: number;
  /** FILTER_BITS bits, base64. */
  b: string;
}

const FILTER_BITS = 2048;
const FILTER_HASHES = 7;
/** About 0.7% false positives at this many keys (2048 bits, 7 hashes). */
export const FILTER_CAPACITY = 200;

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(FILTER_BITS / 8);
  for (let i = 0; i < Math.min(bin.length, out.length); i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The bit positions of a key hash (hex digits, at least 16): double hashing on two 32-bit halves. */
function positions(hash: string): number[] {
  const h1 = parseInt(hash.slice(0, 8), 16) >>> 0;
  const h2 = (parseInt(hash.slice(8, 16), 16) | 1) >>> 0;
  return Array.from({ length: FILTER_HASHES }, (_, i) => (h1 + i * h2) % FILTER_BITS);
}

/** The hex hash of a keyed record's key (`k:<hex>`). */
function hashOf(k: string): string {
  return k.slice(2);
}

export function filterHas(f: KeyFilter, k: string): boolean {
  const bits = fromBase64(f.b);
  return positions(hashOf(k)).every((p) => (bits[p >> 3]! & (1 << (p & 7))) !== 0);
}

function filterWith(f: KeyFilter, records: WriteRecord[]): KeyFilter {
  const bits = fromBase64(f.b);
  for (const r of records) for (const p of positions(hashOf(r.k))) bits[p >> 3]! |= 1 << (p & 7);
  const t = records.reduce((t, r) => Math.max(t, r.at), f.t);
  return { s: f.s, t, n: f.n + records.length, b: toBase64(bits) };
}

function emptyFilter(now: number): KeyFilter {
  return { s: now, t: 0, n: 0, b: toBase64(new Uint8Array(FILTER_BITS / 8)) };
}

/** The filters of a session's bookkeeping (`satchel.kf`); null when they are not what Satchel writes. */
export function filtersOf(satchel: Record<string, unknown> | undefined): KeyFilter[] | null {
  const kf = satchel?.kf;
  if (kf === undefined) return [];
  const valid = (f: Partial<KeyFilter>) =>
    typeof f.s === 'number' &&
    typeof f.t === 'number' &&
    typeof f.n === 'number' &&
    typeof f.b === 'string' &&
    /^[A-Za-z0-9+/]{342}==$/.test(f.b);
  return Array.isArray(kf) && kf.every((f) => f && typeof f === 'object' && valid(f)) ? kf : null;
}

/** The generations still in force: some record in them may still be retried. */
export function liveFilters(filters: readonly KeyFilter[] | null, now: number): KeyFilter[] {
  return (filters ?? []).filter((f) => f.t > now - RETENTION_MS);
}

/** Filters with `records` added (a new generation when the newest is full), the expired ones gone. */
export function addToFilters(
  filters: readonly KeyFilter[] | null,
  records: WriteRecord[],
  now: number,
): KeyFilter[] {
  const out = liveFilters(filters, now);
  let rest = records;
  while (rest.length > 0) {
    let last = out[out.length - 1];
    if (!last || last.n >= FILTER_CAPACITY) out.push((last = emptyFilter(now)));
    const room = FILTER_CAPACITY - last.n;
    out[out.length - 1] = filterWith(last, rest.slice(0, room));
    rest = rest.slice(room);
  }
  return out;
}

/**
 * True when a record of key claim `k` may have been stored out of the object (look it up in storage);
 * filters that are not what Satchel writes (null) may hold anything.
 */
export function mayBeStoredOut(
  filters: readonly KeyFilter[] | null,
  k: string,
  now: number,
): boolean {
  return filters === null || liveFilters(filters, now).some((f) => filterHas(f, k));
}

/**
 * Splits a write's records into those the object keeps and the keyed ones to store out of it first: when
 * it holds more than KEYED_PUSH_AT keyed records, every one but the newest KEYED_KEEP goes (the ones past
 * the retention window are dropped, not stored).
 */
export function storeOut(
  writes: WriteRecord[],
  now: number,
): { kept: WriteRecord[]; out: WriteRecord[] } {
  const keyed = writes.filter((w) => w.k.startsWith('k:'));
  if (keyed.length <= KEYED_PUSH_AT) return { kept: writes, out: [] };
  const leaving = new Set(keyed.slice(0, keyed.length - KEYED_KEEP));
  return {
    kept: writes.filter((w) => !leaving.has(w)),
    out: [...leaving].filter((w) => w.at > now - RETENTION_MS),
  };
}

/** A stored-out record read back: the record of key claim `k`, or null when the object is not one. */
export function parseKeyRecord(body: Uint8Array, k: string): WriteRecord | null {
  try {
    const parsed = writeRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(body)));
    return parsed.success && parsed.data.k === k ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Where a keyed record stored out of the object lives. */
export function keyRecordKey(ns: string, id: string, k: string): string {
  return `${keys.keyRecords(ns, id)}${hashOf(k)}.json`;
}
