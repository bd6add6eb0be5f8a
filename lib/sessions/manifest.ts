import { PreconditionFailedError, text, utf8, type ObjectStore } from '../storage/port.js';
import { keys } from './ids.js';
import type { SessionSummary } from './schema.js';

/**
 * The per-namespace manifest: what `list` and `latest` read instead of listing session objects.
 *
 * It is a small log-structured index (docs/design.md has the full story):
 *   m/b/<seq>.json          immutable base snapshots, written create-only by the compactor
 *   m/l/<at>-<write>.json   one immutable log record per session write (upsert or delete)
 *   m/p/<id>/<at>-<write>   an empty "pending" marker written before each session write
 * A reader lists `m/` (one request), takes the newest base, applies the log records it does not cover,
 * and checks every pending marker that has no log record against the session object itself: that is
 * how a crash between a session write and its log record heals. Immutable objects are cached in process,
 * so a warm `list` costs one LIST request.
 */

export interface ManifestEntry extends SessionSummary {
  revision: number;
  /** Ordering time in ms: the session's updated_at for upserts, the deletion time for deletes. */
  at: number;
}

type LogRecord = { v: 1; op: 'put'; entry: ManifestEntry } | { v: 1; op: 'del'; id: string; at: number };

interface Base {
  v: 1;
  seq: number;
  built_at: number;
  entries: ManifestEntry[];
  tombstones: { id: string; at: number }[];
  covered: string[];
}

/** A namespace's sessions, newest first, as of one listing of the manifest. */
export interface ManifestView {
  entries: ManifestEntry[];
  byId: Map<string, ManifestEntry>;
}

export interface ManifestOptions {
  /** Compact once this many log records are not yet covered by a base. */
  compactAfter?: number;
  /** A pending marker without a log record older than this is a crashed write; the compactor heals it. */
  stalePendingMs?: number;
  /** How long deletes are remembered in the base, to refuse late log records of deleted sessions. */
  tombstoneTtlMs?: number;
  /** Parallel GETs when verifying or rebuilding. */
  concurrency?: number;
  now?: () => number;
}

/** Reads the current summary of a session from its object, or null when it does not exist. */
export type SummaryReader = (ns: string, id: string) => Promise<ManifestEntry | null>;

interface Listing {
  bases: { key: string; seq: number }[];
  logs: string[];
  pending: { key: string; id: string; writeId: string; at: number }[];
  maxSeq: number;
}

/** A base with the lookups derived from it once (bases are immutable, so this is cached with it). */
interface LoadedBase {
  base: Base;
  covered: Set<string>;
  entries: Map<string, ManifestEntry>;
  tombstones: Map<string, number>;
}

class CorruptManifest extends Error {}
class ManifestMoved extends Error {}

