import type { Schedule } from '../model/context.js';
import { indexKeys } from '../model/keys.js';
import { type ManifestEntry } from '../sessions/manifest.js';
import { Batcher, mapLimit, runExclusive, SingleFlight } from '../storage/concurrency.js';
import { deletePrefix, listAll } from '../storage/prefix.js';
import { PreconditionFailedError, type ObjectStore } from '../storage/port.js';
import {
  CorruptRootError,
  obsoleteRoots,
  SequencedRoots,
  seqOfName,
  type SequencedRef,
} from '../storage/sequenced.js';
import type { DocKey } from './docs.js';
import { CorruptIndexError } from './segment.js';

/**
 * A search index kept in the bucket as a small log-structured merge tree (docs/design.md, "Search"):
 *
 *   <prefix>d/<id>/<c>-<r><ext>   one immutable record per indexed session version, written after the save
 *   <prefix>g/<seq>-<rand><ext>   immutable segments: many documents, written by a compaction
 *   <prefix>r/<seq>.json          create-only roots: the segments in force
 *
 * The manifest, not the index, says which sessions exist and at which revision: a document counts only
 * when its (created_at, revision) is the manifest's. A deleted session therefore drops out of every search
 * at once, trimmed text with the old revision, and a document the index lacks ("lagging") is read from its
 * record by a key computed from the manifest, or built from the session object. A save writes one record
 * whose size depends on that session only; compaction folds records into segments in the background.
 */

/**
 * What `build` answers for a version whose session object cannot be read as a session (corrupt): the index
 * leaves it out, as results do, and does not build it again before `UNREADABLE_RETRY_MS` (review s61e).
 */
export const UNREADABLE: unique symbol = Symbol('unreadable session');

/** A built document; null for a session that is gone or cannot be built now; `UNREADABLE`. */
export type Built<D> = D | null | typeof UNREADABLE;

/** How long a process leaves a version whose session object was unreadable out without reading it again. */
const UNREADABLE_RETRY_MS = 10 * 60_000;

export interface IndexSegment<D> {
  docs: DocKey[];
  /** Every document's payload, in doc order (for merging). */
  all(): D[];
  memoryBytes: number;
}

/** What differs between the lexical index and the vector index. */
export interface IndexKind<D, S extends IndexSegment<D>> {
  name: string;
  recordExt: string;
  segmentExts: string[];
  encodeRecord(key: DocKey, doc: D): Uint8Array;
  decodeRecord(key: DocKey, body: Uint8Array): D;
  encodeSegment(entries: { key: DocKey; doc: D }[]): Uint8Array[];
  decodeSegment(parts: Uint8Array[]): S;
  /**
   * Builds documents from the session objects; null for a session that is gone or cannot be built now,
   * `UNREADABLE` for one whose object is not a session (left out, not built again for a while).
   */
  build(ns: string, entries: ManifestEntry[]): Promise<Built<D>[]>;
}

export type DocRef<D> = { si: number; di: number } | { doc: D };

/** The documents that answer a query: one per live session the index knows at the manifest's version. */
export interface Resolved<D, S> {
  segments: S[];
  live: Map<string, DocRef<D>>;
  /**
   * Live sessions without a document at their current version (left for the background). A version whose
   * session object was unreadable is in neither `live` nor `missing`: it is left out, as from results.
   */
  missing: ManifestEntry[];
  /**
   * Some of `missing` were not read at all: more lagged than a query may fetch (the index is catching up),
   * rather than their documents could not be built.
   */
  behind?: boolean;
}

export interface LsmOptions {
  /** Fold records into a segment once this many lag behind the segments. */
  compactAfter?: number;
  /** Small segments of one size tier (sizes within a factor of 4) that are merged into one. */
  mergeWidth?: number;
  /** Documents per segment written by a major compaction. */
  segmentDocs?: number;
  /** At most this many lagging documents are fetched while a query waits; more means "behind". */
  maxSyncFetch?: number;
  /** How long a save's record may take to land before a compaction builds the document from the session. */
  recordGraceMs?: number;
  /**
   * Short-lived runtimes, whose requests have a budget of storage operations (Workers: 1,000): a compaction
   * reads at most this many lagging documents, the oldest first, and the next one goes on; a save compacts
   * once `compactAfter` records are stored (one LIST), and a query that catches up runs compactions inline
   * within `maxSyncFetch` reads. Default: no bound (every lagging document in one compaction).
   */
  sliceRecords?: number;
  /**
   * Whether the object of session `id` is there. With it, a compaction erases the records of ids the
   * manifest no longer lists (a delete whose purge never ran) once their object is gone; without it, they stay.
   */
  sessionExists?: (ns: string, id: string) => Promise<boolean>;
  /**
   * How old an incarnation (its record key's created-at) must be before a compaction asks whether the
   * session of a record the manifest does not list still exists (a rebuild asks at once). Default 30 s.
   */
  orphanGraceMs?: number;
  concurrency?: number;
  now?: () => number;
}

/** On a short-lived runtime (`sliceRecords`), how many sessions a compaction checks for unlisted records. */
const ORPHAN_CHECKS_PER_SLICE = 32;

interface RootSegment {
  base: string;
  docs: number;
  major: boolean;
}

interface Root {
  v: 1;
  seq: number;
  built_at: number;
  /** Newest first: a later segment's version of a document wins. */
  segments: RootSegment[];
}

