import { putOwn } from '../storage/create-only.js';
import { text, utf8, type ObjectStore } from '../storage/port.js';
import { sha256Hex } from '../model/digest.js';
import type { WriteRecord } from '../model/session.js';
import { keys } from '../model/keys.js';
import { mapLimit, PendingWork } from '../storage/concurrency.js';
import { listAll } from '../storage/prefix.js';
import { unavailable } from '../model/errors.js';
import { incarnationIn } from './key-records.js';
import { eraseRetried } from './existence.js';
import { randomHex } from '../model/ids.js';

/** One audit record: who wrote what to a session, and what the save pipeline did to it. */
export interface AuditRecord {
  at: string;
  op: 'create' | 'append' | 'replace' | 'trim' | 'pop' | 'continue' | 'delete' | 'import';
  device: string;
  revision: number;
  messages: number;
  messages_added: number;
  bytes: number;
  redactions: number;
  dropped_groups: number;
  /** Labels of untrusted content ingested by this write (`webhook:ci`, …). */
  ingest_sources: string[];
  untrusted_ingested: boolean;
  episode_untrusted: boolean;
}

/** One audit record to store, with the key of the write it describes (its write record's `k`). */
export interface AuditEntry {
  record: AuditRecord;
  writeKey: string;
}

/** An audit record as stored: `w` names its write (a digest), so that a record stored twice reads once. */
type StoredAudit = AuditRecord & { w?: string };

/** A read that finds more objects than this stores their records in one and deletes them (`merge`). */
const MERGE_AT = 32;
/** The key of a merged object (`merge`): `-m` while it may take more records, `-f` once full. */
const MERGED = /-[mf][0-9a-f]{16}\.json$/;
/** The key of a full merged object, which no later merge reads or rewrites. */
const FULL = /-f[0-9a-f]{16}\.json$/;

/** How the log reads (`AuditLog`'s options). */
export interface AuditOptions {
  /**
   * Objects one read may GET (Workers, which allow 1,000 storage operations per request):
   * more are merged a slice at a time, at most `slicesPerRead` slices per read. Unbounded by default.
   */
  readAtMost?: number;
  slicesPerRead?: number;
  /**
   * Records a merged object holds before it is full (2,048, about 600 KB): a merge takes only objects
   * not yet full, so what it writes stays bounded however long the session's history grows.
   */
  fullAt?: number;
}

/**
 * The audit log: create-only objects under `ns/<ns>/audit/<id>/`, so concurrent writers never lose a
 * record (there is no read-modify-write), deleted with the session. An object holds one record, or the
 * records of several writes stored together (`{"records": [...]}`); its key is derived from its first
 * write (`<at>-<16 hex>`), and each record names its write, so a record stored again (the compactor
 * restoring what a stopped writer left unwritten) is read once. Every string passes through `redact`.
 */
export class AuditLog {
  /** Records this process is storing, per session: a read of the log waits for them. */
  private readonly pending = new PendingWork();

  private readonly readAtMost: number;
  private readonly slicesPerRead: number;
  private readonly fullAt: number;

  constructor(
    private readonly store: ObjectStore,
    private readonly redact: (s: string) => string,
    options: AuditOptions = {},
  ) {
    this.readAtMost = options.readAtMost ?? Infinity;
    this.slicesPerRead = options.slicesPerRead ?? Infinity;
    this.fullAt = options.fullAt ?? 2048;
  }

  /**
   * Stores records of one session in one object, under a key derived from the first one's write, so
   * that storing the same again (its writer and a compactor restoring it) leaves one object. `named`
   * hears the object's key before the PUT goes (one whose answer is lost may have landed).
   */
  async recordAll(
    ns: string,
    id: string,
    entries: AuditEntry[],
    named?: (key: string) => void,
  ): Promise<void> {
    if (entries.length === 0) return;
    const work = (async () => {
      const stored = await Promise.all(entries.map((e) => this.stored(e)));
      const first = stored[0]!;
      const body = stored.length === 1 ? first : { records: stored };
      const key = `${keys.audit(ns, id)}${stamp(first.at)}-${first.w}.json`;
      named?.(key);
      await putOwn(this.store, key, utf8(JSON.stringify(body)));
    })();
    // Registered before any await, so that a read of the log that follows waits for it.
    return this.pending.add(ns + '\0' + id, work);
  }

  private async stored({ record, writeKey }: AuditEntry): Promise<StoredAudit> {
    const w = (await sha256Hex(writeKey + '|' + stamp(record.at))).slice(0, 16);
    return {
      ...record,
      device: this.redact(record.device),
      ingest_sources: record.ingest_sources.map(this.redact),
      w,
    };
  }

