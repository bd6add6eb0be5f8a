import { encodedLength, type BaseRef, type EncodedMessages, type SegRef } from '../model/codec.js';
import type { StoredSession } from '../model/session.js';

/** A session object as this process last read or wrote it, with its storage etag. */
export interface CachedSession {
  etag: string;
  session: StoredSession;
  bytes: number;
  /**
   * An encoding of a prefix of this copy's messages (the same objects), when one is at hand: this
   * process's last whole encoding, or a base's own bytes. A write and a GET reuse it instead of encoding
   * those messages again (`encodeCoreParts` checks that it is a prefix).
   */
  encoded?: EncodedMessages;
  /** A large session's base (the object is a delta on it); its first messages are this copy's first. */
  base?: BaseRef;
  /** The segments between the base and the delta, oldest first (their messages follow the base's). */
  segs?: SegRef[];
  /**
   * A partial copy (an append read only the delta, not the parts): `session.messages` has the whole
   * session's length, but its entries before this index are absent (undefined). Only the write loop's
   * appends use such a copy (`docs/design.md`, "Appends that read only the delta"); readers read whole.
   */
  held?: number;
  /**
   * The bytes of parts, by key, as read for a partial copy a GET cut its answer from
   * (`publicChunksOfParts`): the next GET cuts from them again, a whole read parses them. Parts never
   * change, so bytes under a part's key are that part's whatever the object names now.
   */
  raw?: ReadonlyMap<string, Uint8Array>;
}

/** The part bytes of `raw` that `entry`'s object still names, or undefined when there are none. */
export function rawNamed(
  raw: ReadonlyMap<string, Uint8Array> | undefined,
  entry: Pick<CachedSession, 'base' | 'segs'>,
): ReadonlyMap<string, Uint8Array> | undefined {
  if (!raw) return undefined;
  const kept = new Map([...partsOf(entry)].flatMap((k) => (raw.has(k) ? [[k, raw.get(k)!]] : [])));
  return kept.size ? kept : undefined;
}

/** True when `entry` holds every message of its session (not a partial copy). */
export function isWhole(entry: CachedSession | null | undefined): entry is CachedSession {
  return !!entry && entry.held === undefined;
}

/** The immutable objects (base and segments) a copy's object names. */
export function partsOf(
  entry: Pick<CachedSession, 'base' | 'segs'> | null | undefined,
): Set<string> {
  const keys = new Set<string>();
  if (entry?.base) keys.add(entry.base.key);
  for (const s of entry?.segs ?? []) keys.add(s.key);
  return keys;
}

/**
 * Parsed sessions kept in process within a byte budget, oldest stored first out, so an append with a
 * current revision skips the GET. Only the write loop trusts it for writing; replays re-read storage.
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession>();
  private held = 0;
  /** Counts this process's deletes: a read that began before one does not cache what it read. */
  private deletes = 0;

  constructor(private readonly budget: number) {}

  /** The cached copy at `key`, if any. */
  get(key: string): CachedSession | undefined {
    return this.entries.get(key);
  }

  /** Stores (or replaces) the copy at `key`; one over half the budget is not kept. */
  put(key: string, entry: CachedSession): void {
    this.drop(key);
    if (weight(entry) > this.budget / 2) return;
    this.entries.set(key, entry);
    this.held += weight(entry);
    for (const [k, v] of this.entries) {
      if (this.held <= this.budget) break;
      this.entries.delete(k);
      this.held -= weight(v);
    }
  }

  /** What a read notes before it starts, for `putRead`. */
  get epoch(): number {
    return this.deletes;
  }

  /**
   * Stores a copy read from storage, unless a delete in this process forgot a copy since the read began
   * (`epoch`): the read may have found the object before the delete, and must not bring it back here.
   */
  putRead(key: string, entry: CachedSession, epoch: number): void {
    if (epoch === this.deletes) this.put(key, entry);
  }

  /** Forgets the copy of a deleted session; reads that began before are not cached. */
  forget(key: string): void {
    this.deletes++;
    this.drop(key);
  }

  /** Forgets the copy at `key`. */
  drop(key: string): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.held -= weight(old);
    }
  }
}

/** Memory a cached session holds: the parsed object (about its stored size) and the reusable bytes. */
function weight(entry: CachedSession): number {
  // A partial copy lacks its base's messages and those of the segments before the ones it holds.
  let absent = 0;
  if (entry.held !== undefined && entry.base) {
    let at = entry.base.messages;
    absent = entry.base.json;
    for (const s of entry.segs ?? []) {
      if ((at += s.messages) > entry.held) break;
      absent += s.json;
    }
  }
  const raw = [...(entry.raw?.values() ?? [])].reduce((n, b) => n + b.byteLength, 0);
  return (
    Math.max(0, entry.bytes - absent) + raw + (entry.encoded ? encodedLength(entry.encoded) : 0)
  );
}
