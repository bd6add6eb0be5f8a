import {
  heldMessages,
  concat,
  deltaOpening,
  encodeCoreParts,
  encodeTail,
  type BaseRef,
  joinedLength,
  type EncodedMessages,
  type SegRef,
} from '../model/codec.js';
import { sha256Hex } from '../model/digest.js';
import { RETENTION_MS } from '../model/retention.js';
import type { StoredSession, WriteReceipt, WriteRecord } from '../model/session.js';
import { jsonBytes } from '../pipeline/cap.js';
import type { ReserveInput } from '../pipeline/save.js';

/**
 * A session's own memory of recent writes (`satchel.writes`, docs/design.md "The session object"): each
 * write leaves a record with its key and receipt in the same conditional PUT as the change, so "was this
 * request already applied?" is answered atomically by reading the session.
 */

const KEYED_WRITES_MAX = 1000;
const UNKEYED_WRITES_MAX = 16;
/** Unkeyed records younger than this (a pending marker's staleness) are never pruned by bytes. */
const UNKEYED_YOUNG_MS = 15 * 60_000;

/** What identifies one write in `satchel.writes`: its own id, and its Idempotency-Key's hash when it has one. */
export interface WriteClaims {
  own: string;
  keyed?: string;
}

/** The claims of a write with id `writeId` and an optional Idempotency-Key. */
export async function claimsOf(
  writeId: string,
  idempotencyKey: string | undefined,
): Promise<WriteClaims> {
  return {
    own: 'w:' + writeId,
    ...(idempotencyKey ? { keyed: 'k:' + (await sha256Hex(idempotencyKey)) } : {}),
  };
}

/**
 * The record an earlier attempt of this write (same write id, or same key within the retention window: a
 * key used again after it is a new write) left in `session`.
 */
export function findClaim(
  session: StoredSession,
  claims: WriteClaims,
  now: number,
): WriteRecord | undefined {
  return session.satchel?.writes.find(
    (w) =>
      w.k === claims.own ||
      (claims.keyed !== undefined && w.k === claims.keyed && w.at > now - RETENTION_MS),
  );
}

/** The write record that a request with this Idempotency-Key left in `session`, while it is kept. */
export async function keyedWrite(
  session: StoredSession,
  idempotencyKey: string,
  now: number,
): Promise<WriteRecord | undefined> {
  const k = 'k:' + (await sha256Hex(idempotencyKey));
  return session.satchel?.writes.find((w) => w.k === k && w.at > now - RETENTION_MS);
}

/**
 * The records kept after adding one: keyed ones for the retention window (at most 1,000; `storeOut` in
 * key-records.ts then moves all but the newest 8 to 24 out of the object), the last 16 unkeyed, fewer
 * when they pass `unkeyedBytes` with the added one (never the added one, nor one younger than 15 min);
 * and the unkeyed ones pruned.
 */
function pruneWrites(
  writes: WriteRecord[],
  added: WriteRecord,
  now: number,
  unkeyedBytes: number,
): { kept: WriteRecord[]; pruned: WriteRecord[] } {
  const cutoff = now - RETENTION_MS;
  const keyed = writes.filter((w) => w.k.startsWith('k:') && w.at > cutoff);
  const unkeyed = writes.filter((w) => w.k.startsWith('w:'));
  let left = Math.max(0, unkeyed.length - (UNKEYED_WRITES_MAX - 1));
  if (unkeyedBytes < Infinity) {
    // Only records older than a marker's staleness go by bytes: a younger one may still answer its
    // writer's re-read after a lost answer, or the compactor's restoring of its audit record (until then
    // the count alone bounds them, as before; review s54d).
    const old = now - UNKEYED_YOUNG_MS;
    let total = added.k.startsWith('w:') ? jsonBytes(added) : 0;
    for (let i = left; i < unkeyed.length; i++) total += jsonBytes(unkeyed[i]);
    for (; left < unkeyed.length && total > unkeyedBytes && unkeyed[left]!.at < old; left++)
      total -= jsonBytes(unkeyed[left]);
  }
  const all = [...keyed.slice(-(KEYED_WRITES_MAX - 1)), ...unkeyed.slice(left), added];
  return { kept: all.sort((a, b) => a.at - b.at), pruned: unkeyed.slice(0, left) };
}

/** The newest revision and time among the unkeyed records pruned by count (`satchel.wp`). */
export type PruneMark = readonly [revision: number, at: number];

/**
 * The unkeyed records the object may have lost to pruning by count (`satchel.wp`, docs/design.md "The
 * session object"), or null when none ever was. An object without `wp` (older Satchels, and one that
 * never pruned) tells it by the count: 15 kept means some may be gone, up to just before the oldest kept.
 */