interface State<D, S> {
  rootKey: string | null;
  seq: number;
  refs: RootSegment[];
  segments: S[];
  /** Per id, the newest version in the segments. */
  newest: Map<string, { si: number; di: number; key: DocKey }>;
  /** Versions known beyond the segments: records read, and writes of this process. */
  fresh: Map<string, { key: DocKey; doc: D }>;
  checkedAt: number;
  /** Bumped on every change, so a resolution can be reused while nothing changed. */
  version: number;
  /** The root or a segment could not be read: a rebuild is due. */
  corrupt: boolean;
  /** The last resolution; `until`: when a version it left out as unreadable is to be read again. */
  resolved?: { live: ManifestEntry[]; version: number; result: Resolved<D, S>; until: number };
}

/** The index for one kind of document over every namespace of a store. */
export class LsmIndex<D, S extends IndexSegment<D>> {
  private readonly states = new Map<string, State<D, S>>();
  private readonly loading = new SingleFlight<State<D, S>>();
  private readonly compacting = new SingleFlight<void>();
  private readonly written = new Map<string, number>();
  /**
   * Per namespace: the ids waiting for the next purge, and the purges queued one after another. The ids of
   * a purge that failed (storage) join the namespace's next one.
   */
  private readonly purges = new Batcher<string>(
    (ns, ids) => runExclusive(this.compacting, ns, () => this.purgeOnce(ns, ids)),
    0,
    Infinity,
    true,
  );
  /**
   * Per namespace, by id: a version whose session object was unreadable, left out until `until` (then read
   * again: a torn copy may have been completed). Until 2026-12-07 its build failed every search and
   * compaction of the namespace (review s61e).
   */
  private readonly unreadable = new Map<string, Map<string, { key: DocKey; until: number }>>();
  /** Per namespace: by id, the version a prune keeps with those after it (and erases those before). */
  private readonly pruneFrom = new Map<string, Map<string, DocKey>>();
  private readonly compactAfter: number;
  private readonly mergeWidth: number;
  private readonly segmentDocs: number;
  private readonly maxSyncFetch: number;
  private readonly recordGraceMs: number;
  private readonly sliceRecords: number;
  private readonly sessionExists: LsmOptions['sessionExists'];
  private readonly orphanGraceMs: number;
  private readonly concurrency: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ObjectStore,
    private readonly kind: IndexKind<D, S>,
    /** The key prefix of a namespace's index. */
    readonly prefix: (ns: string) => string,
    /** The live sessions of a namespace (the manifest, without checking writes still in flight). */
    private readonly entries: (ns: string) => Promise<ManifestEntry[]>,
    options: LsmOptions = {},
  ) {
    this.compactAfter = options.compactAfter ?? 64;
    this.mergeWidth = options.mergeWidth ?? 4;
    this.segmentDocs = options.segmentDocs ?? 10_000;
    this.maxSyncFetch = options.maxSyncFetch ?? 512;
    this.recordGraceMs = options.recordGraceMs ?? 30_000;
    this.sliceRecords = options.sliceRecords ?? Infinity;
    this.sessionExists = options.sessionExists;
    this.orphanGraceMs = options.orphanGraceMs ?? 30_000;
    this.concurrency = options.concurrency ?? 32;
    this.now = options.now ?? Date.now;
  }

  /** Stores the document of one session version (after its save) and remembers it in process. */
  async put(ns: string, key: DocKey, doc: D, schedule: Schedule): Promise<void> {
    const state = this.states.get(ns);
    if (state) remember(state, key, doc);
    try {
      await this.store.put(this.recordKey(ns, key), this.kind.encodeRecord(key, doc), {
        ifNoneMatch: '*',
      });
    } catch (err) {
      if (!PreconditionFailedError.is(err)) throw err; // the same version was recorded already
    }
    // A short-lived runtime's isolate seldom sees `compactAfter` saves itself: the stored records tell.
    if (this.sliceRecords !== Infinity) {
      schedule(this.compactIfPiledUp(ns));
      return;
    }
    const n = (this.written.get(ns) ?? 0) + 1;
    this.written.set(ns, n);
    if (n >= this.compactAfter) schedule(this.compact(ns));
  }

  /** On a short-lived runtime (`sliceRecords`), how many lagging documents a query may read; else null. */
  get queryBudget(): number | null {
    return this.sliceRecords === Infinity ? null : this.maxSyncFetch;
  }

  /**
   * The stored record of one version; null when there is none (never written, lost, or already folded
   * into a segment and collected) or it is unreadable. Nothing is remembered or built.
   */
  recordAt(ns: string, key: DocKey): Promise<D | null> {
    return this.readRecord(ns, key);
  }

  /** Deletes one version's record (stored after its session's delete had listed the records). */
  async dropRecord(ns: string, key: DocKey): Promise<void> {
    const state = this.states.get(ns);
    if (state?.fresh.delete(key.id)) state.version++;
    await this.store.delete(this.recordKey(ns, key));
  }

  /**
   * The documents for the live entries. Lagging ones are fetched from their records (or built from the
   * session objects when `build`) as long as there are at most `maxSyncFetch`; beyond that, or when the
   * index is missing or corrupt, they are left in `missing` (`behind`) and a compaction is scheduled.
   * `catchUp` (with `sliceRecords`): first run compactions here while that leaves reads for them.
   */
  async resolve(
    ns: string,
    live: ManifestEntry[],
    build: boolean,
    schedule: Schedule,
    catchUp = false,
  ): Promise<Resolved<D, S>> {
    let state = await this.state(ns);
    // The same manifest view and nothing new in process: the last answer still holds.
    if (
      state.resolved &&
      state.resolved.live === live &&
      state.resolved.version === state.version &&
      state.resolved.result.missing.length === 0 &&
      this.now() < state.resolved.until
    ) {
      return state.resolved.result;
    }
    let lagging = this.lagging(ns, state, live);
    if (lagging.length > 0 && this.now() - state.checkedAt > 1000) {
      // Something changed since this process last looked: another process may have compacted.
      state = await this.refresh(ns, state);
      lagging = this.lagging(ns, state, live);
    }
    let budget = this.maxSyncFetch;
    // Too far behind for this request's reads: fold slices now, which the next request keeps.
    while (catchUp && lagging.length > budget && budget >= this.sliceRecords) {
      await this.compact(ns, state.corrupt);
      budget -= this.sliceRecords;
      state = await this.state(ns);
      lagging = this.lagging(ns, state, live);
    }
    const behind = lagging.length > budget;
    if (lagging.length > 0 && !behind) await this.fetch(ns, state, lagging, build);
    const out = new Map<string, DocRef<D>>();
    const missing: ManifestEntry[] = [];
    let dead = 0;
    const liveIds = new Set<string>();
    let until = Infinity;
    for (const e of live) {
      liveIds.add(e.id);
      const ref = this.find(state, e);
      const unreadable = ref ? 0 : this.unreadableUntil(ns, e);
      if (ref) out.set(e.id, ref);
      else if (unreadable) until = Math.min(until, unreadable);
      else missing.push(e);
    }
    for (const id of state.newest.keys()) if (!liveIds.has(id)) dead++;

    if (state.corrupt) schedule(this.compact(ns, true));
    else if (
      missing.length > 0 ||
      state.fresh.size >= this.compactAfter ||
      dead > state.newest.size / 10
    ) {
      schedule(this.compact(ns));
    }
    const result = { segments: state.segments, live: out, missing, ...(behind ? { behind } : {}) };
    state.resolved = { live, version: state.version, result, until };
    return result;
  }

  /** A short-lived runtime's save: compacts once `compactAfter` records are stored (one LIST to know). */
  private async compactIfPiledUp(ns: string): Promise<void> {
    const page = await this.store.list(`${this.prefix(ns)}d/`, { limit: this.compactAfter });
    if (page.objects.length >= this.compactAfter) await this.compact(ns);
  }

  /** Folds lagging documents into a new segment (or rewrites all when due). Single-flight per namespace. */
  compact(ns: string, rebuild = false): Promise<void> {
    const running = this.compacting.current(ns);
    if (running && rebuild) return running.then(() => this.compact(ns, true));
    return this.compacting.run(ns, () =>
      this.compactOnce(ns, rebuild).catch((err) => {
        if (err instanceof CorruptIndexError && !rebuild) return this.compactOnce(ns, true);
        throw err;
      }),
    );
  }

  /**
   * Erases deleted sessions from the index (docs/design.md, "Deleting"): rewrites only the segments that
   * hold a document of `ids` (other than a live version of a re-created id) without it, writes a root
   * that references them instead of the old ones, then deletes at once the old segments, every older root
   * (none is kept: a reader still on one finds a segment gone and loads the new root) and the ids' records.
   * Calls made while a purge of the namespace waits are folded into one (a cleanup of many sessions).
   */
  purge(ns: string, ids: Iterable<string>): Promise<void> {
    const deleted = [...ids];
    for (const id of deleted) {
      this.pruneFrom.get(ns)?.delete(id); // no version stays
      this.unreadable.get(ns)?.delete(id);
    }
    return this.purges.add(ns, deleted);
  }

  /**
   * After a write that removed text (a trim, a pop, a replace, secrets redacted again, the size cap's
   * drops): erases the session's versions before `from` as a purge does, so that the removed text leaves
   * every object, not only the results. `from` and the versions after it stay while the manifest lists
   * that incarnation (deleted since: every version goes); another incarnation of the id is left to the
   * manifest's rule, as in a purge.
   */
  prune(ns: string, from: DocKey): Promise<void> {
    let byId = this.pruneFrom.get(ns);
    if (!byId) this.pruneFrom.set(ns, (byId = new Map()));
    const had = byId.get(from.id);
    if (!had || had.c !== from.c || had.r < from.r) byId.set(from.id, from);
    return this.purges.add(ns, [from.id]);
  }

  /** Deletes every object of this index in a namespace (a change of embedding space). */
  async drop(ns: string): Promise<void> {
    this.states.delete(ns);
    await deletePrefix(this.store, this.prefix(ns));
  }

  /** Memory held by the loaded segments of a namespace, roughly. */
  memoryBytes(ns: string): number {
    return (this.states.get(ns)?.segments ?? []).reduce((n, s) => n + s.memoryBytes, 0);
  }

  // ---- state ----

  private async state(ns: string): Promise<State<D, S>> {
    const have = this.states.get(ns);
    if (have) return have;
    return this.loading.run(ns, () => this.load(ns, null));
  }

  private async refresh(ns: string, state: State<D, S>): Promise<State<D, S>> {
    const roots = await this.roots(ns).list();
    const newest = roots[roots.length - 1]?.key ?? null;
    if (newest === state.rootKey) {
      state.checkedAt = this.now();
      return state;
    }
    return this.load(ns, state);
  }

  /** Loads the newest root and its segments (reusing the segments `prev` already holds). */
  private async load(ns: string, prev: State<D, S> | null): Promise<State<D, S>> {
    const checkedAt = this.now();
    let rootKey: string | null = null;
    let root: Root = { v: 1, seq: 0, built_at: 0, segments: [] };
    let segments: S[] = [];
    let corrupt = false;
    for (let attempt = 0; ; attempt++) {
      // Each attempt from nothing: a root read before its segment went is not kept when none stands now.
      root = { v: 1, seq: 0, built_at: 0, segments: [] };
      segments = [];
      rootKey = (await this.roots(ns).list()).at(-1)?.key ?? null;
      if (!rootKey) break;
      try {
        root = await this.readRoot(rootKey);
        const had = new Map(prev?.refs.map((r, i) => [r.base, prev.segments[i]!]));
        segments = await mapLimit(
          root.segments,
          8,
          async (ref) => had.get(ref.base) ?? this.readSegment(ref.base),
        );
        break;
      } catch (err) {
        if (!(err instanceof CorruptIndexError)) throw err;
        // Another process's purge or compaction deleted what the root names since it was listed: a newer
        // root stands, and is read instead (until 2026-12-06 the index counted as corrupt, and was rebuilt
        // from every session object: review s57c).
        if (attempt < 3 && (await this.roots(ns).list()).at(-1)?.key !== rootKey) continue;
        // Unreadable: answer from records and session objects until the rebuild (scheduled by resolve) lands.
        root = { v: 1, seq: root.seq, built_at: 0, segments: [] };
        segments = [];
        corrupt = true;
        break;
      }
    }
    const state: State<D, S> = {
      rootKey,
      seq: root.seq,
      refs: root.segments,
      segments,
      newest: new Map(),
      fresh: prev?.fresh ?? new Map(),
      checkedAt,
      version: (prev?.version ?? 0) + 1,
      corrupt,
    };
    segments.forEach((seg, si) =>
      seg.docs.forEach((key, di) => {
        const had = state.newest.get(key.id);
        if (!had || newer(key, had.key)) state.newest.set(key.id, { si, di, key });
      }),
    );
    for (const [id, f] of state.fresh) {
      const inSeg = state.newest.get(id);
      if (inSeg && !newer(f.key, inSeg.key)) state.fresh.delete(id);
    }
    this.states.set(ns, state);
    return state;
  }

  private find(state: State<D, S>, e: ManifestEntry): DocRef<D> | null {
    const c = Date.parse(e.created_at) || 0;
    const f = state.fresh.get(e.id);
    if (f && f.key.r === e.revision && f.key.c === c) return { doc: f.doc };
    const s = state.newest.get(e.id);
    if (s && s.key.r === e.revision && s.key.c === c) return { si: s.si, di: s.di };
    return null;
  }

  /** The live versions the index holds no document of, but for those known to be unreadable. */
  private lagging(ns: string, state: State<D, S>, live: ManifestEntry[]): ManifestEntry[] {
    return live.filter((e) => !this.find(state, e) && !this.unreadableUntil(ns, e));
  }

  /**
   * When the session object of this version, found unreadable lately, is to be read again (it is left out
   * until then); 0 when it is not known to be unreadable.
   */
  private unreadableUntil(ns: string, e: ManifestEntry): number {
    const byId = this.unreadable.get(ns);
    const had = byId?.get(e.id);
    if (!had) return 0;
    const key = keyOf(e);
    if (had.key.c === key.c && had.key.r === key.r && this.now() < had.until) return had.until;
    byId!.delete(e.id); // another version now, or time to read it again
    return 0;
  }

  /** Leaves `built`'s unreadable versions out for a while; the documents, the others null. */
  private sortBuilt(ns: string, entries: ManifestEntry[], built: Built<D>[]): (D | null)[] {
    return entries.map((e, i) => {
      const doc = built[i];
      if (doc !== UNREADABLE) return doc ?? null;
      let byId = this.unreadable.get(ns);
      if (!byId) this.unreadable.set(ns, (byId = new Map()));
      byId.set(e.id, { key: keyOf(e), until: this.now() + UNREADABLE_RETRY_MS });
      return null;
    });
  }

  /** Reads the records of lagging versions; builds the ones without a record from the sessions. */
  private async fetch(
    ns: string,
    state: State<D, S>,
    lagging: ManifestEntry[],
    build: boolean,
  ): Promise<void> {
    const unrecorded: ManifestEntry[] = [];
    await mapLimit(lagging, this.concurrency, async (e) => {
      const key = keyOf(e);
      const doc = await this.readRecord(ns, key);
      if (doc) remember(state, key, doc);
      else unrecorded.push(e);
    });
    if (!build || unrecorded.length === 0) return;
    const docs = this.sortBuilt(ns, unrecorded, await this.kind.build(ns, unrecorded));
    unrecorded.forEach((e, i) => {
      const doc = docs[i];
      if (doc) remember(state, keyOf(e), doc);
    });
  }

  /** The record of one version; null when it is missing or unreadable (the caller builds from the session). */
  private async readRecord(ns: string, key: DocKey): Promise<D | null> {
    const found = await this.store.get(this.recordKey(ns, key));
    if (!found) return null;
    try {
      return this.kind.decodeRecord(key, found.body);
    } catch (err) {
      if (err instanceof CorruptIndexError) return null;
      throw err;
    }
  }

  // ---- compaction ----

  private async compactOnce(ns: string, rebuild: boolean): Promise<void> {
    const startedAt = this.now();
    const p = this.prefix(ns);
    const listed = await listAll(this.store, p);
    const roots = this.roots(ns).rootsIn(listed);
    const records = new Set(listed.filter((k) => k.startsWith(`${p}d/`)));
    const segmentKeys = listed.filter((k) => k.startsWith(`${p}g/`));
    const live = await this.entries(ns);
    const state = rebuild ? null : await this.load(ns, this.states.get(ns) ?? null);
    const seq =
      Math.max(state?.seq ?? 0, ...roots.map((r) => r.seq), ...segmentKeys.map(seqOfName)) + 1;

    // Every live document at its current version: from the segments, the records, or the sessions.
    // Documents stream into segments of `segmentDocs`, so memory stays bounded whatever the
    // namespace size.
    const { fresh, lagging, fromSegments } = this.sourcesOf(ns, state, live, this.sliceRecords);
    const full = isFullCompaction(
      rebuild,
      state,
      fresh.length,
      lagging.length,
      fromSegments.length,
    );

    const written: RootSegment[] = [];
    let buffer: { key: DocKey; doc: D }[] = [];
    const add = async (entry: { key: DocKey; doc: D }) => {
      buffer.push(entry);
      if (buffer.length >= this.segmentDocs) {
        written.push(await this.writeSegment(ns, seq, buffer, full));
        buffer = [];
      }
    };
    for (const f of fresh) await add(f);
    await this.addLagging(ns, live, lagging, { records, rebuild, startedAt }, add);
    if (full) await addFromSegments(state!, live, fromSegments, add);
    if (buffer.length > 0) written.push(await this.writeSegment(ns, seq, buffer, full));
    let refs: RootSegment[];
    if (full) refs = written;
    else {
      if (written.length === 0) {
        const o = { listed, roots, records, live, rebuilt: false };
        await this.collect(ns, o, state!.refs, state!.seq, state!);
        return;
      }
      refs = await this.mergeTiers(ns, seq, [...written, ...state!.refs], state!, live);
    }
    await this.writeRootAndCollect(ns, {
      seq,
      startedAt,
      refs,
      listed,
      roots,
      records,
      live,
      rebuild,
    });
  }

  /**
   * Where each live document comes from: a fresh one held in memory, one in a segment, or a lagging
   * one (from its record or its session): at most `slice` of those, the oldest, and the next compaction
   * folds the others (a root names segments, so it covers any subset of the documents). A version whose
   * session object was found unreadable lately is none of them: left out, not read on every compaction.
   */
  private sourcesOf(
    ns: string,
    state: State<D, S> | null,
    live: ManifestEntry[],
    slice: number,
  ): {
    fresh: { key: DocKey; doc: D }[];
    lagging: number[];
    fromSegments: { i: number; si: number; di: number }[];
  } {
    const fresh: { key: DocKey; doc: D }[] = [];
    const lagging: number[] = [];
    const fromSegments: { i: number; si: number; di: number }[] = [];
    live.forEach((e, i) => {
      const ref = state ? this.find(state, e) : null;
      if (ref && 'doc' in ref) fresh.push({ key: keyOf(e), doc: ref.doc });
      else if (ref) fromSegments.push({ i, si: ref.si, di: ref.di });
      else if (!this.unreadableUntil(ns, e)) lagging.push(i);
    });
    if (lagging.length <= slice) return { fresh, lagging, fromSegments };
    const oldest = lagging.sort((a, b) => live[a]!.at - live[b]!.at || a - b).slice(0, slice);
    return { fresh, lagging: oldest, fromSegments };
  }

  /** Adds the lagging documents: from their records, else built from the sessions. */
  private async addLagging(
    ns: string,
    live: ManifestEntry[],
    lagging: number[],
    o: { records: Set<string>; rebuild: boolean; startedAt: number },
    add: (entry: { key: DocKey; doc: D }) => Promise<void>,
  ): Promise<void> {
    const { records, rebuild, startedAt } = o;
    for (let k = 0; k < lagging.length; k += 256) {
      const batch = lagging.slice(k, k + 256);
      const toBuild: number[] = [];
      const got = await mapLimit(batch, this.concurrency, async (i) => {
        const key = keyOf(live[i]!);
        const doc =
          !rebuild && records.has(this.recordKey(ns, key)) ? await this.readRecord(ns, key) : null;
        if (doc) return { key, doc };
        // A version saved moments ago may have its record still in flight: leave it to the next
        // compaction rather than read the session now. Older ones lost their record (a crash):
        // build them.
        if (rebuild || live[i]!.at < startedAt - this.recordGraceMs) toBuild.push(i);
        return null;
      });
      for (const g of got) if (g) await add(g);
      const building = toBuild.map((i) => live[i]!);
      const docs = building.length
        ? this.sortBuilt(ns, building, await this.kind.build(ns, building))
        : [];
      for (const [j, i] of toBuild.entries()) {
        const doc = docs[j];
        if (doc) await add({ key: keyOf(live[i]!), doc });
      }
    }
  }

  /** Writes the new root; when it wins its sequence number, collects what it no longer needs. */
  private async writeRootAndCollect(
    ns: string,
    o: {
      seq: number;
      startedAt: number;
      refs: RootSegment[];
      listed: string[];
      roots: { key: string; seq: number }[];
      records: Set<string>;
      live: ManifestEntry[];
      rebuild: boolean;
    },
  ): Promise<void> {
    const { seq, startedAt, refs, listed, roots, records, live, rebuild } = o;
    const root: Root = { v: 1, seq, built_at: startedAt, segments: refs };
    const rootsOfIndex = this.roots(ns);
    if (!(await rootsOfIndex.tryWrite(root))) {
      // Another compactor (or a purge) won this sequence number: the segments written for it are orphans
      // no root will name, and may hold a session a purge has just erased from every other segment.
      await this.dropSegments(refs.filter((r) => seqOfName(r.base) === seq));
      return;
    }
    this.written.set(ns, 0);
    const next = await this.load(ns, this.states.get(ns) ?? null);
    const newRoots = [...roots, { key: rootsOfIndex.keyOf(seq), seq }];
    const c = { listed, roots: newRoots, records, live, rebuilt: rebuild };
    await this.collect(ns, c, refs, seq, next);
  }

  private async purgeOnce(ns: string, ids: Set<string>): Promise<void> {
    const state = this.states.get(ns);
    if (state) {
      for (const id of ids) {
        // A prune's own version, or a later one, stays in memory too.
        const [fresh, from] = [state.fresh.get(id), this.pruneFrom.get(ns)?.get(id)];
        if (!(fresh && from && fresh.key.c === from.c && fresh.key.r >= from.r))
          state.fresh.delete(id);
      }
      state.version++;
    }
    for (let attempt = 0; ; attempt++) {
      if (await this.tryPurge(ns, ids)) return;
      // Another compactor took the sequence number: its root may still reference the old segments.
      if (attempt >= 20)
        throw new Error(`${this.kind.name} purge of namespace ${ns} kept losing its root`);
      await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt, 5)));
    }
  }

  /** One attempt; false when another compactor won the root's sequence number, or wrote one after the listing. */
  private async tryPurge(ns: string, ids: Set<string>): Promise<boolean> {
    const startedAt = this.now();
    const p = this.prefix(ns);
    const listed = await listAll(this.store, p);
    const roots = this.roots(ns).rootsIn(listed);
    const segmentKeys = listed.filter((k) => k.startsWith(`${p}g/`));
    // A live version (the id was created again after its delete) stays; every other version goes.
    const live = new Map<string, DocKey>();
    for (const e of await this.entries(ns)) if (ids.has(e.id)) live.set(e.id, keyOf(e));
    const pruned = new Map(this.pruneFrom.get(ns));
    const doomed = (key: DocKey) => {
      if (!ids.has(key.id)) return false;
      const from = pruned.get(key.id);
      const keep = live.get(key.id);
      // A prune's rule only while the manifest lists its incarnation: deleted since, every version goes.
      if (from && from.c === key.c && keep?.c === from.c) return key.r < from.r;
      return !keep || keep.c !== key.c || keep.r !== key.r;
    };
    const records = listed.filter((k) => {
      const parsed = k.startsWith(`${p}d/`) && parseRecordKey(k, p, this.kind.recordExt);
      return parsed && doomed(parsed);
    });
    let state: State<D, S>;
    try {
      state = await this.load(ns, this.states.get(ns) ?? null);
    } catch (err) {
      if (err instanceof CorruptIndexError) return this.rebuildForPurge(ns);
      throw err;
    }
    if (state.corrupt) return this.rebuildForPurge(ns);
    // A root written after the listing (another process's compaction): its segments are not in the
    // listing, so they would outlive the purge with the text (review s57c). List again.
    if (state.seq > Math.max(0, ...roots.map((r) => r.seq))) return false;
    const seq = Math.max(state.seq, ...roots.map((r) => r.seq), ...segmentKeys.map(seqOfName)) + 1;
    const refs: RootSegment[] = [];
    let changed = false;
    for (const [si, ref] of state.refs.entries()) {
      const seg = state.segments[si]!;
      if (!seg.docs.some(doomed)) {
        refs.push(ref);
        continue;
      }
      changed = true;
      const payloads = seg.all();
      const kept = seg.docs.flatMap((key, di) =>
        doomed(key) ? [] : [{ key, doc: payloads[di]! }],
      );
      if (kept.length > 0) refs.push(await this.writeSegment(ns, seq, kept, ref.major));
    }
    const garbage = [...records];
    // The root that stands after the purge: a new one without the documents, or the current one when none
    // of its segments holds them; for a deleted session a new one always (a compaction that read its
    // records before they went, and writes its segments now, then loses its root's sequence number to this
    // one). Not for a prune (text a write removed), which runs after many writes of a live session.
    let standing = state.seq;
    if (changed || [...ids].some((id) => !live.has(id))) {
      const root: Root = { v: 1, seq, built_at: startedAt, segments: refs };
      if (!(await this.roots(ns).tryWrite(root))) {
        await this.dropSegments(changed ? refs.filter((r) => seqOfName(r.base) === seq) : []);
        return false;
      }
      standing = seq;
      await this.load(ns, this.states.get(ns) ?? null);
    }
    // No older root is kept, and no segment the standing root does not reference (of a seq we know
    // about), even when nothing was rewritten: an older root kept for its readers may still name a
    // segment that holds a deleted document (a compaction left the session out while its record waited).
    garbage.push(...roots.filter((r) => r.seq < standing).map((r) => r.key));
    garbage.push(...this.unreferenced(segmentKeys, refs, standing));
    if (garbage.length > 0) await this.store.delete(garbage);
    const byId = this.pruneFrom.get(ns);
    for (const [id, from] of pruned) if (ids.has(id) && byId?.get(id) === from) byId.delete(id);
    return true;
  }

  /** Segment objects of a seq up to `seq` that `refs` (the standing root's segments) do not name. */
  private unreferenced(segmentKeys: string[], refs: RootSegment[], seq: number): string[] {
    const referenced = new Set(refs.map((r) => r.base));
    return segmentKeys.filter((k) => {
      if (seqOfName(k) > seq) return false;
      const base = this.kind.segmentExts.reduce(
        (b, ext) => (b.endsWith(ext) ? b.slice(0, -ext.length) : b),
        k,
      );
      return !referenced.has(base);
    });
  }

  /** An unreadable index cannot be rewritten piece by piece: rebuild it from the live sessions. */
  private async rebuildForPurge(ns: string): Promise<boolean> {
    await this.compactOnce(ns, true);
    return false;
  }

  /**
   * Size-tiered merging of the small segments: whenever `mergeWidth` of them fall in one size tier
   * (doc counts within a factor of 4), they become one segment holding only their current documents.
   * Each document is rewritten about log4(small docs / 64) times before a major compaction, whatever N.
   */
  private async mergeTiers(
    ns: string,
    seq: number,
    refs: RootSegment[],
    state: State<D, S>,
    live: ManifestEntry[],
  ): Promise<RootSegment[]> {
    const current = new Map(live.map((e) => [e.id, keyOf(e)]));
    const bySegment = new Map(state.refs.map((r, i) => [r.base, state.segments[i]!]));
    for (;;) {
      const tiers = new Map<number, RootSegment[]>();
      for (const r of refs) {
        if (r.major) continue;
        const tier = Math.floor(Math.log(Math.max(r.docs, 1)) / Math.log(4));
        tiers.set(tier, [...(tiers.get(tier) ?? []), r]);
      }
      const group = [...tiers.values()].find((g) => g.length >= this.mergeWidth);
      if (!group) return refs;
      const merged: { key: DocKey; doc: D }[] = [];
      const seen = new Set<string>();
      for (const r of group) {
        const seg = bySegment.get(r.base) ?? (await this.readSegment(r.base));
        const payloads = seg.all();
        seg.docs.forEach((key, di) => {
          const want = current.get(key.id);
          // Only the live version, once: superseded and deleted documents end here.
          if (want && want.c === key.c && want.r === key.r && !seen.has(key.id)) {
            seen.add(key.id);
            merged.push({ key, doc: payloads[di]! });
          }
        });
      }
      const into = merged.length > 0 ? [await this.writeSegment(ns, seq, merged, false)] : [];
      const gone = new Set(group.map((r) => r.base));
      // Keep newest-first order: the merged segment takes the place of the newest it replaces.
      const at = refs.findIndex((r) => gone.has(r.base));
      refs = [
        ...refs.slice(0, at).filter((r) => !gone.has(r.base)),
        ...into,
        ...refs.slice(at).filter((r) => !gone.has(r.base)),
      ];
    }
  }

  /**
   * Deletes what the root in force makes useless: covered records, records of sessions that are gone (not
   * in `live`, their object absent), old roots, unreferenced segments. `rebuilt`: a rebuild.
   */
  private async collect(
    ns: string,
    o: {
      listed: string[];
      roots: SequencedRef[];
      records: Set<string>;
      live: ManifestEntry[];
      rebuilt: boolean;
    },
    refs: RootSegment[],
    seq: number,
    state: State<D, S>,
  ): Promise<void> {
    const { listed, roots, records, rebuilt } = o;
    const p = this.prefix(ns);
    const garbage: string[] = [];
    const unlisted = new Map<string, string[]>();
    const liveIds = new Set(o.live.map((e) => e.id));
    const oldest = this.now() - this.orphanGraceMs;
    for (const key of records) {
      const parsed = parseRecordKey(key, p, this.kind.recordExt);
      const have = parsed && state.newest.get(parsed.id);
      // Covered by a segment (same or newer version), or of a session that has a newer version indexed.
      if (parsed && have && !newer(parsed, have.key)) garbage.push(key);
      // Of an id the manifest does not list: a delete whose purge never ran (a process stopped), or a
      // session so new its log record has not landed yet. A rebuild asks at once, else after the grace.
      else if (parsed && !liveIds.has(parsed.id) && (rebuilt || parsed.c < oldest))
        unlisted.set(parsed.id, (unlisted.get(parsed.id) ?? []).concat(key));
    }
    garbage.push(...(await this.ofGoneSessions(ns, unlisted)));
    // The root before this one stays for readers that just loaded it, unless this is a rebuild (after
    // corruption or on demand), which replaces everything before it.
    const { drop, keep: keepRoots } = obsoleteRoots(roots, seq, rebuilt);
    const referenced = new Set(refs.map((r) => r.base));
    for (const k of keepRoots) {
      if (k.seq === seq) continue;
      const r = await this.readRoot(k.key).catch(() => null);
      for (const s of r?.segments ?? []) referenced.add(s.base);
    }
    garbage.push(...drop);
    for (const k of listed) {
      if (!k.startsWith(`${p}g/`) || seqOfName(k) > seq) continue;
      const base = this.kind.segmentExts.reduce(
        (b, ext) => (b.endsWith(ext) ? b.slice(0, -ext.length) : b),
        k,
      );
      if (!referenced.has(base)) garbage.push(k);
    }
    if (garbage.length > 0) await this.store.delete(garbage);
  }

  /**
   * The records in `unlisted` (by id) whose session object is absent: that session was deleted (a record
   * lands only after its version's commit, and a session created again gets another key). Short-lived
   * runtimes check `ORPHAN_CHECKS_PER_SLICE` ids per compaction, picked at random so that ids whose object
   * stays do not hold the others back; a check that fails keeps the records for a later compaction.
   */
  private async ofGoneSessions(ns: string, unlisted: Map<string, string[]>): Promise<string[]> {
    const exists = this.sessionExists;
    if (!exists || unlisted.size === 0) return [];
    let ids = [...unlisted.keys()];
    const bound = this.sliceRecords === Infinity ? Infinity : ORPHAN_CHECKS_PER_SLICE;
    if (ids.length > bound) {
      for (let i = ids.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [ids[i], ids[j]] = [ids[j]!, ids[i]!];
      }
      ids = ids.slice(0, bound);
    }
    const gone = await mapLimit(ids, this.concurrency, (id) =>
      exists(ns, id).then(
        (there) => !there,
        () => false,
      ),
    );
    return ids.flatMap((id, i) => (gone[i] ? unlisted.get(id)! : []));
  }

  /** Deletes segments this process wrote for a root that lost its sequence number (best effort). */
  private async dropSegments(refs: RootSegment[]): Promise<void> {
    const keys = refs.flatMap((r) => this.kind.segmentExts.map((ext) => r.base + ext));
    if (keys.length > 0) await this.store.delete(keys).catch(() => undefined);
  }

  private async writeSegment(
    ns: string,
    seq: number,
    docs: { key: DocKey; doc: D }[],
    major: boolean,
  ): Promise<RootSegment> {
    const base = indexKeys.segment(this.prefix(ns), seq);
    const parts = this.kind.encodeSegment(docs);
    await Promise.all(
      parts.map((bytes, i) =>
        this.store.put(base + this.kind.segmentExts[i]!, bytes, {
          contentType: 'application/octet-stream',
        }),
      ),
    );
    return { base, docs: docs.length, major };
  }

  // ---- storage ----

  private recordKey(ns: string, key: DocKey): string {
    return indexKeys.record(this.prefix(ns), key.id, key.c, key.r, this.kind.recordExt);
  }

  /** The index's sequenced roots in a namespace. */
  private roots(ns: string): SequencedRoots<Root> {
    return new SequencedRoots(this.store, indexKeys.roots(this.prefix(ns)), isRoot);
  }

  private async readRoot(key: string): Promise<Root> {
    try {
      return await new SequencedRoots(
        this.store,
        key.slice(0, key.lastIndexOf('/') + 1),
        isRoot,
      ).read(key);
    } catch (err) {
      if (err instanceof CorruptRootError) throw new CorruptIndexError(err.message);
      throw err;
    }
  }

  private async readSegment(base: string): Promise<S> {
    const parts = await Promise.all(
      this.kind.segmentExts.map(async (ext) => {
        const found = await this.store.get(base + ext);
        if (!found) throw new CorruptIndexError(`segment ${base + ext} is missing`);
        return found.body;
      }),
    );
    return this.kind.decodeSegment(parts);
  }
}