  /** Waits for this process's audit records of a session still being stored (read-your-writes). */
  flushed(ns: string, id: string): Promise<void> {
    return this.pending.settled(ns + '\0' + id);
  }

  /**
   * The session's records, oldest first, each once. A read that finds more than MERGE_AT objects stores
   * their records in one object and deletes them, so the next read GETs one: on Workers one object per
   * write made the audit of a session with about 1,000 writes answer 503 for good (review s60b). Past
   * `readAtMost`, the oldest are merged a slice at a time first; a read that cannot finish within
   * `slicesPerRead` slices answers 503 after them (each read makes progress). Records of a session deleted
   * before this one (`began`) are left out, and a merge drops them.
   */
  async list(ns: string, id: string): Promise<AuditRecord[]> {
    await this.flushed(ns, id);
    const prefix = keys.audit(ns, id);
    let all = await listAll(this.store, prefix);
    // A merge keeps what it wrote only while the session is the one it was before the objects were
    // listed: a session deleted and created again meanwhile must not get the deleted one's records.
    const merging = open(all).length > MERGE_AT || all.length > this.readAtMost;
    const was = merging ? await this.incarnation(ns, id) : undefined;
    if (was !== undefined) all = await listAll(this.store, prefix);
    for (let slices = 0; all.length > this.readAtMost; slices++) {
      // Only full objects past the bound (about 500,000 writes): nothing left to merge, so read them all.
      const slice = open(all).slice(0, this.readAtMost);
      if (slice.length < 2) break;
      if (slices === this.slicesPerRead || was === undefined)
        throw unavailable(
          `the audit of session ${id} is being merged (${all.length} objects left); try again`,
        );
      await this.merge(ns, id, was, await this.readAll(prefix, slice));
      all = await listAll(this.store, prefix);
    }
    const objects = await this.readAll(prefix, all);
    // The answer stands whatever the merge meets; a later read merges again.
    if (was !== undefined && open(all).length > MERGE_AT)
      await this.merge(ns, id, was, objects).catch(() => {});
    const seen = new Set<string>();
    const out: AuditRecord[] = [];
    const from = began(objects);
    for (const { w, ...record } of objects.flatMap((o) => o.records)) {
      if (seen.has(w!) || record.revision < from) continue;
      seen.add(w!);
      out.push(record);
    }
    return out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.revision - b.revision);
  }

  /** The incarnation of the session object at the id, or undefined when there is none (or no session). */
  private async incarnation(ns: string, id: string): Promise<string | undefined> {
    const found = await this.store.get(keys.session(ns, id));
    return found ? incarnationIn(found.body) : undefined;
  }

  /**
   * `read`, and when an object listed is gone (another reader merged it and deleted it), the objects
   * listed since (its merged one) too: a read racing a merge answered without those records (review
   * s60f). Three rounds at most, then 503.
   */
  private async readAll(prefix: string, keys: string[]): Promise<AuditObject[]> {
    let objects = await read(this.store, keys);
    for (let round = 0; objects.some((o) => o.vanished); round++) {
      if (round === 3)
        throw unavailable('the audit log changed while it was read (merged elsewhere); try again');
      // Only merged objects can hold what vanished: reading every new key took a Worker's slice read of
      // 250 past its 1,000 operations when another read merged the same slice first (review s60g).
      const done = new Set(objects.map((o) => o.key));
      const listed = (await listAll(this.store, prefix)).filter(
        (k) => !done.has(k) && MERGED.test(k),
      );
      objects = [...objects.filter((o) => !o.vanished), ...(await read(this.store, listed))];
    }
    return objects;
  }

  /**
   * Stores the records of `objects` not yet full in as few objects as hold them, `fullAt` records each
   * (the rest in one not full), then deletes those objects. Full objects are never rewritten: when every
   * merge rewrote all records, a session with 100,000 writes PUT about 30 MB per read (review s60f). Each
   * new object is named by its records (the same merge twice is the same objects), and a record both there
   * and in an object left over reads once (`w`). Deleted means gone: unless the object at the id after
   * the PUTs is still session `was`, the new objects go again (a delete removes the session object before
   * its audit records, so a delete after this check erases them with the rest; a session created again
   * keeps only its own records, review s60f). Records of a session deleted before this one are not folded:
   * their objects just go (review s63a). The merge runs under a pending marker of the id, deleted with
   * those objects: a merge that stopped or failed leaves it, and its stale heal erases a deleted session's.
   */
  private async merge(ns: string, id: string, was: string, objects: AuditObject[]): Promise<void> {
    const merged = objects.filter((o) => !o.unreadable && !o.vanished && !FULL.test(o.key));
    if (merged.length < 2) return;
    const from = began(objects);
    const records = merged.flatMap((o) => o.records).filter((r) => r.revision >= from);
    records.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.revision - b.revision);
    // A pending marker first (as a write's): when the session goes meanwhile and this stops before its
    // clean-up, or that keeps failing, the marker's stale heal erases audit/<id>/ (review s66k).
    const marker = keys.pending(ns, id, `${stamp('')}-${randomHex(12)}`);
    await this.store.put(marker, new Uint8Array(0));
    const made: string[] = [];
    for (let at = 0; at < records.length; at += this.fullAt) {
      const part = records.slice(at, at + this.fullAt);
      const digest = (await sha256Hex(part.map((r) => r.w).join(','))).slice(0, 16);
      const kind = part.length === this.fullAt ? 'f' : 'm';
      made.push(`${keys.audit(ns, id)}${stamp(part[0]!.at)}-${kind}${digest}.json`);
      await putOwn(this.store, made.at(-1)!, utf8(JSON.stringify({ records: part })));
    }
    const drop =
      (await this.incarnation(ns, id)) !== was
        ? made
        : merged.map((o) => o.key).filter((k) => !made.includes(k));
    // Retried (1 s, 2 s …) as other erasing is; the marker goes last, once they are gone.
    await eraseRetried(
      () => this.store.delete([...drop, marker]),
      () => {},
    );
  }
}