export function pruneMark(satchel: StoredSession['satchel']): PruneMark | null {
  const wp = (satchel as { wp?: PruneMark } | undefined)?.wp;
  if (wp) return wp; // Satchel's own bookkeeping, written only by `keepWrites`
  const unkeyed = (satchel?.writes ?? []).filter((w) => w.k.startsWith('w:'));
  // After a keyed record is added a kind holds one fewer (pruneWrites): from 15 kept, some may be gone.
  if (unkeyed.length < UNKEYED_WRITES_MAX - 1) return null;
  const oldest = Math.min(...unkeyed.map(revisionOf));
  return [oldest - 1, Math.min(...unkeyed.map((w) => w.at)) - 1];
}

/**
 * The records a write leaves (`writes`, with `added` and the old ones pruned) and the mark it must store
 * (`wp`, null for none). `unkeyedBytes`: what the unkeyed records may take in the object (a small cap's
 * share; Infinity counts them only). Unkeyed records of this process's writes whose log and audit records are stored
 * (`settled`) leave first: they answer nothing any more (docs/design.md "The session object"). Records
 * pruned by count raise the mark, so that a reader never takes a missing record for a write that did
 * not land.
 */
export function keepWrites(
  { satchel, revision }: StoredSession,
  added: readonly WriteRecord[],
  now: number,
  settled: (k: string) => boolean,
  unkeyedBytes = Infinity,
): { writes: WriteRecord[]; wp: PruneMark | null } {
  let wp = pruneMark(satchel);
  let writes = (satchel?.writes ?? []).filter((w) => !(w.k.startsWith('w:') && settled(w.k)));
  for (const record of added) {
    const { kept, pruned } = pruneWrites(writes, record, now, unkeyedBytes);
    writes = kept;
    for (const p of pruned)
      wp = [Math.max(wp?.[0] ?? 0, revisionOf(p)), Math.max(wp?.[1] ?? 0, p.at)];
  }
  // A record without a revision (none should be) was of this object's revision or before.
  return { writes, wp: wp && [Math.min(wp[0], revision), wp[1]] };
}

function revisionOf(w: WriteRecord): number {
  return (w.r as { revision?: number }).revision ?? Infinity;
}

/**
 * True when a session's kept records still hold every write made since `since`: no keyed record has been
 * pruned past that time, and no unkeyed one (`pruneMark`).
 */
export function recordsCover(satchel: StoredSession['satchel'], since: number): boolean {
  const keyed = (satchel?.writes ?? []).filter((w) => w.k.startsWith('k:'));
  // A kind holds one fewer after a record of the other kind is added (pruneWrites): at that count, some
  // may have gone.
  const full = keyed.length >= KEYED_WRITES_MAX - 1 && keyed[0]!.at > since;
  const mark = pruneMark(satchel);
  return !full && (mark === null || mark[1] < since);
}

/**
 * True when a session's kept records would still hold the record of an unkeyed write committed at
 * `revision`: no unkeyed record of that revision or later was pruned (`pruneMark`). Records that leave
 * because their write settled never belong to a write still waiting for its answer.
 */
export function unkeyedKept(satchel: StoredSession['satchel'], revision: number): boolean {
  const mark = pruneMark(satchel);
  return mark === null || mark[0] < revision;
}

/**
 * A receipt as a write record keeps it: without what `receiptOf` can restore (the session's id, an
 * `updated_at` that is the record's own time, zero counts and false flags), since every write rewrites
 * the records it keeps.
 */
function compactReceipt(r: Record<string, unknown>, at: number): Record<string, unknown> {
  const known: Record<string, unknown> = {
    ...RECEIPT_DEFAULTS,
    updated_at: new Date(at).toISOString(),
  };
  return Object.fromEntries(Object.entries(r).filter(([k, v]) => k !== 'id' && known[k] !== v));
}

/**
 * At most how many bytes `records` grow by once sealed: their receipts (the byte count as wide as the
 * cap's, the turn and dropped-group counts as wide as the message count), the extras, and the audit
 * fields `audit` gives each. What the size cap keeps free for them, measured on the state it fits.
 */
export function recordGrowth(
  records: readonly WriteRecord[],
  at: ReserveInput,
  audit: (i: number) => WriteRecord['a'],
  extra?: Record<string, unknown>,
): number {
  const s = at.session;
  const n = Math.max(1, s.messages.length, s.turns);
  const widest = { ...makeReceipt(s, at.maxBytes, at.redactions, n), turns: n, ...extra };
  return records.reduce((sum, record, i) => {
    const sealed = { ...record, r: compactReceipt(widest, record.at), a: audit(i) };
    return sum + Math.max(0, jsonBytes(sealed) - jsonBytes(record));
  }, 0);
}

const RECEIPT_DEFAULTS = {
  redactions: 0,
  dropped_groups: 0,
  untrusted_ingested: false,
  episode_untrusted: false,
};

/** A receipt's fields in the order a write answers them (makeReceipt), so a replay's JSON is the same. */
const RECEIPT_ORDER = [
  'id',
  'revision',
  'turns',
  'updated_at',
  'bytes',
  'redactions',
  'dropped_groups',
  'untrusted_ingested',
  'episode_untrusted',
] as const;