function remember<D, S>(state: State<D, S>, key: DocKey, doc: D): void {
  const had = state.fresh.get(key.id);
  if (!had || !newer(had.key, key)) {
    state.fresh.set(key.id, { key, doc });
    state.version++;
  }
}

/** True when version a is newer than b (a later incarnation, or a later revision of the same one). */
function newer(a: DocKey, b: DocKey): boolean {
  return a.c > b.c || (a.c === b.c && a.r > b.r);
}

function keyOf(e: ManifestEntry): DocKey {
  return { id: e.id, c: Date.parse(e.created_at) || 0, r: e.revision };
}

function isRoot(v: unknown): v is Root {
  const r = v as Root;
  return (
    typeof r === 'object' &&
    r !== null &&
    r.v === 1 &&
    Array.isArray(r.segments) &&
    typeof r.seq === 'number'
  );
}

/**
 * A record key's document key. Its created-at part is 13 digits, more after the year 2286, and zeros then a
 * negative number before 1970 (`indexKeys.record` pads `-14182940000` to `0-14182940000`): until 2026-12-06
 * only 13 digits were read, and a session created before 1970 kept its records through every purge and
 * prune (review s57c).
 */
function parseRecordKey(key: string, prefix: string, ext: string): DocKey | null {
  const m = /^d\/([^/]+)\/(\d{13,}|0*-\d+)-(\d+)/.exec(key.slice(prefix.length));
  if (!m || !key.endsWith(ext)) return null;
  return { id: m[1]!, c: Number(m[2]!.replace(/^0+(?=-)/, '')), r: Number(m[3]) };
}

