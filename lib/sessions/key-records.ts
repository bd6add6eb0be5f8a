import { keys } from '../model/keys.js';
import type { ObjectStore } from '../storage/port.js';
import { settleAll } from '../storage/concurrency.js';
import { putOwn } from '../storage/create-only.js';
import { listAll } from '../storage/prefix.js';
import { text, utf8, fromBase64, toBase64 } from '../model/bytes.js';
import { RETENTION_MS } from '../model/retention.js';
import { writeRecordSchema, type StoredSession, type WriteRecord } from '../model/session.js';
import type { ExistenceChecks } from './existence.js';

/**
 * Idempotency records that leave the session object (docs/design.md, "Keyed writes"). A write with an
 * Idempotency-Key leaves a keyed record in `satchel.writes`, kept for RETENTION_MS so that a retry within
 * that time is a no-op. Kept in the object, they made every write of a busy session rewrite up to 1,000 of
 * them. Now the object keeps only the newest few: once it holds KEYED_PUSH_AT, a write first stores the
 * older ones in one create-only object, a *pack* (`k/<id>/<day>/p-<incarnation>_<hash>_<hash>….json`, the
 * first hex digits of each key's hash in its name; one PUT per day among them, before its commit) and
 * adds their hashes to a Bloom filter in the object (`satchel.kf`). A writer that
 * keeps the session stores them after its commit instead, and its next write drops them with no PUT
 * before the commit (`StoredKeyRecords`). A key that is not in the object is looked up in storage only
 * when a filter may hold it: a fresh key costs no request, except for the filters' false positives (about
 * 0.7% per generation at its capacity; a new generation is sized to the keys the live ones hold).
 * A record's day (`at` in whole retention windows) keeps a key used again after the window apart from its
 * first use, and lets whole days go once no record in them can be retried.
 *
 * Order makes it safe: a record leaves the object only in a commit that follows its object's PUT, so a
 * reader that does not find a key in the object it read finds it in storage after that read.
 */

/** Keyed records a write leaves in the object after storing the older ones. */
export const KEYED_KEEP = 8;
/** The object holds at most this many keyed records: the write that would exceed it stores the older ones. */
export const KEYED_PUSH_AT = 24;
/**
 * At most this many leave per write: an object of an older Satchel may hold up to 1,000 keyed records,
 * and storing them all in one write would be as many PUTs (a Worker may make 50 subrequests on the free
 * plan); the rest leave with the writes after it.
 */
export const KEYED_OUT_MAX = 32;

/** One generation of the filter: keys stored out of the object since `s`, the newest record `t`. */
export interface KeyFilter {
  /** When the generation started (ms). */
  s: number;
  /** The newest write time of a record in it (ms): once older than the retention window, it goes. */
  t: number;
  /** How many keys it holds (a new generation starts at its capacity). */
  n: number;
  /** Its bits (2,048 × a power of two, at most 65,536), base64. */
  b: string;
}

const FIRST_BITS = 2048;
const MAX_BITS = 65536;
const FILTER_HASHES = 7;

/** Keys a generation of `bits` bits takes: about 0.7% false positives when full (200 for 2,048 bits). */
export function capacityOf(bits: number): number {
  return Math.floor((bits * 25) / 256);
}

/** The bit positions of a key hash (hex digits, at least 16): double hashing on two 32-bit halves. */
function positions(hash: string, bits: number): number[] {
  const h1 = parseInt(hash.slice(0, 8), 16) >>> 0;
  const h2 = (parseInt(hash.slice(8, 16), 16) | 1) >>> 0;
  return Array.from({ length: FILTER_HASHES }, (_, i) => (h1 + i * h2) % bits);
}

/** The hex hash of a keyed record's key (`k:<hex>`). */
function hashOf(k: string): string {
  return k.slice(2);
}