export class Manifest {
  private readonly compactAfter: number;
  private readonly stalePendingMs: number;
  private readonly tombstoneTtlMs: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly baseCache = new Map<string, LoadedBase>();
  private readonly logCache = new Map<string, LogRecord>();
  private readonly views = new Map<string, { signature: string; view: ManifestView }>();
  private readonly compacting = new Map<string, Promise<void>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly readSummary: SummaryReader,
    options: ManifestOptions = {},
  ) {
    this.compactAfter = options.compactAfter ?? 64;
    this.stalePendingMs = options.stalePendingMs ?? 15 * 60_000;
    this.tombstoneTtlMs = options.tombstoneTtlMs ?? 24 * 3600_000;
    this.concurrency = options.concurrency ?? 16;
    this.now = options.now ?? Date.now;
  }

  /** Writes the pending marker of a session write; must complete before the session object is written. */
  async markPending(ns: string, id: string, writeId: string): Promise<string> {
    const key = keys.pending(ns, id, `${String(this.now()).padStart(13, '0')}-${writeId}`);
    await this.store.put(key, new Uint8Array(0), { contentType: 'application/octet-stream' });
    return key;
  }

  /** Removes a pending marker of a write that did not happen (best effort: the compactor also heals it). */
  async clearPending(key: string): Promise<void> {
    await this.store.delete(key).catch(() => undefined);
  }

  /** Records a successful session write (create or update). */
  async recordPut(ns: string, entry: ManifestEntry, writeId: string): Promise<void> {
    const key = keys.log(ns, entry.at, writeId);
    const record: LogRecord = { v: 1, op: 'put', entry };
    await this.store.put(key, utf8(JSON.stringify(record)), { ifNoneMatch: '*' });
    this.cacheLog(key, record);
  }

  /** Records a deletion. */
  async recordDelete(ns: string, id: string, at: number, writeId: string): Promise<void> {
    const key = keys.log(ns, at, writeId);
    const record: LogRecord = { v: 1, op: 'del', id, at };
    await this.store.put(key, utf8(JSON.stringify(record)), { ifNoneMatch: '*' });
    this.cacheLog(key, record);
  }

  /**
   * The namespace's sessions, newest first. `schedule` receives background work (compaction) that the
   * caller should keep alive after the response (Workers waitUntil).
   */
  async view(ns: string, schedule: (work: Promise<unknown>) => void = noop): Promise<ManifestView> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { view, needsCompaction } = await this.read(ns);
        if (needsCompaction) schedule(this.compact(ns));
        return view;
      } catch (err) {
        // A compactor removed what we listed: list again. Corrupt: rebuild from the session objects.
        if (err instanceof ManifestMoved && attempt < 5) continue;
        if (err instanceof CorruptManifest || (err instanceof ManifestMoved && attempt >= 5)) {
          return (await this.rebuild(ns)).view;
        }
        throw err;
      }
    }
  }

  /** Folds log records into a new base and removes what it covers. Single-flight per namespace. */
  compact(ns: string, force = false): Promise<void> {
    const running = this.compacting.get(ns);
    if (running) return running;
    const work = this.compactOnce(ns, force)
      .catch((err) => {
        if (err instanceof CorruptManifest) return this.rebuild(ns).then(() => undefined);
        throw err;
      })
      .finally(() => this.compacting.delete(ns));
    this.compacting.set(ns, work);
    return work;
  }

  /** Rebuilds the manifest from the session objects alone (missing or corrupt manifest, or on demand). */
  async rebuild(ns: string): Promise<{ view: ManifestView }> {
    const startedAt = this.now();
    const listing = await this.listManifest(ns);
    const ids: string[] = [];
    const prefix = keys.sessions(ns);
    for (const key of await listAll(this.store, prefix)) {
      if (key.endsWith('.json')) ids.push(key.slice(prefix.length, -'.json'.length));
    }
    const entries = (await mapLimit(ids, this.concurrency, (id) => this.readSummary(ns, id))).filter(
      (e): e is ManifestEntry => e !== null,
    );
    const base: Base = {
      v: 1,
      seq: listing.maxSeq + 1,
      built_at: startedAt,
      entries,
      tombstones: [],
      covered: listing.logs,
    };
    await this.writeBase(ns, base);
    return { view: makeView(entries) };
  }

  private async compactOnce(ns: string, force: boolean): Promise<void> {
    const startedAt = this.now();
    let state = await this.readState(ns);
    if (!state.base) {
      await this.rebuild(ns);
      state = await this.readState(ns);
      if (!state.base) return;
    }
    const newBase = force || state.uncovered >= this.compactAfter || state.stalePending.length > 0 || state.late;
    let covered = new Set(state.base.covered);
    let seq = state.base.seq;
    if (newBase) {
      const base: Base = {
        v: 1,
        seq: state.listing.maxSeq + 1,
        built_at: startedAt,
        entries: [...state.map.values()],
        tombstones: [...state.tombstones].filter(([, at]) => at > startedAt - this.tombstoneTtlMs).map(([id, at]) => ({ id, at })),
        covered: state.listing.logs,
      };
      if (!(await this.writeBase(ns, base))) return; // another compactor won this sequence number
      covered = new Set(base.covered);
      seq = base.seq;
    }
    // Remove what the base in force covers (a reader that listed it before retries on a 404).
    const logs = state.listing.logs.filter((k) => covered.has(k));
    const coveredWrites = new Set(logs.map(writeIdOfLog));
    const pending = state.listing.pending
      .filter((p) => coveredWrites.has(p.writeId) || (newBase && state.stalePending.includes(p.key)))
      .map((p) => p.key);
    const oldBases = state.listing.bases.filter((b) => b.seq < seq - 1).map((b) => b.key);
    const garbage = [...logs, ...pending, ...oldBases];
    if (garbage.length > 0) await this.store.delete(garbage);
    for (const key of logs) this.logCache.delete(key);
  }

  private async writeBase(ns: string, base: Base): Promise<boolean> {
    const key = keys.base(ns, base.seq);
    try {
      await this.store.put(key, utf8(JSON.stringify(base)), { ifNoneMatch: '*' });
    } catch (err) {
      if (PreconditionFailedError.is(err)) return false; // another compactor won this sequence number
      throw err;
    }
    this.cacheBase(key, base);
    return true;
  }

  private async read(ns: string): Promise<{ view: ManifestView; needsCompaction: boolean }> {
    const listing = await this.listManifest(ns);
    const newest = listing.bases[listing.bases.length - 1];
    if (!newest) return { view: (await this.rebuild(ns)).view, needsCompaction: false };
    const loaded = await this.loadBase(newest.key);
    const uncoveredKeys = listing.logs.filter((k) => !loaded.covered.has(k));
    const logged = new Set(listing.logs.map(writeIdOfLog));
    const unlogged = listing.pending.filter((p) => !logged.has(p.writeId));
    const now = this.now();
    const needsCompaction =
      uncoveredKeys.length >= this.compactAfter ||
      listing.logs.length - uncoveredKeys.length >= this.compactAfter ||
      unlogged.some((p) => now - p.at > this.stalePendingMs);
    // Nothing changed since the last view and nothing needs checking against the objects: reuse it.
    const signature = newest.key + '|' + uncoveredKeys.join(',');
    const cached = this.views.get(ns);
    if (cached && cached.signature === signature && unlogged.length === 0) return { view: cached.view, needsCompaction };
    const state = await this.merge(ns, listing, loaded, uncoveredKeys);
    const view = makeView([...state.map.values()]);
    if (state.verified === 0) this.views.set(ns, { signature, view });
    return { view, needsCompaction: needsCompaction || state.late };
  }

  /** Lists the manifest and merges base, log records and verified pending writes (for the compactor). */
  private async readState(ns: string) {
    const listing = await this.listManifest(ns);
    const newest = listing.bases[listing.bases.length - 1];
    if (!newest) return { listing, base: null, map: new Map<string, ManifestEntry>(), tombstones: new Map<string, number>(), uncovered: 0, stalePending: [] as string[], verified: 0, late: false };
    const loaded = await this.loadBase(newest.key);
    const uncoveredKeys = listing.logs.filter((k) => !loaded.covered.has(k));
    return { listing, ...(await this.merge(ns, listing, loaded, uncoveredKeys)), uncovered: uncoveredKeys.length };
  }

  /**
   * Applies the uncovered log records to the base, then asks the session objects about every write with a
   * pending marker but no log record (in flight, failed, or crashed between its session write and its
   * log record), and about the rare records the merge cannot order on its own.
   */
  private async merge(ns: string, listing: Listing, loaded: LoadedBase, uncoveredKeys: string[]) {
    const base = loaded.base;
    const map = new Map(loaded.entries);
    const tombstones = new Map(loaded.tombstones);
    const records = await mapLimit(uncoveredKeys, this.concurrency, (k) => this.loadLog(k));
    const toVerify = new Set<string>();
    let late = false;
    const order = records.map((r, i) => ({ r, at: r.op === 'put' ? r.entry.at : r.at, i })).sort((a, b) => a.at - b.at || a.i - b.i);
    for (const { r, at } of order) {
      const id = r.op === 'put' ? r.entry.id : r.id;
      // A record that reached the bucket after the compactor listed it is ordered like any other, since
      // deletes are remembered for tombstoneTtlMs; only one older than that could resurrect a session.
      if (at < base.built_at - this.tombstoneTtlMs / 2) {
        toVerify.add(id);
        late = true;
        continue;
      }
      const current = map.get(id);
      const deletedAt = tombstones.get(id);
      if (r.op === 'put') {
        if (current && (current.at > at || (current.at === at && current.revision >= r.entry.revision))) continue;
        if (deletedAt !== undefined && deletedAt >= at) {
          // A create after a delete from a device whose clock is behind: only the object can tell.
          if (r.entry.revision <= 1) toVerify.add(id);
          continue;
        }
        map.set(id, r.entry);
        tombstones.delete(id);
      } else {
        if (current && current.at > at) {
          toVerify.add(id);
          continue;
        }
        map.delete(id);
        tombstones.set(id, at);
      }
    }
    const logged = new Set(listing.logs.map(writeIdOfLog));
    const stalePending: string[] = [];
    const now = this.now();
    for (const p of listing.pending) {
      if (logged.has(p.writeId)) continue;
      toVerify.add(p.id);
      if (now - p.at > this.stalePendingMs) stalePending.push(p.key);
    }
    await mapLimit([...toVerify], this.concurrency, async (id) => {
      const entry = await this.readSummary(ns, id);
      if (entry) {
        map.set(id, entry);
        tombstones.delete(id);
      } else {
        map.delete(id);
      }
    });
    return { base, map, tombstones, stalePending, verified: toVerify.size, late };
  }

  private async listManifest(ns: string): Promise<Listing> {
    const prefix = keys.manifest(ns);
    const bases: { key: string; seq: number }[] = [];
    const logs: string[] = [];
    const pending: { key: string; id: string; writeId: string; at: number }[] = [];
    for (const key of await listAll(this.store, prefix)) {
      const rest = key.slice(prefix.length);
      if (rest.startsWith('b/')) {
        const seq = Number(rest.slice(2, -'.json'.length));
        if (Number.isSafeInteger(seq)) bases.push({ key, seq });
      } else if (rest.startsWith('l/')) logs.push(key);
      else if (rest.startsWith('p/')) {
        const [, id, stamp] = rest.split('/');
        if (id && stamp) pending.push({ key, id, writeId: stamp.slice(14), at: Number(stamp.slice(0, 13)) });
      }
    }
    bases.sort((a, b) => a.seq - b.seq);
    return { bases, logs, pending, maxSeq: bases.length ? bases[bases.length - 1]!.seq : 0 };
  }

  private async loadBase(key: string): Promise<LoadedBase> {
    const cached = this.baseCache.get(key);
    if (cached) return cached;
    const found = await this.store.get(key);
    if (!found) throw new ManifestMoved();
    const base = parseOr(found.body, isBase);
    if (!base) throw new CorruptManifest(`unparsable base ${key}`);
    return this.cacheBase(key, base);
  }

  private async loadLog(key: string): Promise<LogRecord> {
    const cached = this.logCache.get(key);
    if (cached) return cached;
    const found = await this.store.get(key);
    if (!found) throw new ManifestMoved();
    const record = parseOr(found.body, isLogRecord);
    if (!record) throw new CorruptManifest(`unparsable log record ${key}`);
    this.cacheLog(key, record);
    return record;
  }

  private cacheBase(key: string, base: Base): LoadedBase {
    const loaded: LoadedBase = {
      base,
      covered: new Set(base.covered),
      entries: new Map(base.entries.map((e) => [e.id, e])),
      tombstones: new Map(base.tombstones.map((t) => [t.id, t.at])),
    };
    this.baseCache.set(key, loaded);
    // One or two bases per namespace are live at a time; keep a handful of namespaces warm.
    while (this.baseCache.size > 32) this.baseCache.delete(this.baseCache.keys().next().value!);
    return loaded;
  }

  private cacheLog(key: string, record: LogRecord): void {
    this.logCache.set(key, record);
    while (this.logCache.size > 20_000) this.logCache.delete(this.logCache.keys().next().value!);
  }
}