/**
 * A major compaction (every live document rewritten) once the small segments hold an eighth of the
 * major ones' documents, or a tenth of the indexed documents are dead or superseded: both take a
 * number of saves proportional to the namespace's size, so the bytes rewritten per save stay
 * constant.
 */
function isFullCompaction<D, S>(
  rebuild: boolean,
  state: State<D, S> | null,
  fresh: number,
  lagging: number,
  fromSegments: number,
): boolean {
  const smallDocs = state ? state.refs.filter((r) => !r.major).reduce((n, r) => n + r.docs, 0) : 0;
  const majorDocs = state ? state.refs.filter((r) => r.major).reduce((n, r) => n + r.docs, 0) : 0;
  const dead = state ? smallDocs + majorDocs - fromSegments : 0;
  return (
    rebuild ||
    !state ||
    smallDocs + lagging + fresh > Math.max(1024, majorDocs / 8) ||
    dead > (smallDocs + majorDocs) / 10
  );
}

/** Adds the live documents still in segments, one decoded segment at a time. */
async function addFromSegments<D, S extends IndexSegment<D>>(
  state: State<D, S>,
  live: ManifestEntry[],
  fromSegments: { i: number; si: number; di: number }[],
  add: (entry: { key: DocKey; doc: D }) => Promise<void>,
): Promise<void> {
  // The live documents of each segment, one decoded segment at a time.
  const bySegment = new Map<number, { i: number; di: number }[]>();
  for (const f of fromSegments) {
    const list = bySegment.get(f.si);
    if (list) list.push(f);
    else bySegment.set(f.si, [f]);
  }
  for (const [si, docs] of bySegment) {
    const payloads = state.segments[si]!.all();
    for (const { i, di } of docs) await add({ key: keyOf(live[i]!), doc: payloads[di]! });
  }
}