export function filterHas(f: KeyFilter, k: string): boolean {
  const bytes = fromBase64(f.b);
  return positions(hashOf(k), bytes.length * 8).every(
    (p) => (bytes[p >> 3]! & (1 << (p & 7))) !== 0,
  );
}

function filterWith(f: KeyFilter, records: WriteRecord[]): KeyFilter {
  const bytes = fromBase64(f.b);
  for (const r of records)
    for (const p of positions(hashOf(r.k), bytes.length * 8)) bytes[p >> 3]! |= 1 << (p & 7);
  const t = records.reduce((t, r) => Math.max(t, r.at), f.t);
  return { s: f.s, t, n: f.n + records.length, b: toBase64(bytes) };
}

function emptyFilter(now: number, bits: number): KeyFilter {
  return { s: now, t: 0, n: 0, b: toBase64(new Uint8Array(bits / 8)) };
}

function bitsOf(f: KeyFilter): number {
  return fromBase64(f.b).length * 8;
}

/** The filters of a session's bookkeeping (`satchel.kf`); null when they are not what Satchel writes. */
export function filtersOf(satchel: Record<string, unknown> | undefined): KeyFilter[] | null {
  const kf = satchel?.kf;
  if (kf === undefined) return [];
  const valid = (f: Partial<KeyFilter>) => {
    if (typeof f.s !== 'number' || typeof f.t !== 'number' || typeof f.n !== 'number') return false;
    if (typeof f.b !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(f.b)) return false;
    const bits = fromBase64(f.b).length * 8;
    return bits >= FIRST_BITS && bits <= MAX_BITS && (bits & (bits - 1)) === 0;
  };
  return Array.isArray(kf) && kf.every((f) => f && typeof f === 'object' && valid(f)) ? kf : null;
}

/** The generations still in force: some record in them may still be retried. */
export function liveFilters(filters: readonly KeyFilter[] | null, now: number): KeyFilter[] {
  return (filters ?? []).filter((f) => f.t > now - RETENTION_MS);
}

/** The smallest generation size (a power of two from 2,048 to 65,536 bits) that takes `keys` keys. */
function bitsFor(keys: number): number {
  let bits = FIRST_BITS;
  while (bits < MAX_BITS && capacityOf(bits) < keys) bits *= 2;
  return bits;
}

/**
 * Filters with `records` added, the expired generations gone. A generation takes keys until it is full or
 * a day old, so old ones expire; a new one is sized to the keys the live ones hold (about a day's, at
 * least 200), so a busy day's generations grow as it does and a quiet session's stay small.
 */