/** Sorts entries newest first: updated_at descending, then id descending. */
function makeView(entries: ManifestEntry[]): ManifestView {
  const sorted = entries.slice().sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { entries: sorted, byId: new Map(sorted.map((e) => [e.id, e])) };
}

function writeIdOfLog(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1, -'.json'.length);
  return name.slice(14);
}

function parseOr<T>(body: Uint8Array, check: (v: unknown) => v is T): T | null {
  try {
    const value: unknown = JSON.parse(text(body));
    return check(value) ? value : null;
  } catch {
    return null;
  }
}

function isEntry(v: unknown): v is ManifestEntry {
  const e = v as ManifestEntry;
  return typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.at === 'number' && typeof e.updated_at === 'string';
}

function isBase(v: unknown): v is Base {
  const b = v as Base;
  return (
    typeof b === 'object' &&
    b !== null &&
    b.v === 1 &&
    typeof b.seq === 'number' &&
    typeof b.built_at === 'number' &&
    Array.isArray(b.entries) &&
    b.entries.every(isEntry) &&
    Array.isArray(b.tombstones) &&
    Array.isArray(b.covered)
  );
}

function isLogRecord(v: unknown): v is LogRecord {
  const r = v as LogRecord;
  if (typeof r !== 'object' || r === null || r.v !== 1) return false;
  return r.op === 'put' ? isEntry(r.entry) : r.op === 'del' && typeof r.id === 'string' && typeof r.at === 'number';
}

/** Every key under a prefix, following cursors. */
export async function listAll(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor ? { cursor } : {});
    for (const o of page.objects) out.push(o.key);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** Maps with at most `limit` calls in flight, keeping order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}

function noop(): void {}
