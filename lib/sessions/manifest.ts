import {
  PreconditionFailedError,
  text,
  utf8,
  type ObjectStore,
  type PutOptions,
} from '../storage/port.js';
import { mapLimit } from '../storage/concurrency.js';
import { putOwn } from '../storage/create-only.js';
import { listAll } from '../storage/prefix.js';
import {
  CorruptRootError,
  obsoleteRoots,
  SequencedRoots,
  seqOfName,
  type SequencedRef,
} from '../storage/sequenced.js';
import { Batcher, runExclusive, SingleFlight } from '../storage/concurrency.js';
import { unattended, type Schedule } from '../model/context.js';
import { SatchelError, unavailable } from '../model/errors.js';
import { randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import type { SessionSummary } from '../model/session.js';

/**
 * The per-namespace manifest: what `list` and `latest` read instead of listing session objects.
 *
 * A small log-structured index (docs/design.md has the full story):
 *   m/p/<id>/<at>-<write>   an empty "pending" marker written before each session write
 *   m/l/<at>-<write>.json   one immutable log record per session write (upsert or delete)
 *   m/g/<seq>-<i>.json      immutable pages of entries, each sorted newest first
 *   m/r/<seq>.json          immutable roots, written create-only: the pages in force, recent deletes,
 *                           and the log records they cover
 * A reader lists `m/` (one request), takes the newest root, applies the log records it does not cover,
 * and checks every pending marker without a log record against the session object itself: that is how a
 * crash between a session write and its log record heals. `list` reads pages newest first and stops as
 * soon as no unread page can hold a newer entry, so a cold `list` of 20 reads one or two small pages.
 *
 * Compaction folds the log records into one new small page and a new root (bytes written do not depend on
 * the number of sessions). Once the small pages outnumber the large ones, a major compaction rewrites all
 * pages without superseded or deleted entries; it runs once per (sessions / 8) writes, so its cost per
 * write stays constant too.
 */

/** Fields a list entry gained in v1.1: entries of older pages and log records lack them. */
type NewerFields = 'metadata' | 'sandbox' | 'untrusted_ingested' | 'episode_untrusted';

export interface ManifestEntry
  extends Omit<SessionSummary, NewerFields>, Partial<Pick<SessionSummary, NewerFields>> {
  revision: number;
  /** Ordering time in ms: the session's updated_at for upserts, the deletion time for deletes. */
  at: number;
  /**
   * The session's incarnation (`satchel.i`, since 2026-12-05): which session the id held, where an import
   * can keep a deleted session's `created_at`. Entries written before lack it.
   */
  i?: string;
}

/** What a pin keeps of the session created again under a deleted id: its incarnation (created_at before). */
function pinOf(e: ManifestEntry): string {
  return e.i ?? e.created_at;
}

/**
 * Whether `e` is the version of the session a pin keeps. A pin written before 2026-12-05 is a created_at
 * (an ISO time), which an import of the deleted session's file shares: it matches by that, as before.
 */
function pinned(pin: string | undefined, e: ManifestEntry): boolean {
  if (pin === undefined) return false;
  return pin === e.i || (pin.includes('T') && pin === e.created_at);
}

/**
 * `first`: the entry's incarnation began with the writes this record covers (a create among them). Its
 * revision is above 1 when a session was deleted under the id before (`RevisionFloors`); records written
 * before 2026-12-06 lack it, and a first version there is revision 1.
 */
type LogRecord =
  | { v: 1; op: 'put'; entry: ManifestEntry; first?: true }
  | { v: 1; op: 'del'; id: string; at: number };

interface PageRef {
  key: string;
  count: number;
  minAt: number;
  maxAt: number;
  /** Written by a major compaction (dense, no superseded entries) or a rebuild. */
  major: boolean;
}

interface Root {
  v: 2;
  seq: number;
  built_at: number;
  /** Sorted by maxAt, newest first. */
  pages: PageRef[];
  tombstones: { id: string; at: number }[];
  /**
   * Deletes of ids created again with a time not after the delete (a device whose clock is behind): each
   * hides every version at or before `at` but those of the live session, whose `created_at` is `keep`, so
   * a late log record of the deleted session cannot show it again. Kept like tombstones (24 h). Satchel
   * before 2026-12-04 ignores them (and drops the tombstone).
   */
  pins?: Pin[];
  covered: string[];
  /**
   * The creates sliced compactions (`maxSyncLogs`) folded while they left log records out: a delete record
   * left out may be older than such a create by its time alone (a device whose clock is behind, an import
   * that keeps its `updated_at`), so a reader checks the id's object for it (see EdgeCreate).
   */
  edge?: EdgeCreate[];
}

/** A create a sliced compaction folded near its edge: the session's id and the create's time. */
interface EdgeCreate {
  id: string;
  at: number;
}

interface Pin {
  id: string;
  at: number;
  keep: string;
}

/** A delete in force: a tombstone, or with `keep` a pin. */
type Deletion = { id: string; at: number; keep?: string };

interface Page {
  v: 2;
  entries: ManifestEntry[];
}

/** A namespace's sessions, newest first. */
export interface ManifestView {
  entries: ManifestEntry[];
}

export interface ManifestOptions {
  /** Compact once this many log records are not yet covered by a root. */
  compactAfter?: number;
  /** A pending marker without a log record older than this is a crashed write; the compactor heals it. */
  stalePendingMs?: number;
  /** How long deletes are remembered, to refuse late log records of deleted sessions. */
  tombstoneTtlMs?: number;
  /** Entries per page written by a major compaction. */
  pageSize?: number;
  /** Page entries kept in process (about 500 bytes of memory each). */
  pageCacheEntries?: number;
  /** Parallel GETs when verifying or rebuilding. */
  concurrency?: number;
  now?: () => number;
  /**
   * The pending markers of this process whose writes are all logged (standing markers, markers.ts),
   * taken before a listing: a reader need not check their sessions against the objects.
   */
  settledMarkers?: () => ReadonlySet<string>;
  /**
   * The pending markers of this process with a write not yet logged, taken before a listing: one the
   * listing does not show (its log record landed after the LIST passed it, then the marker went) sends
   * the reader to the session object, so this process's own write is never missing from its listing.
   */
  unsettledMarkers?: () => ReadonlySet<string>;
  /**
   * Called by the compactor for each stale marker it heals (a writer crashed or failed between a commit
   * and its log record), after reading the session: what else such a write left unwritten is restored
   * here (its audit records).
   */
  healStale?: (ns: string, id: string, since: number) => Promise<void>;
  /**
   * Short-lived runtimes (a Worker's request may make 1,000 storage operations): a reader that finds more
   * log records than this not covered by a root reads none of them; it folds the oldest first in a sliced
   * compaction (`catchUpLogs`), and answers 503 while more than this are left. Default: no bound.
   */
  maxSyncLogs?: number;
  /** With maxSyncLogs: log records a reader folds before it answers, and a compaction's most (600). */
  catchUpLogs?: number;
}

/** Reads the current summary of a session from its object, or null when it does not exist. */
export type SummaryReader = (ns: string, id: string) => Promise<ManifestEntry | null>;

/** What a reader asks for: newest first, after a cursor, changed after a time. */
export interface PageQuery {
  limit: number;
  before?: { at: number; id: string };
  updatedAfter?: number;
  /** Only sessions whose metadata holds every one of these pairs (key, value). */
  metadata?: [key: string, value: string][];
}

interface Listing {
  roots: SequencedRef[];
  pages: string[];
  logs: string[];
  pending: { key: string; id: string; writeId: string; at: number }[];
  maxSeq: number;
  /** A sliced rebuild's progress is there (keys.manifestRebuild). */
  progress?: boolean;
}

/** The state above the pages: recent changes, verified, and the deletes in force. */
interface Snapshot {
  listing: Listing;
  root: Root;
  /** Newest change per id from uncovered log records and verification: an entry, or a delete time. */
  changes: Map<string, { entry?: ManifestEntry; deletedAt?: number }>;
  tombstones: Map<string, number>;
  /** For a tombstone that pins the live session of its id: that session's created_at (see Root.pins). */
  keeps: Map<string, string>;
  /** Ids whose object exists though a delete at or after its time is known: only its version lives. */
  again: Map<string, ManifestEntry>;
  uncovered: string[];
  stalePending: string[];
  verified: number;
  signature: string;
  /** The newest page's read, started with the snapshot's own reads; taken by the first `top` (pageOf). */
  firstPage?: { key: string; read: Promise<Page> };
  /** A sliced compaction's snapshot (sliceOf): what it left out, and the creates it read. */
  slice?: Slice;
}

interface Slice {
  /** The time (ms) of the oldest log record left out: every one left out is as new or newer. */
  boundary: number;
  /** How many uncovered log records were left out. */
  rest: number;
  creates: EdgeCreate[];
}

/** What a snapshot reads: a slice of the uncovered log records (compaction), or at most a bound (readers). */
interface Scope {
  slice?: number;
  bound?: number;
}

class CorruptManifest extends Error {}
/** More log records are not covered by a root than a reader may read (`maxSyncLogs`). */
class Backlog extends Error {
  constructor(readonly count: number) {
    super(`${count} manifest log records are not covered by a root`);
  }
}
/** A listed manifest object is gone (`key`): another process's compaction or purge replaced the root. */
class ManifestMoved extends Error {
  constructor(readonly key: string) {
    super(`manifest object ${key} is gone`);
  }
}

/** Readings of a manifest that keeps changing under a reader before it answers 503 (at most 1.6 s of waits). */
const MOVED_RETRIES = 10;
/** The same object missing this many times in a row, each after a fresh LIST: the newest root is broken. */
const MISSING_REPEATS = 3;
/** A rebuild in slices (`maxSyncLogs`): the sessions one request reads (about one GET each). */
const REBUILD_SLICE = 300;

/** A rebuild in slices, between requests (`keys.manifestRebuild`): the entries of the ids up to `after`. */
interface RebuildProgress {
  v: 1;
  started_at: number;
  after: string;
  entries: ManifestEntry[];
  /**
   * What purges took out of it once claimed (dropFromRebuild), ids only: by id a scrub's time, or null for a
   * delete. Once a root is there, whoever finds it and the progress purges them, 100 a request (settleDropped).
   * Not recorded before a claim (review s62h): it holds the purges between a claim and the next request.
   */
  dropped?: [string, number | null][];
  /** When a last slice claimed it, before its root (rebuildSliced). */
  rooting?: number;
  /** The write's own token (putIf). */
  w?: string;
}

export class Manifest {
  private readonly compactAfter: number;
  private readonly stalePendingMs: number;
  private readonly tombstoneTtlMs: number;
  private readonly pageSize: number;
  private readonly pageCacheLimit: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly settledMarkers: ManifestOptions['settledMarkers'];
  private readonly unsettledMarkers: ManifestOptions['unsettledMarkers'];
  private readonly healStale: ManifestOptions['healStale'];
  private readonly maxSyncLogs: number | undefined;
  private readonly catchUpLogs: number;
  private readonly rootCache = new Map<string, Root>();
  private readonly pageCache = new Map<string, Page>();
  private pageCacheEntries = 0;
  private readonly logCache = new Map<string, LogRecord>();
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly compacting = new SingleFlight<void>();
  /** When this process last read a slice of a namespace's sessions (rebuildSliced): one a second. */
  private readonly slicedAt = new Map<string, number>();
  private readonly views = new Map<string, { signature: string; entries: ManifestEntry[] }>();
  /** The last full view per namespace and when its listing started; dropped on every write by this process. */
  private readonly recent = new Map<string, { at: number; entries: ManifestEntry[] }>();
  private readonly localWrites = new Map<string, number>();
  /** Stale markers whose heal failed in this process: how often, and when a listing may schedule it again. */
  private readonly healRetry = new Map<string, { tries: number; at: number }>();
  /**
   * Per namespace: the ids waiting for the next purge, and the purges queued one after another. The ids of
   * a purge that failed (storage) join the namespace's next one.
   */
  /** Per namespace: by id, the time of the version a scrub keeps (older versions' entries go). */
  private readonly scrubFrom = new Map<string, Map<string, number>>();
  /** Per namespace: by id, the time of a delete no log record tells of (`purge`'s `at`). */
  private readonly unloggedAt = new Map<string, Map<string, number>>();
  private readonly scrubs = new Batcher<string>(
    (ns, ids) => runExclusive(this.compacting, ns, () => this.scrubOnce(ns, ids)),
    0,
    Infinity,
    true,
  );
  private readonly purges = new Batcher<string>(
    (ns, ids) => runExclusive(this.compacting, ns, () => this.deleteOnce(ns, ids)),
    0,
    Infinity,
    true,
  );

  constructor(
    private readonly store: ObjectStore,
    private readonly readSummary: SummaryReader,
    options: ManifestOptions = {},
  ) {
    this.compactAfter = options.compactAfter ?? 64;
    this.stalePendingMs = options.stalePendingMs ?? 15 * 60_000;
    this.tombstoneTtlMs = options.tombstoneTtlMs ?? 24 * 3600_000;
    this.pageSize = options.pageSize ?? 512;
    this.pageCacheLimit = options.pageCacheEntries ?? 200_000;
    this.concurrency = options.concurrency ?? 16;
    this.now = options.now ?? Date.now;
    this.settledMarkers = options.settledMarkers;
    this.unsettledMarkers = options.unsettledMarkers;
    this.healStale = options.healStale;
    this.maxSyncLogs = options.maxSyncLogs;
    this.catchUpLogs = Math.max(1, options.catchUpLogs ?? 600);
  }

  /** This process committed a write in `ns`: views cached by age are out of date. */
  noteWrite(ns: string): void {
    this.wrote(ns);
  }

  private wrote(ns: string): void {
    this.recent.delete(ns);
    this.localWrites.set(ns, (this.localWrites.get(ns) ?? 0) + 1);
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

  /** Records a successful session write (create or update); answers the log record's key. */
  async recordPut(
    ns: string,
    entry: ManifestEntry,
    writeId: string,
    first = false,
  ): Promise<string> {
    const key = keys.log(ns, entry.at, writeId);
    const record: LogRecord = {
      v: 1,
      op: 'put',
      entry,
      ...(first ? { first: true as const } : {}),
    };
    this.wrote(ns);
    await putOwn(this.store, key, utf8(JSON.stringify(record)));
    this.wrote(ns);
    this.cacheLog(key, record);
    return key;
  }

  /**
   * Deletes a put's log record that a delete missed: it landed after the delete's purge had listed the
   * records (the session's object is gone). The delete's record or tombstone already hides the entry.
   */
  async dropLog(ns: string, key: string): Promise<void> {
    this.logCache.delete(key);
    await this.store.delete(key);
    this.wrote(ns);
  }

  /** Records a deletion. */
  async recordDelete(ns: string, id: string, at: number, writeId: string): Promise<void> {
    const key = keys.log(ns, at, writeId);
    const record: LogRecord = { v: 1, op: 'del', id, at };
    this.wrote(ns);
    await putOwn(this.store, key, utf8(JSON.stringify(record)));
    this.wrote(ns);
    this.cacheLog(key, record);
  }

  /**
   * Entries newest first (updated_at, then id, descending), at most `query.limit`, and whether more
   * follow. `schedule` receives background work (compaction) to keep alive after the response.
   */
  async list(
    ns: string,
    query: PageQuery,
    schedule: Schedule = unattended,
  ): Promise<{ entries: ManifestEntry[]; more: boolean }> {
    return this.withSnapshot(ns, schedule, (snap) => this.top(snap, query));
  }

  /**
   * Every entry, newest first (search, cleanup, benchmarks). `settled`: skip checking writes still in
   * flight (pending markers younger than stalePendingMs without a log record) against the session
   * objects; compaction and index upkeep use it, since they fold those writes next time anyway and must
   * not add session reads to every write.
   */
  async view(
    ns: string,
    schedule: Schedule = unattended,
    options: { settled?: boolean; maxAgeMs?: number } = {},
  ): Promise<ManifestView> {
    // `maxAgeMs`: a view listed that recently, with no write by this process since, is still good
    // enough (search: other devices' writes show up within that time, this process's at once).
    const recent = this.recent.get(ns);
    if (options.maxAgeMs && recent && this.now() - recent.at < options.maxAgeMs)
      return { entries: recent.entries };
    const listedAt = this.now();
    const writes = this.localWrites.get(ns) ?? 0;
    return this.withSnapshot(
      ns,
      schedule,
      async (snap) => {
        // Unchanged since the last view: the same (read-only) array, so callers can cache what they derive.
        const had = this.views.get(ns);
        let entries: ManifestEntry[];
        if (had && snap.verified === 0 && had.signature === snap.signature) entries = had.entries;
        else {
          entries = await this.everything(snap);
          if (snap.verified === 0) this.views.set(ns, { signature: snap.signature, entries });
        }
        // Only when no write of this process landed while listing: it might be missing from this view.
        if (!options.settled && (this.localWrites.get(ns) ?? 0) === writes)
          this.recent.set(ns, { at: listedAt, entries });
        return { entries };
      },
      options.settled,
    );
  }

  /**
   * The entry of `id` as this process last saw it listed (its last snapshot's changes and cached pages,
   * its last view), without a request: a GET that finds no object heals only what a reader was shown.
   */
  listed(ns: string, id: string): ManifestEntry | undefined {
    const snap = this.snapshots.get(ns);
    const found = (es?: ManifestEntry[]) => es?.find((e) => e.id === id);
    return (
      snap?.changes.get(id)?.entry ??
      found(this.recent.get(ns)?.entries) ??
      snap?.root.pages.map((p) => found(this.pageCache.get(p.key)?.entries)).find((e) => e)
    );
  }

  /** Folds log records into a new page and root, and removes what they cover. Single-flight per namespace. */
  compact(ns: string, force = false): Promise<void> {
    return this.compacting.run(ns, async () => {
      // Bounded (a short-lived runtime): at most a slice, as a reader's catch-up folds.
      const slice = this.maxSyncLogs === undefined ? undefined : this.catchUpLogs;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.compactOnce(ns, force, slice);
          return;
        } catch (err) {
          if (err instanceof CorruptManifest) return this.rebuild(ns).then(() => undefined);
          // Another process's compaction or purge removed what we listed: list again.
          if (err instanceof ManifestMoved && attempt < 4) continue;
          throw err;
        }
      }
    });
  }

  /** Rebuilds the manifest from the session objects alone (missing or corrupt manifest, or on demand). */
  async rebuild(ns: string): Promise<void> {
    const startedAt = this.now();
    const listing = await this.listManifest(ns);
    const ids: string[] = [];
    const prefix = keys.sessions(ns);
    for (const key of await listAll(this.store, prefix)) {
      if (key.endsWith('.json')) ids.push(key.slice(prefix.length, -'.json'.length));
    }
    const entries = (
      await mapLimit(ids, this.concurrency, (id) =>
        this.readSummary(ns, id).catch((err: unknown) => {
          // An object that is no session (a half-copied file) is left out, not the whole namespace: a
          // GET of its id still answers that it is corrupt.
          if (SatchelError.is(err, 'corrupt')) return null;
          throw err;
        }),
      )
    ).filter((e): e is ManifestEntry => e !== null);
    // The deletes it covers stay known as tombstones: a log record of an older version that lands
    // after this root (writes answer before their log records) must not bring the session back.
    // A delete of an id whose session was created again with a time not after it stays as a pin.
    const live = new Map(entries.map((e) => [e.id, e]));
    const tombstones = new Map<string, number>();
    const keeps = new Map<string, string>();
    const remember = (id: string, at: number) => {
      if (at <= startedAt - this.tombstoneTtlMs) return;
      const session = live.get(id);
      if (session && session.at > at) return;
      tombstones.set(id, Math.max(tombstones.get(id) ?? -Infinity, at));
      if (session) keeps.set(id, pinOf(session));
    };
    for (const { r } of (await this.listedLogRecords(listing)).records)
      if (r.op === 'del') remember(r.id, r.at);
    // So do the deletes of the newest root still readable (a purge erased its deletes' records).
    for (const ref of [...listing.roots].reverse()) {
      const root = await this.loadRoot(ref.key).catch(() => null);
      if (!root) continue;
      for (const [id, at] of deletionsOf(root).tombstones) remember(id, at);
      break;
    }
    await this.writeRoot(
      ns,
      listing.maxSeq + 1,
      startedAt,
      await this.writePages(ns, listing.maxSeq + 1, entries, true),
      deletions(tombstones, keeps),
      listing.logs,
    );
    await this.store.delete(keys.manifestRebuild(ns)); // a sliced rebuild's, if one was under way
    this.snapshots.delete(ns);
    this.wrote(ns);
  }

  /**
   * A namespace with no root on a short-lived runtime: `rebuild` reads every session and log record in one
   * request, past a Worker's 1,000 storage operations after about 490 sessions (review s60b). This reads
   * REBUILD_SLICE sessions per request, keeping the entries read so far in `keys.manifestRebuild`, and
   * answers 503 (Retry-After 1) while more are left. Its root covers no log record: the sliced catch-up
   * folds them all afterwards (their deletes with them), and it is dated as of the oldest, so that none is
   * checked against its object for its age (every delete is still among them: with no root, no compaction
   * ever collected one). Its entries are its edge (Root.edge): a delete left out that is not older than one
   * sends a reader to that id's object. The last slice claims the progress (a conditional write) before its
   * root (review s62c) and leaves it: what a purge dropped after the claim, the root may hold (settleDropped).
   */
  private async rebuildSliced(ns: string): Promise<void> {
    const busy = (what: string) =>
      unavailable(`the session list of namespace ${ns} is being built (${what}); try again`, 1);
    // One slice a second per process: a request's own read and its background work (search indexes, a
    // delete's purge) each asking for one took a Worker past 1,000 operations (review s61f).
    const last = this.slicedAt.get(ns);
    if (last !== undefined && Math.abs(this.now() - last) < 1000)
      throw busy('a slice was just read');
    this.slicedAt.set(ns, this.now());
    const key = keys.manifestRebuild(ns);
    const found = await this.store.get(key);
    const stored = found ? parseProgress(text(found.body)) : undefined;
    const progress = stored ?? { v: 1, started_at: this.now(), after: '', entries: [] };
    const prefix = keys.sessions(ns);
    const ids = (await listAll(this.store, prefix))
      .filter((k) => k.endsWith('.json'))
      .map((k) => k.slice(prefix.length, -'.json'.length))
      .sort();
    const todo = ids.filter((id) => id > progress.after);
    const slice = todo.slice(0, REBUILD_SLICE);
    const read = await mapLimit(slice, this.concurrency, (id) =>
      this.readSummary(ns, id).catch((err: unknown) => {
        if (SatchelError.is(err, 'corrupt')) return null; // as `rebuild` leaves it out
        throw err;
      }),
    );
    const entries = [...progress.entries, ...read.filter((e): e is ManifestEntry => e !== null)];
    if (todo.length > slice.length) {
      const next: RebuildProgress = { ...progress, after: slice[slice.length - 1]!, entries };
      const when = found && stored ? { ifMatch: found.etag } : { ifNoneMatch: '*' as const };
      // Another request saved the same slice first (or a purge removed it): its answer stands.
      await this.putIf(key, next, when);
      throw busy(`${ids.length - todo.length + slice.length} of ${ids.length} sessions read`);
    }
    // A purge meanwhile (a delete, a scrub) rewrote the progress or made one: what this read may hold a
    // deleted session's text, and must not become the root (review s61g). The next request reads again.
    // A conditional claim, not a read: a purge after it records what it dropped (review s62c).
    const claim = { ...progress, rooting: this.now() };
    const when = found ? { ifMatch: found.etag } : { ifNoneMatch: '*' as const };
    if (!(await this.putIf(key, claim, when))) throw busy('sessions changed meanwhile');
    const listing = await this.listManifest(ns);
    // Another request wrote it: the claim stays, for whoever settles it (settleDropped).
    if (listing.roots.length > 0) return;
    const oldest = listing.logs.reduce((min, k) => Math.min(min, logTime(k)), progress.started_at);
    const seq = listing.maxSeq + 1;
    const pages = await this.writePages(ns, seq, entries, true);
    const edge = entries.map((e) => ({ id: e.id, at: e.at }));
    // Another request's root landed meanwhile (a purge may have replaced it since, freeing its number), or
    // takes this number first: no root names these pages.
    if (
      (await listAll(this.store, keys.manifestRoots(ns))).length > 0 ||
      !(await this.writeRoot(ns, seq, oldest, pages, [], [], edge))
    )
      await this.store.delete(pages.map((p) => p.key));
    // The progress stays: what was dropped after the claim is purged by the next request that finds a root
    // and it (settleDropped). Until review s62h it went here, and a request stopped after its root lost it.
    // The log records' catch-up reads up to `catchUpLogs` more: not in the request that read a slice.
    if (slice.length > REBUILD_SLICE / 4) throw busy('its log records come next');
  }

  /**
   * The to-do list a sliced rebuild leaves once its root is there (the progress, `dropped`): purges a batch of
   * its ids from the root (a delete's, or a scrub's versions before its time), then deletes it, or keeps the
   * rest (review s62h). Only after a root was seen: a purge that writes an id later lists m/ after, finds the
   * root and purges it itself (purgeUnrooted), so an unconditional delete loses nothing.
   */
  private async settleDropped(ns: string): Promise<void> {
    const key = keys.manifestRebuild(ns);
    const found = await this.store.get(key);
    if (!found) return;
    const progress = parseProgress(text(found.body));
    const dropped = progress?.dropped ?? [];
    // 2 reads an id at most (doomedOf): within a Worker request's budget beside its reader's snapshot.
    const batch = dropped.slice(0, 100);
    for (const scrub of [false, true]) {
      const of = new Map(batch.filter(([, at]) => (at !== null) === scrub));
      if (of.size > 0)
        await this.purgeOnce(
          ns,
          new Set(of.keys()),
          scrub ? (of as Map<string, number>) : undefined,
          true,
        );
    }
    if (batch.length === dropped.length) return this.store.delete(key);
    // The rest for the next request; its entries (in the root now) go. A purge meanwhile: read it again then.
    const rest = { ...progress!, entries: [], dropped: dropped.slice(batch.length) };
    await this.putIf(key, rest, { ifMatch: found.etag });
  }

  /**
   * No root on a short-lived runtime: takes the entries of `ids` out of a sliced rebuild's progress (a delete
   * or a scrub: their text must not stay there); their log records list what is left of them. Until review
   * s61f this deleted the progress, so a namespace deleted from between lists was never built. It is written
   * even when it holds none of them, and made when there is none: a request reading a slice meanwhile then
   * fails to save it, and one reading the last slice fails to claim it (review s61g). A claimed one records
   * `ids` (`dropped`, with a scrub's `from`): its root may hold them (review s62c). False when another write
   * came first: the purge tries again (purgeOnce). It never deletes one (until review s62h three lost writes
   * did, and every isolate's `dropped` went).
   */
  private async dropFromRebuild(
    ns: string,
    ids: Set<string>,
    from?: Map<string, number>,
  ): Promise<boolean> {
    const key = keys.manifestRebuild(ns);
    const found = await this.store.get(key);
    const progress = found ? parseProgress(text(found.body)) : undefined;
    const next: RebuildProgress = progress
      ? { ...progress, entries: progress.entries.filter((e) => !ids.has(e.id)) }
      : { v: 1, started_at: this.now(), after: '', entries: [] };
    if (progress?.rooting)
      next.dropped = [
        ...(progress.dropped ?? []),
        ...[...ids].map((id): [string, number | null] => [id, from?.get(id) ?? null]),
      ];
    const when = found ? { ifMatch: found.etag } : { ifNoneMatch: '*' as const };
    return this.putIf(key, next, when);
  }

  /**
   * A conditional write of the progress as JSON; false when its condition does not hold. Each write holds
   * a token of its own (`w`): on S3 and R2 an etag is the MD5 of the body, so a purge that rewrote the
   * progress byte for byte kept its etag, and a slice read meanwhile still saved a deleted session's text
   * (review s64c).
   */
  private putIf(key: string, value: RebuildProgress, when: PutOptions): Promise<boolean> {
    return this.store.put(key, utf8(JSON.stringify({ ...value, w: randomHex(6) })), when).then(
      () => true,
      (err: unknown) => {
        if (PreconditionFailedError.is(err)) return false;
        throw err;
      },
    );
  }

  /**
   * Erases deleted sessions from the manifest (docs/design.md, "Deleting"): writes a root whose pages no
   * longer hold any version of `ids` older than their delete (only the pages that held them are rewritten;
   * the others are referenced as they are), then deletes the log records and pending markers of those
   * versions, every older root, and every page the new root does not reference. No earlier root is kept:
   * a reader still on one finds a page gone, lists again and takes the new root.
   *
   * Calls made while a purge of the namespace waits are folded into one, so a cleanup of many sessions
   * rewrites the affected pages a few times, not once per session. Runs after any compaction in flight.
   * `at`: the time of a delete no log record tells of. The purge erases up to it when the id's object is
   * there again (created since), every version when it is missing; kept until a purge of the id succeeds.
   */
  purge(ns: string, ids: string[], at?: number): Promise<void> {
    if (at !== undefined) {
      let byId = this.unloggedAt.get(ns);
      if (!byId) this.unloggedAt.set(ns, (byId = new Map()));
      for (const id of ids) byId.set(id, Math.max(byId.get(id) ?? at, at));
    }
    return this.purges.add(ns, ids);
  }

  /** A batch of deletes' purges; once it succeeded, the times of unlogged deletes it used are forgotten. */
  private async deleteOnce(ns: string, ids: Set<string>): Promise<void> {
    const byId = this.unloggedAt.get(ns);
    const used = [...ids].map((id) => [id, byId?.get(id)] as const);
    await this.purgeOnce(ns, ids);
    for (const [id, at] of used) if (byId?.get(id) === at) byId?.delete(id);
  }

  /**
   * After a write whose entry no longer holds text an older version's did (a replaced task or metadata,
   * secrets redacted again): rewrites the pages that hold an older entry of `id` without it and erases
   * the older versions' log records, so the text leaves every object. Only once the write's own log record
   * is stored (`at`: its entry's time): the entries before it go, never the newest.
   */
  scrub(ns: string, id: string, at: number): Promise<void> {
    let byId = this.scrubFrom.get(ns);
    if (!byId) this.scrubFrom.set(ns, (byId = new Map()));
    byId.set(id, Math.max(byId.get(id) ?? -Infinity, at));
    return this.scrubs.add(ns, [id]);
  }

  private async scrubOnce(ns: string, ids: Set<string>): Promise<void> {
    const byId = this.scrubFrom.get(ns) ?? new Map<string, number>();
    const from = new Map([...ids].map((id) => [id, byId.get(id) ?? -Infinity]));
    await this.purgeOnce(ns, ids, from);
    for (const [id, at] of from) if (byId.get(id) === at) byId.delete(id);
  }

  /**
   * `from`: a scrub's, by id the time before which entries go (no delete, no tombstone). `settling`: run by
   * settleDropped, which it does not start again.
   */
  private async purgeOnce(
    ns: string,
    ids: Set<string>,
    from?: Map<string, number>,
    settling?: boolean,
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const done = await this.tryPurge(ns, ids, from, settling).catch((err) => {
        if (err instanceof ManifestMoved) return false; // a compactor removed what we listed
        throw err;
      });
      if (done) return;
      // Another compactor took the sequence number (its root may still reference the old pages), or another
      // purge rewrote a sliced rebuild's progress first.
      if (attempt >= 20) throw new Error(`manifest purge of namespace ${ns} kept losing its root`);
      await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt, 5)));
    }
  }

  /** One attempt; false when another compactor won the root's sequence number, or another purge the progress. */
  private async tryPurge(
    ns: string,
    ids: Set<string>,
    from?: Map<string, number>,
    settling?: boolean,
  ): Promise<boolean> {
    const startedAt = this.now();
    let snap: Snapshot | null;
    try {
      snap = await this.snapshot(ns, true);
    } catch (err) {
      if (err instanceof ManifestMoved) return false;
      if (err instanceof CorruptManifest) snap = null;
      else throw err;
    }
    if (!snap && this.maxSyncLogs !== undefined) {
      // A sliced rebuild's entries (rebuildSliced) may hold a deleted or scrubbed version's text.
      return (await this.dropFromRebuild(ns, ids, from)) && this.purgeUnrooted(ns, ids, from);
    }
    if (!snap) {
      // No usable root: rebuild from the session objects (the deleted ones are gone), then purge
      // the logs.
      await this.rebuild(ns);
      return false;
    }
    const { root, listing } = snap;
    // Every log record listed, covered or not: a covered one still holds its entry until it is
    // collected.
    const { records, unreadable } = await this.listedLogRecords(listing);
    const { until, again, doomed } = await this.doomedOf(ns, ids, from, snap, records);
    // The successor of the root it builds on (see compactOnce).
    const seq = root.seq + 1;
    const pages = await this.pagesWithout(ns, seq, root, doomed);
    // The log records of the erased versions (puts carry the task; the delete itself goes too: the
    // root's tombstone takes its place), and those that cannot be read: covered ones (the snapshot read
    // every uncovered record), which may be an erased version's.
    const erasedLogs: string[] = [...unreadable];
    for (const x of records) {
      const r = x.r;
      if (r.op === 'put' ? doomed(r.entry.id, r.entry.at, r.entry) : doomed(r.id, r.at))
        erasedLogs.push(x.key);
    }
    const { tombstones, keeps } = mergedTombstones(root, until, startedAt);
    for (const [id, e] of again) keeps.set(id, pinOf(e));
    const covered = [...new Set([...root.covered, ...erasedLogs])];
    const written = await this.writeRoot(
      ns,
      seq,
      startedAt,
      pages,
      deletions([...tombstones], keeps),
      covered,
      root.edge, // it leaves the same records uncovered as the root it builds on
    );
    if (!written) return false;
    await this.collectPurged(ns, seq, listing, pages, erasedLogs);
    // A sliced rebuild's progress left with its root holds entries' text, and what its root may still hold.
    if (listing.progress && !settling) await this.settleDropped(ns);
    return true;
  }

  /**
   * No root on a short-lived runtime (a sliced rebuild under way or to come): erases the put log records of
   * the versions purged (they carry the task), which no catch-up would fold before 64 more writes (review
   * s62c); the delete records stay (no root holds a tombstone). Listed after the progress was rewritten:
   * false when a root landed meanwhile (a last slice that claimed before it), so the purge runs on that root.
   */
  private async purgeUnrooted(
    ns: string,
    ids: Set<string>,
    from?: Map<string, number>,
  ): Promise<boolean> {
    const listing = await this.listManifest(ns);
    if (listing.roots.length > 0) return false;
    // More than a request may read: left to the catch-up that follows the root.
    if (listing.logs.length > this.maxSyncLogs!) return true;
    const { records } = await this.listedLogRecords(listing);
    const { doomed } = await this.doomedOf(ns, ids, from, null, records);
    const erased = records.flatMap(({ key, r }) =>
      r.op === 'put' && doomed(r.entry.id, r.entry.at, r.entry) ? [key] : [],
    );
    // Seq 0: no root or page goes (roots start at 1), only these records and their pending markers.
    if (erased.length > 0) await this.collectPurged(ns, 0, listing, [], erased);
    return true;
  }

  /**
   * Which versions of `ids` a purge erases: up to their delete (`until`), but the version an id's object
   * holds when it was created again with a time not after its delete (`again`); a scrub's (`from`), its
   * older puts.
   */
  private async doomedOf(
    ns: string,
    ids: Set<string>,
    from: Map<string, number> | undefined,
    snap: Snapshot | null,
    records: { r: LogRecord }[],
  ) {
    const until = from ? new Map<string, number>() : eraseUntil(snap, ids, records);
    // A delete this view cannot see (its log record was not stored, its answer was lost): the purge was
    // asked for because the object went. Its missing object says so; no time of its own, so as of now.
    // Created again since (before a retry): up to the delete's time, when the purge was given it (until
    // review s67j the retry erased nothing then, and the deleted task stayed for good).
    const known = this.unloggedAt.get(ns);
    if (!from)
      await mapLimit([...ids], this.concurrency, async (id) => {
        const at = known?.get(id);
        if (at === undefined && until.has(id)) return;
        const to = (await this.readSummary(ns, id)) ? at : Infinity;
        if (to !== undefined) until.set(id, Math.max(to, until.get(id) ?? to));
      });
    // An id created again with a time not after its delete's (an import of an older session): its object
    // names the version that stays, which no tombstone may hide.
    const again = new Map<string, ManifestEntry>();
    await mapLimit([...until.keys()], this.concurrency, async (id) => {
      const e = await this.readSummary(ns, id);
      if (e && e.at <= until.get(id)!) again.set(id, e);
    });
    const doomed = (id: string, at: number, e?: ManifestEntry) =>
      from
        ? at < from.get(id)! && e !== undefined // a scrub's: older puts only
        : !sameVersion(again.get(id), e) && at <= until.get(id)!; // false for an id not purged (undefined)
    return { until, again, doomed };
  }

  /**
   * Every log record of a listing that can still be read, with its key, and the keys of those that cannot
   * be parsed: such a record tells nothing (the session objects are the truth), and must not stop the
   * rebuild that replaces it nor a purge (which deletes it: it may be an erased version's). Records
   * collected meanwhile are left out.
   */
  private async listedLogRecords(
    listing: Listing,
  ): Promise<{ records: { key: string; r: LogRecord }[]; unreadable: string[] }> {
    const unreadable: string[] = [];
    const records = await mapLimit(listing.logs, 64, (key) =>
      this.loadLog(key).then(
        (r) => ({ key, r }),
        (err) => {
          if (err instanceof CorruptManifest) unreadable.push(key);
          else if (!(err instanceof ManifestMoved)) throw err;
          return null;
        },
      ),
    );
    return { records: records.filter((x) => x !== null), unreadable };
  }

  /**
   * The root's pages with the erased versions left out: the pages that hold one are rewritten
   * without it (under `seq`); the others stay as they are.
   */
  private async pagesWithout(
    ns: string,
    seq: number,
    root: Root,
    doomed: (id: string, at: number, e: ManifestEntry) => boolean,
  ): Promise<PageRef[]> {
    const pages: PageRef[] = [];
    await mapLimit(root.pages, 8, (p) => this.loadPage(p.key));
    for (const ref of root.pages) {
      const page = await this.loadPage(ref.key);
      if (!page.entries.some((e) => doomed(e.id, e.at, e))) {
        pages.push(ref);
        continue;
      }
      const kept = page.entries.filter((e) => !doomed(e.id, e.at, e));
      if (kept.length === 0) continue;
      pages.push(...(await this.writePages(ns, seq, kept, ref.major)));
    }
    pages.sort((a, b) => b.maxAt - a.maxAt);
    return pages;
  }

  /**
   * Deletes the garbage of a purge and forgets it: every older root (none is kept), every page the
   * new root does not reference (of a seq we know about), the erased log records and their pending
   * markers.
   */
  private async collectPurged(
    ns: string,
    seq: number,
    listing: Listing,
    pages: PageRef[],
    erasedLogs: string[],
  ): Promise<void> {
    const referenced = new Set(pages.map((p) => p.key));
    const erasedWrites = new Set(erasedLogs.map(writeIdOfLog));
    const garbage = [
      ...listing.roots.filter((r) => r.seq < seq).map((r) => r.key),
      ...listing.pages.filter((k) => !referenced.has(k) && seqOfName(k) <= seq),
      ...erasedLogs,
      ...listing.pending.filter((p) => erasedWrites.has(p.writeId)).map((p) => p.key),
    ];
    if (garbage.length > 0) await this.store.delete(garbage);
    for (const key of erasedLogs) this.logCache.delete(key);
    for (const key of listing.pages) if (!referenced.has(key)) this.dropPage(key);
    this.snapshots.delete(ns);
    this.views.delete(ns);
    this.wrote(ns);
  }

  // ---- reading ----

  private async withSnapshot<T>(
    ns: string,
    schedule: Schedule,
    use: (s: Snapshot) => Promise<T>,
    settled = false,
  ): Promise<T> {
    let rebuilds = 0;
    let caughtUp = false;
    const moved = { count: 0, key: '', repeats: 0 };
    for (;;) {
      try {
        const snap = await this.snapshot(ns, settled, { bound: this.maxSyncLogs });
        if (!snap) {
          if (rebuilds > 5)
            throw new Error(`no manifest root for namespace ${ns} after rebuilding`);
          rebuilds++;
          // A short-lived runtime reads the sessions a slice per request (rebuildSliced).
          await (this.maxSyncLogs === undefined ? this.rebuild(ns) : this.rebuildSliced(ns));
          continue;
        }
        const result = await use(snap);
        const leftovers = snap.listing.logs.length - snap.uncovered.length;
        if (
          snap.uncovered.length >= this.compactAfter ||
          leftovers >= this.compactAfter ||
          snap.stalePending.some((k) => this.healDue(k))
        ) {
          schedule(this.compact(ns));
        }
        // A sliced rebuild's root and its progress: settled after that compaction, but not after a slice or
        // a catch-up, whose reads take most of a Worker request's budget (the next request settles it).
        if (snap.listing.progress && !rebuilds && !caughtUp)
          schedule(runExclusive(this.compacting, ns, () => this.settleDropped(ns)));
        return result;
      } catch (err) {
        // Too many log records to read in one request: fold the oldest first, once, then read again. Each
        // request makes progress, so retries end the backlog (review s60b).
        if (err instanceof Backlog) {
          if (caughtUp)
            throw unavailable(
              `the session list of namespace ${ns} is catching up on ${err.count} writes; try again`,
            );
          caughtUp = true;
          // Not behind a compaction in flight: on Workers that may be another request's work, which a
          // request must not wait on (review s58j). Racing compactors settle on the root's seq.
          await this.catchUp(ns);
          continue;
        }
        // Corrupt: rebuild from the session objects.
        if (err instanceof CorruptManifest && rebuilds < 6) {
          rebuilds++;
          await this.rebuild(ns);
          continue;
        }
        if (!(err instanceof ManifestMoved)) throw err;
        // The newest root names an object that is not there, after a fresh LIST each time: rebuild (once).
        moved.repeats = err.key === moved.key ? moved.repeats + 1 : 1;
        moved.key = err.key;
        if (moved.repeats >= MISSING_REPEATS && rebuilds === 0) {
          rebuilds++;
          await this.rebuild(ns);
          continue;
        }
        // Another process's compaction or purge (one per DELETE) replaced the root and deleted what we
        // listed: list again after a short jittered wait, keeping what is cached (the objects are
        // immutable). Never a rebuild for that, and never a 500: until 2026-12-06 the sixth attempt
        // rebuilt from every session object and the seventh answered 500 (review s58b).
        if (++moved.count > MOVED_RETRIES)
          throw unavailable(
            `the session list of namespace ${ns} kept changing while it was read; try again`,
          );
        if (moved.count > 1) await sleep(Math.random() * Math.min(250, 5 * 2 ** moved.count));
      }
    }
  }

  /**
   * Folds the oldest uncovered log records in sliced compactions, reading at most `catchUpLogs` of them (a
   * short-lived runtime's request has a budget of storage operations).
   */
  private async catchUp(ns: string): Promise<void> {
    for (let left = this.catchUpLogs; left > 0;) {
      const { folded, rest } = await this.compactOnce(ns, true, left).catch((err: unknown) => {
        if (err instanceof ManifestMoved) return { folded: 0, rest: 0 }; // another compactor: read again
        throw err;
      });
      if (folded === 0 || rest === 0) return;
      left -= folded;
    }
  }

  /**
   * Lists the manifest and merges the uncovered log records and verified pending writes; null: no root.
   * `scope.bound`: throws Backlog, reading none, past that many uncovered records. `scope.slice`: only the
   * oldest that many, as if the LIST had seen no other (sliceOf).
   */
  private async snapshot(ns: string, settled = false, scope: Scope = {}): Promise<Snapshot | null> {
    // Taken before the LIST: a write of ours logged after it began is not in the listing.
    const settledOwn = this.settledMarkers?.() ?? new Set<string>();
    // Ours not yet logged: a LIST is no snapshot, and may show neither their markers nor log records.
    const unsettledOwn = settled ? undefined : this.unsettledMarkers?.();
    const full = await this.listManifest(ns);
    const newest = full.roots[full.roots.length - 1];
    if (!newest) return null;
    const root = await this.listedRoot(newest.key, full);
    const covered = new Set(root.covered);
    const all = full.logs.filter((k) => !covered.has(k));
    if (scope.bound !== undefined && all.length > scope.bound) throw new Backlog(all.length);
    const { listing, uncovered, left } = sliceOf(full, all, scope.slice);
    const logged = new Set(listing.logs.map(writeIdOfLog));
    const unlogged = listing.pending.filter(
      (p) => !logged.has(p.writeId) && !settledOwn.has(p.key),
    );
    const passed = unsettledOwn ? missedOwn(ns, unsettledOwn, listing) : [];
    const signature = `${newest.key}@${root.built_at}|${uncovered.join(',')}`;
    const cached = this.snapshots.get(ns);
    // Nothing changed since the last read and nothing needs checking against the objects: reuse it.
    const unchanged = cached?.signature === signature && left.length === 0;
    if (cached && unchanged && unlogged.length === 0 && passed.length === 0)
      return { ...cached, listing };
    const { tombstones, keeps } = deletionsOf(root);
    const changes: Snapshot['changes'] = new Map();
    const toVerify = new Set<string>(passed); // our own writes whose marker and log record the LIST missed
    // Log records are tiny: fetch them all at once rather than in rounds.
    const records = await mapLimit(uncovered, 64, (k) => this.loadLog(k));
    const dels = this.merge(root, records, { changes, tombstones, keeps, toVerify });
    const stalePending = toCheck(unlogged, this.now() - this.stalePendingMs, settled, toVerify);
    // The newest page (nearly every listing reads it) at once, not after the objects: another process's
    // purge (one per DELETE) may replace the root and delete it meanwhile (review s58b).
    const first = settled ? undefined : root.pages[0];
    const firstPage = first && { key: first.key, read: this.loadPage(first.key) };
    firstPage?.read.catch(() => undefined); // its failure is the reader's (pageOf), if one reads it
    const again = await this.verify(ns, toVerify, changes, tombstones, keeps, dels);
    const snap: Snapshot = {
      listing,
      root,
      firstPage,
      changes,
      tombstones,
      keeps,
      again,
      uncovered,
      stalePending,
      verified: toVerify.size,
      signature,
      ...(left.length > 0 ? { slice: sliceInfo(left, records) } : {}),
    };
    // A slice is no view of the namespace: never reused.
    if (toVerify.size === 0 && left.length === 0) this.snapshots.set(ns, snap);
    return snap;
  }

  /**
   * Merges uncovered log records into `s.changes` (the newest per id) and the ids only their objects can
   * settle into `s.toVerify`; answers the newest delete per id, tombstone or record.
   */
  private merge(
    root: Root,
    records: LogRecord[],
    s: Pick<Snapshot, 'changes' | 'tombstones' | 'keeps'> & { toVerify: Set<string> },
  ): Map<string, number> {
    const { changes, tombstones, keeps, toVerify } = s;
    const order = records
      .map((r, i) => ({ r, at: r.op === 'put' ? r.entry.at : r.at, i }))
      .sort((a, b) => a.at - b.at || a.i - b.i);
    // The newest delete per id, tombstone or uncovered record, to check a create against.
    const dels = new Map(tombstones);
    for (const r of records)
      if (r.op === 'del') dels.set(r.id, Math.max(dels.get(r.id) ?? 0, r.at));
    const edge = new Map((root.edge ?? []).map((e) => [e.id, e.at]));
    for (const { r, at } of order) {
      const id = r.op === 'put' ? r.entry.id : r.id;
      // Older than any delete we still remember: it could resurrect a deleted session. Ask the object.
      if (at < root.built_at - this.tombstoneTtlMs / 2) {
        toVerify.add(id);
        continue;
      }
      const known = changes.get(id);
      const knownAt = known?.entry?.at ?? known?.deletedAt ?? -Infinity;
      if (at < knownAt) continue;
      if (r.op === 'put') {
        // A create after a delete from a device whose clock is behind: only the object can tell.
        if ((r.first || r.entry.revision <= 1) && (dels.get(id) ?? -Infinity) >= at) {
          toVerify.add(id);
          continue;
        }
        const deletedAt = tombstones.get(id);
        if (deletedAt !== undefined && deletedAt >= at && !pinned(keeps.get(id), r.entry)) continue;
        changes.set(id, { entry: r.entry });
      } else {
        changes.set(id, { deletedAt: at });
        // The same, when a sliced compaction folded the create and left this delete out (Root.edge).
        if ((edge.get(id) ?? Infinity) <= at) toVerify.add(id);
      }
    }
    return dels;
  }

  /**
   * Reads the objects of `ids` into `changes`; answers the ids created again at or before a known delete
   * (`dels`), whose delete stays in `tombstones` to hide every other version.
   */
  private async verify(
    ns: string,
    ids: Set<string>,
    changes: Snapshot['changes'],
    tombstones: Map<string, number>,
    keeps: Map<string, string>,
    dels: Map<string, number>,
  ): Promise<Map<string, ManifestEntry>> {
    const again = new Map<string, ManifestEntry>();
    await mapLimit([...ids], this.concurrency, async (id) => {
      let entry: ManifestEntry | null;
      try {
        entry = await this.readSummary(ns, id);
      } catch (err) {
        // An object that is no session (a half-copied file) adds nothing: its id is left out, or lists
        // as its log records say (until 2026-12-06 the whole list failed: review s54a).
        if (SatchelError.is(err, 'corrupt')) return;
        throw err;
      }
      // Gone: a delete already known keeps its time (a log record of an older version may still land).
      const known = changes.get(id)?.deletedAt;
      changes.set(id, entry ? { entry } : { deletedAt: known ?? Infinity });
      if (!entry) return;
      // Created again at or before a known delete: the delete still hides every other version.
      const deletedAt = dels.get(id) ?? -Infinity;
      if (deletedAt >= entry.at) {
        again.set(id, entry);
        tombstones.set(id, deletedAt);
        keeps.set(id, pinOf(entry));
      } else {
        tombstones.delete(id);
        keeps.delete(id);
      }
    });
    return again;
  }

  /** True when `entry` is the live version of its session in this snapshot. */
  private live(snap: Snapshot, entry: ManifestEntry, fromPage: boolean): boolean {
    // A newer version (from a change or another page) wins by `at` in top(); here only deletes matter.
    const change = snap.changes.get(entry.id);
    if (fromPage && change?.deletedAt !== undefined && change.deletedAt >= entry.at) return false;
    const deletedAt = snap.tombstones.get(entry.id);
    return (
      deletedAt === undefined ||
      deletedAt < entry.at ||
      sameVersion(snap.again.get(entry.id), entry) ||
      pinned(snap.keeps.get(entry.id), entry)
    );
  }

  /** The newest `limit` entries matching the query, reading pages only while they can still matter. */
  private async top(
    snap: Snapshot,
    query: PageQuery,
  ): Promise<{ entries: ManifestEntry[]; more: boolean }> {
    const best = new Map<string, ManifestEntry>();
    const consider = (e: ManifestEntry, fromPage: boolean) => {
      if (!this.live(snap, e, fromPage)) return;
      const had = best.get(e.id);
      if (!had || had.at < e.at || (had.at === e.at && had.revision < e.revision))
        best.set(e.id, e);
    };
    const wanted = (e: ManifestEntry) =>
      (query.updatedAfter === undefined || e.at > query.updatedAfter) &&
      (!query.metadata || query.metadata.every(([k, v]) => hasPair(e.metadata, k, v))) &&
      (!query.before ||
        e.at < query.before.at ||
        (e.at === query.before.at && e.id < query.before.id));
    const matching = () => [...best.values()].filter(wanted).sort(newestFirst);
    for (const change of snap.changes.values()) if (change.entry) consider(change.entry, false);
    const everything = query.limit >= Number.MAX_SAFE_INTEGER;
    // Every page will be read: fetch them in parallel rather than one by one below.
    if (everything) await mapLimit(snap.root.pages, 8, (p) => this.pageOf(snap, p.key));
    for (const next of snap.root.pages) {
      // Pages are sorted by their newest entry. Once limit+1 wanted entries are newer than anything an
      // unread page holds, no unread page can add to the answer or supersede a part of it.
      if (query.updatedAfter !== undefined && next.maxAt <= query.updatedAfter) break;
      if (!everything) {
        const kth = matching()[query.limit];
        if (kth && kth.at > next.maxAt) break;
      }
      for (const e of (await this.pageOf(snap, next.key)).entries) consider(e, true);
    }
    const all = matching();
    return { entries: all.slice(0, query.limit), more: all.length > query.limit };
  }

  /** Every live entry, newest first. */
  private async everything(snap: Snapshot): Promise<ManifestEntry[]> {
    const all = await this.top(snap, { limit: Number.MAX_SAFE_INTEGER });
    return all.entries;
  }

  // ---- compaction ----

  /**
   * One compaction. `slice`: fold at most that many uncovered log records, the oldest (sliceOf). Answers
   * how many it folded into a root it wrote, and how many it left out.
   */
  private async compactOnce(
    ns: string,
    force: boolean,
    slice?: number,
  ): Promise<{ folded: number; rest: number }> {
    const startedAt = this.now();
    const scope = slice === undefined ? {} : { slice };
    let snap = await this.snapshot(ns, true, scope);
    if (!snap) {
      await this.rebuild(ns);
      snap = await this.snapshot(ns, true, scope);
      if (!snap) return { folded: 0, rest: 0 };
    }
    const { root, listing } = snap;
    const rest = snap.slice?.rest ?? 0;
    const leftovers = listing.logs.length - snap.uncovered.length;
    // Objects read (stale markers' among them) need a root only when they changed something: a stale
    // marker on an object that is no session adds nothing, and its marker just goes (review s58b).
    const needRoot =
      force ||
      rest > 0 ||
      snap.uncovered.length >= this.compactAfter ||
      ((snap.stalePending.length > 0 || snap.verified > 0) && snap.changes.size > 0);
    let inForce = root;
    if (needRoot) {
      // The successor of the root it builds on, so that a compactor racing from the same root wants the
      // same number and only one wins. Not past pages already written for it (listing.maxSeq): a racer
      // that has written its pages but not yet its root would then take `seq` and this root `seq + 1`,
      // both would land, and the newer one, built without the other's changes, would drop them while
      // the other's garbage collection deleted their log records.
      const seq = root.seq + 1;
      const minor = root.pages.filter((p) => !p.major).length;
      const major = root.pages.length - minor;
      const { tombstones, keeps, vanished } = deletesAfter(snap, startedAt);
      // A slice is built as of its edge: the records it left out are not older than its built_at by the
      // margin that makes a reader check them against their objects, and no tombstone they may need goes.
      const builtAt = snap.slice
        ? Math.max(root.built_at, Math.min(startedAt, snap.slice.boundary))
        : startedAt;
      let pages: PageRef[];
      let keptTombstones: [string, number][];
      if (vanished || snap.again.size > 0 || minor + 1 > Math.max(8, major)) {
        // Major: one dense set of pages, superseded and deleted entries gone.
        pages = await this.writePages(ns, seq, await this.everything(snap), true);
        keptTombstones = [...tombstones].filter(([, at]) => at > builtAt - this.tombstoneTtlMs);
      } else {
        const changed = [...snap.changes.values()].flatMap((c) => (c.entry ? [c.entry] : []));
        pages = [...(await this.writePages(ns, seq, changed, false)), ...root.pages].sort(
          (a, b) => b.maxAt - a.maxAt,
        );
        keptTombstones = [...tombstones];
      }
      const written = await this.writeRoot(
        ns,
        seq,
        builtAt,
        pages,
        deletions(keptTombstones, keeps),
        listing.logs,
        snap.slice ? edgeOf(root, snap.slice) : [],
      );
      if (!written) {
        // Another compactor (or a purge) won this sequence number: the pages written for it are orphans no
        // root will name, and may hold a session a purge has just erased from every other page.
        const own = pages.filter((p) => !root.pages.includes(p)).map((p) => p.key);
        if (own.length > 0) await this.store.delete(own);
        return { folded: 0, rest };
      }
      inForce = written;
    } else if (leftovers < this.compactAfter && snap.stalePending.length === 0)
      return { folded: 0, rest };
    await this.collectGarbage(ns, snap, inForce);
    return { folded: inForce === root ? 0 : snap.uncovered.length, rest };
  }

  /** Deletes what the root in force covers: log records, their pending markers, older roots and pages. */
  private async collectGarbage(ns: string, snap: Snapshot, inForce: Root): Promise<void> {
    const covered = new Set(inForce.covered);
    const logs = snap.listing.logs.filter((k) => covered.has(k));
    const coveredWrites = new Set(logs.map(writeIdOfLog));
    const stale = snap.listing.pending.filter((p) => snap.stalePending.includes(p.key));
    // A stale marker's write may have left more than its log record unwritten: heal that first, and
    // keep the marker (for a later compaction) when that fails.
    const unhealed = new Set<string>();
    await mapLimit(stale, 4, (p) => this.heal(ns, p).catch(() => unhealed.add(p.key)));
    const pending = snap.listing.pending
      .filter((p) => coveredWrites.has(p.writeId) || snap.stalePending.includes(p.key))
      .filter((p) => !unhealed.has(p.key))
      .map((p) => p.key);
    // Keep the root before the one in force (a reader may be using it) and every page either references;
    // not when an id was created again: its older pages hold a deleted version, erased like a purge's.
    const { drop: oldRoots, keep: keepRoots } = obsoleteRoots(
      snap.listing.roots,
      inForce.seq,
      snap.again.size > 0,
    );
    const referenced = new Set(inForce.pages.map((p) => p.key));
    for (const r of keepRoots) {
      const kept = r.seq === inForce.seq ? inForce : await this.loadRoot(r.key).catch(() => null);
      for (const p of kept?.pages ?? []) referenced.add(p.key);
    }
    // Only pages of seqs we know about: a page of a compactor still writing has a higher seq.
    const pages = snap.listing.pages.filter(
      (k) => !referenced.has(k) && seqOfName(k) <= inForce.seq,
    );
    const garbage = [...logs, ...pending, ...oldRoots, ...pages];
    if (garbage.length > 0) await this.store.delete(garbage);
    for (const key of logs) this.logCache.delete(key);
  }

  /**
   * Heals one stale marker (`healStale`). An object that is no session (a half-copied file) has nothing to
   * restore and adds nothing to the manifest (as in verify and rebuild): the marker goes. Until 2026-12-06
   * such a marker stayed for good, and every listing scheduled a compaction that wrote a root (review
   * s58b). Any other failure keeps the marker, and this process waits before a listing schedules a
   * compaction for it again (`healDue`).
   */
  private async heal(ns: string, p: { key: string; id: string; at: number }): Promise<void> {
    try {
      await this.healStale?.(ns, p.id, p.at);
    } catch (err) {
      if (!SatchelError.is(err, 'corrupt')) {
        const tries = (this.healRetry.get(p.key)?.tries ?? 0) + 1;
        this.healRetry.delete(p.key);
        const wait = Math.min(this.stalePendingMs, 60_000 * 2 ** (tries - 1));
        this.healRetry.set(p.key, { tries, at: this.now() + wait });
        while (this.healRetry.size > 10_000)
          this.healRetry.delete(this.healRetry.keys().next().value!);
        throw err;
      }
    }
    this.healRetry.delete(p.key);
  }

  /** Whether a listing that sees the stale marker `key` should schedule a compaction to heal it. */
  private healDue(key: string): boolean {
    const retry = this.healRetry.get(key);
    return !retry || this.now() >= retry.at;
  }

  private async writePages(
    ns: string,
    seq: number,
    entries: ManifestEntry[],
    major: boolean,
  ): Promise<PageRef[]> {
    const sorted = entries.slice().sort(newestFirst);
    const refs: PageRef[] = [];
    const size = major ? this.pageSize : Math.max(sorted.length, 1);
    for (let i = 0; i * size < sorted.length; i++) {
      const chunk = sorted.slice(i * size, (i + 1) * size);
      const key = keys.page(ns, seq, i);
      const page: Page = { v: 2, entries: chunk };
      await this.store.put(key, utf8(JSON.stringify(page)));
      this.cachePage(key, page);
      refs.push({
        key,
        count: chunk.length,
        maxAt: chunk[0]!.at,
        minAt: chunk[chunk.length - 1]!.at,
        major,
      });
    }
    return refs;
  }

  private async writeRoot(
    ns: string,
    seq: number,
    builtAt: number,
    pages: PageRef[],
    deleted: Deletion[],
    covered: string[],
    edge: EdgeCreate[] = [],
  ): Promise<Root | null> {
    const tombstones = deleted
      .filter((d) => d.keep === undefined)
      .map(({ id, at }) => ({ id, at }));
    const pins = deleted.flatMap(({ id, at, keep }) =>
      keep === undefined ? [] : [{ id, at, keep }],
    );
    const root: Root = {
      v: 2,
      seq,
      built_at: builtAt,
      pages,
      tombstones,
      ...(pins.length > 0 ? { pins } : {}),
      covered,
      ...(edge.length > 0 ? { edge } : {}),
    };
    const roots = this.roots(ns);
    if (!(await roots.tryWrite(root))) return null;
    this.rootCache.set(roots.keyOf(seq), root);
    return root;
  }

  /** The manifest's sequenced roots in a namespace. */
  private roots(ns: string): SequencedRoots<Root> {
    return new SequencedRoots(this.store, keys.manifestRoots(ns), isRoot);
  }

  // ---- storage ----

  private async listManifest(ns: string): Promise<Listing> {
    const prefix = keys.manifest(ns);
    // The markers first, then the rest: a marker goes only once its write's log record is stored, so a
    // write whose marker the first LIST did not see was logged before the second began. A LIST is no
    // snapshot: one of m/ passed m/l/ before a write's log record landed and reached m/p/ after its
    // marker went (at once on Workers and Lambda), and the list showed the session's older entry (a walk
    // showed it twice, review s68f).
    const markers = await listAll(this.store, `${prefix}p/`);
    const all = await listAll(this.store, prefix);
    const listed = [...all, ...markers.filter((key) => !all.includes(key))];
    const listing: Listing = {
      roots: this.roots(ns).rootsIn(listed),
      pages: [],
      logs: [],
      pending: [],
      maxSeq: 0,
    };
    for (const key of listed) {
      const rest = key.slice(prefix.length);
      if (rest.startsWith('s/')) listing.progress = true;
      else if (rest.startsWith('g/')) listing.pages.push(key);
      else if (rest.startsWith('l/')) listing.logs.push(key);
      else if (rest.startsWith('p/')) {
        const [, id, stamp] = rest.split('/');
        if (id && stamp)
          listing.pending.push({
            key,
            id,
            writeId: stamp.slice(14),
            at: Number(stamp.slice(0, 13)),
          });
      }
    }
    listing.maxSeq = Math.max(
      0,
      ...listing.roots.map((r) => r.seq),
      ...listing.pages.map(seqOfName),
    );
    return listing;
  }

  /**
   * The root at `key`. One read before whose pages are not all listed is not the one there now (m/ was
   * deleted and a rebuild wrote its number again; pages' names are random): read again.
   */
  private async listedRoot(key: string, listing: Listing): Promise<Root> {
    const root = await this.loadRoot(key);
    const pages = new Set(listing.pages);
    if (root.pages.every((p) => pages.has(p.key))) return root;
    this.rootCache.delete(key);
    return this.loadRoot(key);
  }

  /** Reads a root once per process (roots are immutable). */
  private async loadRoot(key: string): Promise<Root> {
    const cached = this.rootCache.get(key);
    if (cached) return cached;
    let root: Root;
    try {
      root = await new SequencedRoots(
        this.store,
        key.slice(0, key.lastIndexOf('/') + 1),
        isRoot,
      ).read(key);
    } catch (err) {
      if (err instanceof CorruptRootError)
        throw err.vanished ? new ManifestMoved(key) : new CorruptManifest(err.message);
      throw err;
    }
    this.rootCache.set(key, root);
    while (this.rootCache.size > 64) this.rootCache.delete(this.rootCache.keys().next().value!);
    return root;
  }

  /**
   * A page of `snap`: the newest one's read started with the snapshot (taken once, so a reused snapshot
   * reads again), else loadPage. Until 2026-12-06 a failed early read was dropped and the page read again
   * with a fresh retry budget: a list waited out storage's retries twice before its 503 (review s58f).
   */
  private pageOf(snap: Snapshot, key: string): Promise<Page> {
    const early = snap.firstPage;
    if (early?.key !== key) return this.loadPage(key);
    snap.firstPage = undefined;
    return early.read;
  }

  private loadPage(key: string): Promise<Page> {
    return this.loadImmutable(key, 'page', isPage, this.pageCache, (page) =>
      this.cachePage(key, page),
    );
  }

  private loadLog(key: string): Promise<LogRecord> {
    return this.loadImmutable(key, 'log record', isLogRecord, this.logCache, (record) =>
      this.cacheLog(key, record),
    );
  }

  /** Reads a manifest object once per process: they are immutable, so the cache never goes stale. */
  private async loadImmutable<T>(
    key: string,
    what: string,
    check: (v: unknown) => v is T,
    cache: Map<string, T>,
    remember: (v: T) => void,
  ): Promise<T> {
    const cached = cache.get(key);
    if (cached) return cached;
    const found = await this.store.get(key);
    if (!found) throw new ManifestMoved(key);
    const value = parseOr(found.body, check);
    if (!value) throw new CorruptManifest(`unparsable ${what} ${key}`);
    remember(value);
    return value;
  }

  private cachePage(key: string, page: Page): void {
    this.pageCache.set(key, page);
    this.pageCacheEntries += page.entries.length;
    for (const [k, p] of this.pageCache) {
      if (this.pageCacheEntries <= this.pageCacheLimit) break;
      this.pageCache.delete(k);
      this.pageCacheEntries -= p.entries.length;
    }
  }

  private dropPage(key: string): void {
    const page = this.pageCache.get(key);
    if (!page) return;
    this.pageCache.delete(key);
    this.pageCacheEntries -= page.entries.length;
  }

  private cacheLog(key: string, record: LogRecord): void {
    this.logCache.set(key, record);
    while (this.logCache.size > 20_000) this.logCache.delete(this.logCache.keys().next().value!);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Whether `e` is the version `k` of a session (its object's, when created again). */
function sameVersion(k: ManifestEntry | undefined, e: ManifestEntry | undefined): boolean {
  if (!k || !e || (e.i !== undefined && k.i !== undefined && e.i !== k.i)) return false;
  return e.created_at === k.created_at && e.revision === k.revision && e.task === k.task;
}

/** Newest first: updated_at descending, then id descending. */
function newestFirst(a: ManifestEntry, b: ManifestEntry): number {
  return b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/**
 * The listing a sliced compaction works from: as a LIST would show it that saw only the covered log records
 * and the oldest `count` uncovered ones (by key: by time). The others are `left` out, and so are the pending
 * markers of their writes: they are logged, not writes to check against their objects.
 */
function sliceOf(
  listing: Listing,
  uncovered: string[],
  count: number | undefined,
): { listing: Listing; uncovered: string[]; left: string[] } {
  if (count === undefined || uncovered.length <= count) return { listing, uncovered, left: [] };
  const sorted = uncovered.slice().sort();
  const left = sorted.slice(count);
  const out = new Set(left);
  const outWrites = new Set(left.map(writeIdOfLog));
  return {
    listing: {
      ...listing,
      logs: listing.logs.filter((k) => !out.has(k)),
      pending: listing.pending.filter((p) => !outWrites.has(p.writeId)),
    },
    uncovered: sorted.slice(0, count),
    left,
  };
}

/** A sliced snapshot's Slice: its edge (the oldest record left out, `left` sorted) and its creates. */
function sliceInfo(left: string[], records: LogRecord[]): Slice {
  const name = left[0]!.slice(left[0]!.lastIndexOf('/') + 1);
  const creates = records.flatMap((r) =>
    r.op === 'put' && (r.first || r.entry.revision <= 1)
      ? [{ id: r.entry.id, at: r.entry.at }]
      : [],
  );
  return { boundary: Number(name.slice(0, 13)), rest: left.length, creates };
}

/**
 * A sliced root's edge: every create it and the roots it builds on folded while records were left out. A
 * create's time may be far older than a delete left out (an import keeps its own `updated_at`): until
 * review s60f only those within 15 minutes of the boundary were kept, and such an import stayed unlisted.
 * It is emptied by the first compaction that leaves nothing out.
 */
function edgeOf(root: Root, slice: Slice): EdgeCreate[] {
  const byId = new Map<string, number>();
  for (const e of [...(root.edge ?? []), ...slice.creates])
    byId.set(e.id, Math.min(byId.get(e.id) ?? Infinity, e.at));
  return [...byId].map(([id, at]) => ({ id, at }));
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
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    typeof e.at === 'number' &&
    typeof e.updated_at === 'string'
  );
}

/** A sliced rebuild's progress, or undefined when the object is not one (it then starts again). */
function parseProgress(body: string): RebuildProgress | undefined {
  try {
    const p = JSON.parse(body) as RebuildProgress;
    const ok = p?.v === 1 && typeof p.after === 'string' && typeof p.started_at === 'number';
    return ok && Array.isArray(p.entries) ? p : undefined;
  } catch {
    return undefined;
  }
}

/** The time (ms) a log record's key names (`keys.log`). */
function logTime(key: string): number {
  const at = Number(key.slice(key.lastIndexOf('/') + 1, key.lastIndexOf('/') + 14));
  return Number.isFinite(at) ? at : Infinity;
}

function isRoot(v: unknown): v is Root {
  const r = v as Root;
  return (
    typeof r === 'object' &&
    r !== null &&
    r.v === 2 &&
    typeof r.seq === 'number' &&
    typeof r.built_at === 'number' &&
    Array.isArray(r.pages) &&
    r.pages.every((p) => typeof p.key === 'string' && typeof p.maxAt === 'number') &&
    Array.isArray(r.tombstones) &&
    (r.pins === undefined ||
      (Array.isArray(r.pins) &&
        r.pins.every((p) => typeof p.id === 'string' && typeof p.keep === 'string'))) &&
    Array.isArray(r.covered) &&
    (r.edge === undefined ||
      (Array.isArray(r.edge) &&
        r.edge.every((e) => typeof e.id === 'string' && typeof e.at === 'number')))
  );
}

function isPage(v: unknown): v is Page {
  const p = v as Page;
  return (
    typeof p === 'object' &&
    p !== null &&
    p.v === 2 &&
    Array.isArray(p.entries) &&
    p.entries.every(isEntry)
  );
}

function isLogRecord(v: unknown): v is LogRecord {
  const r = v as LogRecord;
  if (typeof r !== 'object' || r === null || r.v !== 1) return false;
  return r.op === 'put'
    ? isEntry(r.entry)
    : r.op === 'del' && typeof r.id === 'string' && typeof r.at === 'number';
}

/**
 * The deletes a compaction of `snap` keeps: the root's, those of its changes, and pins of the ids created
 * again. `vanished`: one is known only from its missing object (a crashed delete), so it has no time of
 * its own, and pages may hold older versions of it: only a major compaction, which drops them, can record
 * it safely.
 */
function deletesAfter(
  snap: Snapshot,
  startedAt: number,
): { tombstones: Map<string, number>; keeps: Map<string, string>; vanished: boolean } {
  const tombstones = new Map(snap.tombstones);
  const keeps = new Map(snap.keeps);
  let vanished = false;
  for (const [id, c] of snap.changes) {
    if (c.deletedAt === undefined || snap.again.has(id)) continue;
    keeps.delete(id); // the session a pin kept is deleted too
    // No time of its own: as of now, so that a late log record of an older version stays hidden.
    if (c.deletedAt === Infinity) vanished = true;
    const at = c.deletedAt === Infinity ? startedAt : c.deletedAt;
    tombstones.set(id, Math.max(tombstones.get(id) ?? -Infinity, at));
  }
  // An id created again: a major compaction leaves its other versions out; its delete stays as a pin,
  // which hides a late log record of the deleted session but not the live one.
  for (const [id, e] of snap.again) keeps.set(id, pinOf(e));
  return { tombstones, keeps, vanished };
}

/**
 * Per id, the time up to which its versions are erased: its delete (a version written after it, by
 * a re-create of the same id, stays). An id without a known delete is still live: nothing to erase.
 */
function eraseUntil(
  snap: Snapshot | null,
  ids: Set<string>,
  records: { r: LogRecord }[],
): Map<string, number> {
  const until = new Map<string, number>();
  const deleted = (id: string, at: number) => {
    if (ids.has(id) && at > (until.get(id) ?? -Infinity)) until.set(id, at);
  };
  for (const id of ids) {
    const change = snap?.changes.get(id);
    deleted(id, change?.deletedAt ?? -Infinity);
    deleted(id, snap?.tombstones.get(id) ?? -Infinity);
  }
  for (const { r } of records) if (r.op === 'del') deleted(r.id, r.at);
  return until;
}

/** The root's tombstones plus the purged deletes (one known only from its missing object: now). */
function mergedTombstones(
  root: Root,
  until: Map<string, number>,
  startedAt: number,
): { tombstones: Map<string, number>; keeps: Map<string, string> } {
  const { tombstones, keeps } = deletionsOf(root);
  for (const [id, at] of until) {
    const had = tombstones.get(id);
    keeps.delete(id); // purged: the session a pin kept is gone too (one created again is kept again)
    // A delete known only from its missing object has no time: record it as of now.
    const when = Number.isFinite(at) ? at : startedAt;
    if (had === undefined || had < when) tombstones.set(id, when);
  }
  return { tombstones, keeps };
}

/** A root's deletes in force by id: their times, and for pins the live session's created_at. */
function deletionsOf(root: Root): { tombstones: Map<string, number>; keeps: Map<string, string> } {
  const tombstones = new Map<string, number>();
  const keeps = new Map<string, string>();
  for (const t of root.tombstones) tombstones.set(t.id, t.at);
  for (const p of root.pins ?? []) {
    tombstones.set(p.id, Math.max(tombstones.get(p.id) ?? -Infinity, p.at));
    keeps.set(p.id, p.keep);
  }
  return { tombstones, keeps };
}

/** Deletes in force as a root stores them: tombstones, and pins where a live session is kept. */
function deletions(tombstones: Iterable<[string, number]>, keeps: Map<string, string>): Deletion[] {
  return [...tombstones].map(([id, at]) => {
    const keep = keeps.get(id);
    return keep === undefined ? { id, at } : { id, at, keep };
  });
}

/**
 * Adds to `toVerify` the sessions of unlogged pending markers (a write in flight, failed, or crashed between
 * the session write and its log record); answers the stale ones' keys (older than `staleBefore`). Settled
 * readers (compaction, index upkeep) leave writes still in flight to their log records.
 */
function toCheck(
  unlogged: { key: string; id: string; at: number }[],
  staleBefore: number,
  settled: boolean,
  toVerify: Set<string>,
): string[] {
  const stalePending: string[] = [];
  for (const p of unlogged) {
    const stale = p.at < staleBefore;
    if (settled && !stale) continue;
    toVerify.add(p.id);
    if (stale) stalePending.push(p.key);
  }
  return stalePending;
}

/** The ids of this process's unlogged writes whose markers (`own`) the listing does not show. */
function missedOwn(ns: string, own: ReadonlySet<string>, listing: Listing): string[] {
  const listed = new Set(listing.pending.map((p) => p.key));
  const prefix = `${keys.manifest(ns)}p/`;
  return [...own]
    .filter((k) => k.startsWith(prefix) && !listed.has(k))
    .map((k) => k.slice(prefix.length).split('/')[0]!);
}

/** Whether `metadata` holds `key` (its own key, not an Object method's name) with `value`. */
function hasPair(
  metadata: Record<string, string> | undefined,
  key: string,
  value: string,
): boolean {
  return !!metadata && Object.hasOwn(metadata, key) && metadata[key] === value;
}