export function addToFilters(
  filters: readonly KeyFilter[] | null,
  records: WriteRecord[],
  now: number,
): KeyFilter[] {
  const out = liveFilters(filters, now);
  let rest = records;
  while (rest.length > 0) {
    let last = out[out.length - 1];
    if (!last || last.n >= capacityOf(bitsOf(last)) || last.s <= now - RETENTION_MS) {
      const live = out.reduce((n, f) => n + f.n, 0);
      out.push((last = emptyFilter(now, bitsFor(Math.max(live, rest.length)))));
    }
    const room = capacityOf(bitsOf(last)) - last.n;
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

/** What `StoredKeyRecords` remembers a record by: its session, key and time. */
function markOf(ns: string, id: string, incarnation: string, record: WriteRecord): string {
  return `${ns}/${id}/${incarnation}/${record.k}@${record.at}`;
}

/** How many stored-out keyed records a process remembers (`StoredKeyRecords`). */
const REMEMBERED = 4096;

/**
 * Records per pack: its name holds a short hash of each, and stays one path part of at most 255 bytes (a
 * file name on a local folder) with the longest incarnation (32 characters). A write stores out 17
 * records in the usual case (one pack), at most KEYED_OUT_MAX.
 */
export const PACK_MAX = 24;
/**
 * Hex digits of a key's hash in a pack's name: a lookup reads the packs whose names hold its key's (another
 * key shares them about once in 4 billion, and costs a GET), and finds the record by its whole hash.
 */
const SHORT_HASH = 8;
/** A pack's name starts with this (a record stored alone is named by its key's whole hash: hex digits). */
const PACK_MARK = 'p-';

/** One create-only object of keyed records of one day and session (`StoredKeyRecords.store`). */
export interface KeyRecordPack {
  name: string;
  records: WriteRecord[];
}

/** The packs that store `records` of the session `incarnation` names: by day, PACK_MAX at most each. */
export function packsOf(
  ns: string,
  id: string,
  incarnation: string,
  records: readonly WriteRecord[],
): KeyRecordPack[] {
  const packs: (KeyRecordPack & { day: number })[] = [];
  for (const r of records) {
    const day = dayOf(r.at);
    let pack = packs.find((p) => p.day === day && p.records.length < PACK_MAX);
    if (!pack) packs.push((pack = { day, name: '', records: [] }));
    pack.records.push(r);
  }
  return packs.map(({ day, records }) => ({
    name: `${keyRecordsDay(ns, id, day)}${PACK_MARK}${incarnation}_${records
      .map((r) => hashOf(r.k).slice(0, SHORT_HASH))
      .join('_')}.json`,
    records,
  }));
}

/**
 * The keyed records this process has stored out of their objects (by session, key and time, the newest
 * 4,096), and those its PUTs are storing now.
 */
export class StoredKeyRecords {
  private readonly stored = new Set<string>();
  private readonly storing = new Set<string>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly existence: ExistenceChecks,
  ) {}

  /** True once this process has stored the record (a PUT still under way does not count). */
  has(ns: string, id: string, incarnation: string, record: WriteRecord): boolean {
    return this.stored.has(markOf(ns, id, incarnation, record));
  }

  /** True while a PUT of this process stores the record (`storeOut` then waits to store more). */
  storingNow(ns: string, id: string, incarnation: string, record: WriteRecord): boolean {
    return this.storing.has(markOf(ns, id, incarnation, record));
  }

  /**
   * Stores the records this process has not stored yet create-only, in packs (`packsOf`; one under way
   * is not awaited: stored again, in another pack), once `after` has resolved (a write's marker).
   * `names`: the packs, known at once; `done` settles when they are stored.
   */
  store(
    ns: string,
    id: string,
    incarnation: string,
    records: readonly WriteRecord[],
    after?: Promise<unknown>,
  ): { names: string[]; done: Promise<unknown> } {
    const fresh = records.filter((r) => !this.has(ns, id, incarnation, r));
    const packs = packsOf(ns, id, incarnation, fresh);
    // Settled only once every pack is (a check after a failure must not miss one still on its way).
    const done = settleAll(
      packs.map(async ({ name, records }) => {
        const marks = records.map((r) => markOf(ns, id, incarnation, r));
        for (const mark of marks) this.storing.add(mark);
        try {
          await after;
          await putOwn(this.objects, name, utf8(JSON.stringify(records)));
          for (const mark of marks) this.stored.add(mark);
          while (this.stored.size > REMEMBERED)
            this.stored.delete(this.stored.values().next().value!);
        } finally {
          for (const mark of marks) this.storing.delete(mark);
        }
      }),
    );
    return { names: packs.map((p) => p.name), done };
  }

  /**
   * Stores records that stay in the object for now (`StoreOutPlan.ahead`), after a commit of the session
   * `incarnation` names: once they landed, when the session turns out deleted (the delete may have
   * listed its records first), or deleted and created again, they go (existence.ts tells).
   */
  async storeAhead(
    ns: string,
    id: string,
    incarnation: string,
    records: WriteRecord[],
  ): Promise<void> {
    const { names, done } = this.store(ns, id, incarnation, records);
    if (names.length === 0) return; // stored already
    const erase = () => this.objects.delete(names);
    await this.existence.eraseUnlessLive(keys.session(ns, id), incarnation, erase, {
      strict: true,
      after: done,
    });
  }
}

/** What a write does with the keyed records past KEYED_PUSH_AT (`storeOut`). */
export interface StoreOutPlan {
  /** The records the object keeps. */
  kept: WriteRecord[];
  /** The records that leave the object within the retention window: their keys join the filters. */
  leaving: WriteRecord[];
  /** Of those, the ones to store before the commit. */
  store: WriteRecord[];
  /** Records that stay for now, stored alongside the commit: a later write of this process drops them. */
  ahead: WriteRecord[];
}

/**
 * Splits a write's records: when the object holds more than KEYED_PUSH_AT keyed records, every one but the
 * newest KEYED_KEEP leaves (at most KEYED_OUT_MAX), never one of this write's own (`fresh`: their receipts
 * are not made yet). Records past the retention window leave without being stored, and so do the ones
 * this process has stored already (`stored`). The others are stored before the commit; except that a
 * writer that keeps the session (`warm`: it held it before this write) stores them alongside its commit
 * and drops them in its next write, as long as the object holds at most twice KEYED_PUSH_AT (a write
 * that drops some, or while some are being stored (`storing`), keeps the others in the object, to go with
 * the next batch). `budget` bounds the bytes they take in the object as well (an eighth of the size cap:
 * under the smallest caps, 24 records took the room of the messages, and a session stopped taking keyed
 * appends): past it, the object keeps only the newest that fit in half of it.
 */
export function storeOut(
  writes: WriteRecord[],
  fresh: readonly WriteRecord[],
  now: number,
  stored: (record: WriteRecord) => boolean = () => false,
  warm = false,
  storing: (record: WriteRecord) => boolean = () => false,
  budget = Infinity,
): StoreOutPlan {
  const keyed = writes.filter((w) => w.k.startsWith('k:'));
  const own = new Set(fresh);
  // This write's own records are measured as they are now (their audit fields come after): not kept.
  const sizes =
    budget === Infinity ? null : keyed.map((w) => (own.has(w) ? jsonBytes(w) : recordBytes(w)));
  const bytes = sizes?.reduce((a, b) => a + b, 0) ?? 0;
  const over = bytes > budget;
  if (keyed.length <= KEYED_PUSH_AT && !over)
    return { kept: writes, leaving: [], store: [], ahead: [] };
  const older = keyed
    .slice(0, keyed.length - (over ? newestWithin(sizes!, budget / 2) : KEYED_KEEP))
    .filter((w) => !own.has(w))
    .slice(0, KEYED_OUT_MAX);
  const live = (w: WriteRecord) => w.at > now - RETENTION_MS;
  const free = older.filter((w) => !live(w) || stored(w));
  const rest = older.filter((w) => live(w) && !stored(w));
  const staying = over
    ? bytes - free.reduce((n, w) => n + sizes![keyed.indexOf(w)]!, 0) <= 2 * budget
    : keyed.length - free.length <= 2 * KEYED_PUSH_AT;
  const later = warm && staying;
  const leaving = new Set(later ? free : older);
  return {
    kept: writes.filter((w) => !leaving.has(w)),
    leaving: [...leaving].filter(live),
    store: later ? [] : rest,
    // A write that drops stored records, or whose records are still being stored, keeps the rest (usually
    // one) for the next batch: one pack each.
    ahead: later && free.length === 0 && !rest.some(storing) ? rest : [],
  };
}

/** Records' sizes, kept while the records are (a warm writer's object keeps its records from write to write). */
const recordSizes = new WeakMap<WriteRecord, number>();

/** A record's bytes in the object (its JSON, with the comma before it). */
function recordBytes(record: WriteRecord): number {
  let n = recordSizes.get(record);
  if (n === undefined) recordSizes.set(record, (n = jsonBytes(record)));
  return n;
}

function jsonBytes(record: WriteRecord): number {
  return utf8(JSON.stringify(record)).length + 1;
}

/** How many of the newest records (`sizes` oldest first) fit in `room` bytes, at most KEYED_KEEP. */
function newestWithin(sizes: number[], room: number): number {
  let n = 0;
  for (let left = room; n < KEYED_KEEP && n < sizes.length; n++) {
    left -= sizes[sizes.length - 1 - n]!;
    if (left < 0) break;
  }
  return n;
}

/** Stored-out records read back: the records in a pack (none when it is not one). */
export function parseKeyRecords(body: Uint8Array): WriteRecord[] {
  try {
    const parsed: unknown = JSON.parse(text(body));
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((item) => {
      const record = writeRecordSchema.safeParse(item);
      return record.success ? [record.data] : [];
    });
  } catch {
    return [];
  }
}

/**
 * The incarnation of a stored session object (either form; a delta has no top-level `id`), or undefined
 * when it is not one: read from the parsed JSON alone, without checking every message against the schema
 * as a session read does (this runs after records stored in the background, on objects up to 256 KiB).
 */
export function incarnationIn(body: Uint8Array, of = incarnationOf): string | undefined {
  try {
    const raw = JSON.parse(text(body)) as Record<string, unknown>;
    const session = ('id' in raw ? raw : raw['session']) as Partial<StoredSession> | undefined;
    return typeof session?.created_at === 'string'
      ? of(session as Pick<StoredSession, 'created_at' | 'satchel'>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A record's day: its time in whole retention windows. */
function dayOf(at: number): number {
  return Math.floor(at / RETENTION_MS);
}

/** The folder of a session's stored-out keyed records of one day. */
function keyRecordsDay(ns: string, id: string, day: number): string {
  return `${keys.keyRecords(ns, id)}${day}/`;
}

/**
 * Whether the object `name` (in a day's folder) may hold the record of key claim `k` of the session
 * `incarnation` names: a pack of that session whose name holds the key's short hash. Records stored alone
 * (`<hash>-<incarnation>.json` and `<hash>.json`, written until 2026-12-02) were read until 2026-12-05,
 * when none of them could count any more.
 */
function mayHold(name: string, k: string, incarnation: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1, -'.json'.length);
  return (
    base.startsWith(`${PACK_MARK}${incarnation}_`) &&
    base.split('_').includes(hashOf(k).slice(0, SHORT_HASH))
  );
}

/**
 * What tells a session apart from one deleted before it under the same id, in its records' names: the
 * token its create wrote (`satchel.i`), or for a session created before tokens, its creation time (an
 * import may keep a deleted session's `created_at`; its create writes a new token).
 */
export function incarnationOf(session: Pick<StoredSession, 'created_at' | 'satchel'>): string {
  const token = session.satchel?.['i'];
  if (typeof token === 'string' && /^[0-9a-f]{1,32}$/.test(token)) return token;
  const ms = Date.parse(session.created_at);
  return Number.isFinite(ms) ? ms.toString(36) : '0';
}

/**
 * What the existence checks compare a record's session with (existence.ts): its incarnation and, after a
 * `/`, the revision of the newest write that removed text (`satchel.x`, 0 for none), which a log or index
 * record of an older version must not outlive (docs/design.md, "Text a write removes").
 */
export const stateOf = (session: Pick<StoredSession, 'created_at' | 'satchel'>): string =>
  `${incarnationOf(session)}/${session.satchel?.['x'] ?? 0}`;

/**
 * The stored-out record of key claim `k` that a retry at `now` may still replay (none without a request
 * when no live filter may hold the key) in the session `incarnation` names (`incarnationOf`): a LIST of
 * each day it can be in (yesterday, today or, a writer's clock ahead, tomorrow, in parallel), then a GET of
 * the objects whose names may hold it; a record of an earlier use of the key, past the retention window,
 * does not count. Records named before their names held the session's creation time (Satchel of
 * 2026-12-01) are read too, for the days they can be in.
 */
export async function lookUpKeyRecord(
  objects: ObjectStore,
  ns: string,
  id: string,
  incarnation: string,
  k: string,
  now: number,
  filters: readonly KeyFilter[] | null,
): Promise<WriteRecord | undefined> {
  if (!mayBeStoredOut(filters, k, now)) return undefined; // no request for a key no filter holds
  const day = dayOf(now);
  // Records written after one from a clock far ahead carry its time (at most a week of days is read).
  const newest = Math.max(0, ...liveFilters(filters, now).map((f) => f.t));
  const last = Math.min(day + 7, Math.max(day + 1, dayOf(newest)));
  const records = await packsIn(objects, ns, id, day - 1, last - day + 2, (name) =>
    mayHold(name, k, incarnation),
  );
  return records.find((r) => r.k === k && r.at > now - RETENTION_MS);
}

/** The records in the packs of `count` days from `first` that `pick` takes: a LIST a day, a GET a pack. */
async function packsIn(
  objects: ObjectStore,
  ns: string,
  id: string,
  first: number,
  count: number,
  pick: (name: string) => boolean,
): Promise<WriteRecord[]> {
  const days = Array.from({ length: count }, (_, i) => first + i);
  const listed = await Promise.all(days.map((d) => listAll(objects, keyRecordsDay(ns, id, d))));
  const found = await Promise.all(
    listed
      .flat()
      .filter(pick)
      .map((name) => objects.get(name)),
  );
  return found.flatMap((f) => (f ? parseKeyRecords(f.body) : []));
}

/**
 * The stored-out records of the session `incarnation` names written at `since` or later (the compactor
 * restoring audit records, `restoreAudit`): a LIST of each day from `since`'s to tomorrow (a week at
 * most), a GET of each of its packs.
 */
export async function keyRecordsSince(
  objects: ObjectStore,
  ns: string,
  id: string,
  incarnation: string,
  since: number,
  now: number,
): Promise<WriteRecord[]> {
  const first = dayOf(since);
  const mark = `/${PACK_MARK}${incarnation}_`;
  const records = await packsIn(
    objects,
    ns,
    id,
    first,
    Math.min(8, dayOf(now) + 2 - first),
    (name) => name.includes(mark),
  );
  return records.filter((r) => r.at >= since);
}

/** Days of stored-out records to delete: from `from` (every day before `to` when unknown) up to `to`. */
export interface DaySweep {
  from?: number;
  to: number;
}

/**
 * The sweep a write that stores records out owes, if any: the days before the day before yesterday
 * (a day of margin for clocks that disagree) that no sweep has
 * covered (`satchel.ks`, the first day not swept; the write sets it to `to`). At most one a day.
 */
export function sweepDue(
  satchel: Record<string, unknown> | undefined,
  now: number,
): DaySweep | undefined {
  const to = dayOf(now) - 2;
  const ks = satchel?.ks;
  if (typeof ks !== 'number') return { to };
  return ks < to ? { from: ks, to } : undefined;
}

/** Deletes the stored-out records of the days of `sweep` (a LIST per day, or of them all once). */
export async function sweepKeyRecords(
  objects: ObjectStore,
  ns: string,
  id: string,
  sweep: DaySweep,
): Promise<void> {
  const prefix = keys.keyRecords(ns, id);
  const dayOfKey = (k: string) => Number(k.slice(prefix.length, k.indexOf('/', prefix.length)));
  // A LIST per day not swept yet (and the day before: a record may land there after its sweep); after a
  // long pause (or the first time), one of everything.
  const { from, to } = sweep;
  const listed =
    from === undefined || to - from > 7
      ? await listAll(objects, prefix)
      : (
          await Promise.all(
            Array.from({ length: to - from + 1 }, (_, i) =>
              listAll(objects, keyRecordsDay(ns, id, from - 1 + i)),
            ),
          )
        ).flat();
  const old = listed.filter((k) => dayOfKey(k) < to);
  if (old.length > 0) await objects.delete(old);
}