/** The receipt (with any extras) a write record of session `id` keeps, whole again, in its fields' order. */
export function receiptOf(record: WriteRecord, id: string): WriteReceipt & Record<string, unknown> {
  const updated_at = new Date(record.at).toISOString();
  const all: Record<string, unknown> = { id, updated_at, ...RECEIPT_DEFAULTS, ...record.r };
  const out: Record<string, unknown> = {};
  for (const k of RECEIPT_ORDER) if (k in all) out[k] = all[k];
  return Object.assign(out, all) as WriteReceipt & Record<string, unknown>;
}

/** The receipt of a write that stored `s`; `bytes` is filled in by `seal`. */
export function makeReceipt(
  s: StoredSession,
  bytes: number,
  redactions: number,
  dropped: number,
): WriteReceipt {
  return {
    id: s.id,
    revision: s.revision,
    turns: s.turns,
    updated_at: s.updated_at,
    bytes,
    redactions,
    dropped_groups: dropped,
    untrusted_ingested: s.untrusted_ingested,
    episode_untrusted: s.episode_untrusted,
  };
}

/**
 * Stores the receipt in its write records (one per request of the commit) and encodes the session. The
 * receipt's byte count includes the records themselves, so encode until the size settles (the digit
 * count changes at most once or twice).
 */
export function seal(
  session: StoredSession,
  receipt: WriteReceipt,
  records: WriteRecord[],
  prior?: EncodedMessages,
  extra?: Record<string, unknown>,
): { body: Uint8Array; messages: EncodedMessages } {
  const { core, messages } = encodeCoreParts(session, prior);
  const tail = settle(session, receipt, records, core.byteLength, extra);
  return { body: concat(core, tail), messages };
}

/**
 * The same for a session stored as a delta on `base` and `segs` (docs/design.md, "Base, segments and delta"): only
 * the messages after the parts' are encoded, and the receipt's byte count is still the whole session's,
 * worked out from the parts' encoded sizes. `tail` is the size of the delta's encoded messages.
 */
export function sealDelta(
  session: StoredSession,
  receipt: WriteReceipt,
  records: WriteRecord[],
  base: BaseRef,
  segs: readonly SegRef[],
  extra?: Record<string, unknown>,
): { body: Uint8Array; tail: number } {
  const kept = heldMessages(base, segs);
  const { core, messages } = encodeCoreParts({
    ...session,
    messages: session.messages.slice(kept),
  });
  const n = messages.json.byteLength;
  const prefix = segs.reduce((len, s) => joinedLength(len, s.json), base.json);
  const joined = joinedLength(prefix, n);
  const tail = settle(session, receipt, records, core.byteLength - n + joined, extra);
  return { body: concat(deltaOpening(base, segs, receipt.bytes), core, tail, CLOSE), tail: n };
}

const CLOSE = new Uint8Array([125]); // }

/**
 * A group commit member's own redaction count (the secrets of its own messages and request), which its
 * record's receipt holds instead of the commit's: set by the write loop (`saveAndEncode`).
 */
export const ownRedactions = new WeakMap<WriteRecord, number>();

/** Stores the receipt in the records until the encoded bookkeeping's size (which holds it) settles. */
function settle(
  session: StoredSession,
  receipt: WriteReceipt,
  records: WriteRecord[],
  coreBytes: number,
  extra?: Record<string, unknown>,
): Uint8Array {
  let tail = encodeTail(session);
  for (let i = 0; i < 4; i++) {
    receipt.bytes = coreBytes + tail.byteLength;
    for (const record of records) {
      const own = ownRedactions.get(record);
      const r = { ...receipt, ...extra, ...(own !== undefined ? { redactions: own } : {}) };
      record.r = compactReceipt(r, record.at);
    }
    const again = encodeTail(session);
    if (again.byteLength === tail.byteLength) return again;
    tail = again;
  }
  return tail;
}

/** What a keyed request's records are compared by (`WriteRequest.fingerprint`). */
export interface Fingerprint {
  /** SHA-256 of the key and the request: what a write record stores (`g`). */
  g: string;
}

/** The fingerprint of `request` sent with Idempotency-Key `key`. */
export async function fingerprintOf(key: string, request: unknown): Promise<Fingerprint> {
  return { g: await sha256Hex(`${key}\n${JSON.stringify(request)}`) };
}

/**
 * Whether `record` (the one the request's key left) was made by another request: another body, or
 * another operation `op` (the audit's: a `continue` appends the same body an append of its message
 * would). A record without `g` (a Satchel of 2026-12-02 or before wrote `f`, of the request alone; none
 * of those counts after 2026-12-04) is taken for the same request.
 */
export function otherRequest(record: WriteRecord, fp: Fingerprint, op: string): boolean {
  return (
    (record.g !== undefined && record.g !== fp.g) || (record.a !== undefined && record.a.o !== op)
  );
}