/**
 * What the objects `keys` hold. A record stored before 2026-12-04 names no write: it is named by its
 * object's key and place, so that it can be merged too (until review s60f such records were never
 * merged, and 250 of them made every Worker read of the audit answer 503).
 */
function read(store: ObjectStore, keys: string[]): Promise<AuditObject[]> {
  return mapLimit(keys, 16, async (key) => {
    const b = await store.get(key);
    if (!b) return { key, records: [], vanished: true };
    try {
      const parsed = JSON.parse(text(b.body)) as StoredAudit | { records: StoredAudit[] };
      const records = 'records' in parsed ? parsed.records : [parsed];
      return { key, records: records.map((r, i) => (r.w ? r : { ...r, w: `${key}#${i}` })) };
    } catch {
      return { key, records: [], unreadable: true };
    }
  });
}

/**
 * The revision the newest session under the id began at: its create's (`first` when higher). Each session
 * created again under an id starts above the revisions of those deleted before it ("Revisions across
 * incarnations"), so a record below it is a deleted session's, left by a delete that raced the create.
 */
function began(objects: AuditObject[], first = 0): number {
  return objects
    .flatMap((o) => o.records)
    .reduce((at, r) => (r.op === 'create' && r.revision > at ? r.revision : at), first);
}

/**
 * Of the audit objects `keys` (the oldest 250: a Worker's delete stays within its 1,000 operations), those
 * holding only records of sessions deleted before the one that began at revision `first` (or at a create
 * they hold): what a delete that finds the id created again erases. An unreadable one goes too: Satchel
 * writes none, so it is no record of the live session.
 */
export async function staleAudit(
  store: ObjectStore,
  keys: string[],
  first?: number,
): Promise<string[]> {
  const objects = await read(store, keys.slice(0, 250));
  const from = began(objects, first);
  return objects.filter((o) => o.records.every((r) => r.revision < from)).map((o) => o.key);
}

/** The keys of objects a merge may still take (all but full merged objects). */
function open(keys: string[]): string[] {
  return keys.filter((k) => !FULL.test(k));
}

/** One audit object as read: its records, and whether it could not be read as records. */
interface AuditObject {
  key: string;
  records: StoredAudit[];
  unreadable?: boolean;
  /** Listed, then gone when read (another reader merged it). */
  vanished?: boolean;
}

/** A record's time as the 13-digit milliseconds of its key. */
function stamp(at: string): string {
  return String(Date.parse(at) || Date.now()).padStart(13, '0');
}

/** The audit record a write record describes (its receipt and audit fields); null without them. */
export function auditOf(record: WriteRecord): AuditRecord | null {
  const a = record.a;
  const r = record.r as Partial<Record<string, unknown>>;
  if (!a || typeof r.revision !== 'number') return null;
  return {
    at: new Date(record.at).toISOString(),
    op: a.o as AuditRecord['op'],
    device: a.d,
    revision: r.revision,
    messages: a.m,
    messages_added: a.n,
    bytes: Number(r.bytes) || 0,
    redactions: Number(r.redactions) || 0,
    dropped_groups: Number(r.dropped_groups) || 0,
    ingest_sources: a.s ?? [],
    untrusted_ingested: r.untrusted_ingested === true,
    episode_untrusted: r.episode_untrusted === true,
  };
}
