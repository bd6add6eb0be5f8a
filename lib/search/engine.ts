import { sha256Hex } from '../model/digest.js';
import { SatchelError, unavailable } from '../model/errors.js';
import { type ManifestEntry } from '../sessions/manifest.js';
import { unattended, type RequestContext, type Schedule } from '../model/context.js';
import { indexKeys, keys } from '../model/keys.js';
import { Batcher, mapLimit } from '../storage/concurrency.js';
import { deletePrefix, objectExists } from '../storage/prefix.js';
import { stateOf } from '../sessions/key-records.js';
import { eraseRetried } from '../sessions/existence.js';
import type { StoredSession, WriteReceipt } from '../model/session.js';
import type {
  SessionListener,
  SessionStore,
  WriteChange,
  WriteContext,
} from '../sessions/store.js';
import type { ObjectStore } from '../storage/port.js';
import { StorageUnavailableError, utf8, text } from '../storage/port.js';
import {
  docKeyOf,
  embeddingTextOf,
  extendLexDoc,
  lexDocOf,
  messageTexts,
  type DocKey,
  type LexDoc,
} from './docs.js';
import { EmbeddingsUnavailableError, type Embedder } from './embed.js';
import { nearWords, WORD_SPACE, type NearWord } from './words.js';
import {
  LsmIndex,
  UNREADABLE,
  type Built,
  type IndexKind,
  type IndexSegment,
  type Resolved,
} from './lsm.js';
import {
  CorruptIndexError,
  decodeF32,
  decodeLexRecord,
  decodeLexSegment,
  decodeVecTable,
  encodeF32,
  encodeLexRecord,
  encodeLexSegment,
  encodeVecTable,
  LexSegment,
  VecSegment,
} from './segment.js';
import { inWord, parseQuery, tokenize, tokensHeld, type Query } from './tokenize.js';

/**
 * Session search over the indexes in the bucket: BM25 over the lexical index and cosine over the vector
 * index, fused by weighted reciprocal rank; the exhaustive DeepSearch over the session objects when the
 * lexical index cannot vouch for every session (missing, corrupt, or far behind). Also the listener that
 * keeps both indexes up to date after every save, in the background.
 */

export interface SearchHit {
  id: string;
  task: string;
  score: number;
  snippet: string;
  updated_at: string;
}

export interface SearchOptions {
  /** Weight of the vector ranking in the fusion (the lexical ranking has 1). */
  vectorWeight?: number;
  /** Weight for an uncalibrated embedder such as the built-in hashing one (0: not used at all). */
  localVectorWeight?: number;
  /** Cosine similarity from a real model above which a session qualifies without a lexical match. */
  minVectorScore?: number;
  /**
   * Without a calibrated embedder (no embeddings service), a query word no session holds is matched to the
   * index's near words by the built-in local embedder's word vectors (words.ts). Default true.
   */
  localWords?: boolean;
  /** Sessions read at once by DeepSearch and snippet building. */
  concurrency?: number;
  /** A search reuses the namespace's session list this long (other devices' writes show up within it). */
  freshnessMs?: number;
  lsm?: {
    compactAfter?: number;
    maxSyncFetch?: number;
    segmentDocs?: number;
    mergeWidth?: number;
    sliceRecords?: number;
  };
  /**
   * Workers (`operationBudget`): a request has a budget of storage operations (1,000, waitUntil work
   * included), so the indexes are compacted in slices (`SHORT_LIVED_LSM`), and a search whose index is
   * too far behind to catch up within the budget answers 503 with Retry-After, not a DeepSearch of every
   * session object.
   */
  operationBudget?: boolean;
  /**
   * How long a session's index record waits for the versions after it: only the newest of those is
   * stored (the others would be superseded at once). 0 on Workers and Lambda.
   */
  recordLingerMs?: number;
  /**
   * Whether a save's background work embeds its session (default true). False on short-lived runtimes
   * (Lambda answers only once it is done): the vector lags, and the compaction a search schedules makes it.
   */
  embedOnSave?: boolean;
  onError?: (what: string, err: unknown) => void;
}

/** A version's lexical document, waiting to be stored as its session's index record (null: none, it lags). */
interface PendingRecord {
  ns: string;
  key: DocKey;
  doc: Promise<LexDoc | null>;
  schedule: Schedule;
  /** The version's `stateOf`, for the check that its session still exists once the record landed... */
  incarnation: string;
  /** ...and a tick taken after its commit landed (ExistenceChecks). */
  since: number;
}

const RRF_K = 60;
const CANDIDATES = 100;

/**
 * The index options of a short-lived runtime: a compaction reads at most 256 lagging records (about 300
 * operations with its LISTs, roots and segments, and at most 32 HEADs for the records of deleted sessions
 * whose purge never ran: lsm.ts `ofGoneSessions`), and a search reads at most 256 more (records, or a
 * compaction run inline), so that a search with the compaction it schedules stays well under Workers'
 * 1,000 operations and leaves room for the manifest's reads and the results' sessions.
 */
export const SHORT_LIVED_LSM = { sliceRecords: 256, maxSyncFetch: 256 } as const;

/** The search engine of one store: indexes, the save listener, and the query path. */
export class SearchEngine implements SessionListener {
  readonly lexical: LsmIndex<LexDoc, LexSegment>;
  private readonly vectorIndexes = new Map<string, LsmIndex<Float32Array, VecSegment>>();
  private readonly spaceChecked = new Map<string, string>();
  /**
   * The lexical document of each session this process saved last, so an append tokenizes only what it adds
   * (null: that version lags).
   */
  private readonly lastDocs = new Map<string, { key: DocKey; doc: Promise<LexDoc | null> }>();
  /** The key-prefix hash of each embedding space. */
  private readonly spaceHashes = new Map<string, string>();
  private readonly options: Required<
    Omit<SearchOptions, 'lsm' | 'onError' | 'recordLingerMs' | 'embedOnSave' | 'operationBudget'>
  >;
  private readonly embedOnSave: boolean;
  /** Index records waiting per session: a burst of appends stores the newest version's only. */
  private readonly records: Batcher<PendingRecord>;
  private readonly onError: (what: string, err: unknown) => void;
  private readonly lsmOptions: NonNullable<SearchOptions['lsm']>;
  /** Public for `reindex` (reindex.ts). */
  readonly embedder: Embedder | null;

  constructor(
    readonly sessions: SessionStore,
    embedder: Embedder | null,
    options: SearchOptions = {},
  ) {
    // An uncalibrated embedder with no weight would only cost writes: leave vectors out entirely.
    this.embedder =
      embedder && !embedder.calibrated && !options.localVectorWeight ? null : embedder;
    this.options = {
      vectorWeight: options.vectorWeight ?? 1,
      localVectorWeight: options.localVectorWeight ?? 0,
      minVectorScore: options.minVectorScore ?? 0.5,
      localWords: options.localWords ?? true,
      concurrency: options.concurrency ?? 16,
      freshnessMs: options.freshnessMs ?? 1000,
    };
    this.embedOnSave = options.embedOnSave ?? true;
    this.onError = options.onError ?? (() => undefined);
    this.records = new Batcher(
      (_, items) => this.storeNewest([...items]),
      options.recordLingerMs ?? 250,
    );
    // Compaction folds what the manifest's log records say; writes still in flight are folded next time.
    const entries = async (ns: string) =>
      (await sessions.manifest.view(ns, undefined, { settled: true })).entries;
    this.lsmOptions = { ...(options.operationBudget ? SHORT_LIVED_LSM : {}), ...options.lsm };
    this.lexical = new LsmIndex(
      sessions.objects,
      lexicalKind((ns, list) => this.buildLex(ns, list)),
      indexKeys.lexical,
      entries,
      { ...this.lsmOptions, sessionExists: this.sessionExists },
    );
  }

  private get objects(): ObjectStore {
    return this.sessions.objects;
  }

  /**
   * Whether a session's object is there (a HEAD): a compaction erases the index records of an id the
   * manifest does not list only once it is not (a delete whose purge never ran, not a session just made).
   */
  private readonly sessionExists = (ns: string, id: string): Promise<boolean> =>
    objectExists(this.objects, keys.session(ns, id));

  // ---- keeping the indexes up to date ----

  /** After a save: the session's new lexical record and vector, written in the background. */
  afterWrite(
    ns: string,
    session: StoredSession,
    receipt: WriteReceipt,
    ctx: WriteContext,
    change: WriteChange,
  ): void {
    const key = docKeyOf(session);
    const cacheKey = `${ns}/${session.id}`;
    const doc = this.nextDoc(ns, session, receipt, ctx, change);
    // A document that fails is reported where it is stored; it must never be an unhandled rejection.
    doc?.catch(() => undefined);
    this.lastDocs.delete(cacheKey);
    const schedule = ctx.schedule ?? unattended;
    // No document: the version lags, and a query or a compaction builds it from the session object.
    const incarnation = stateOf(session);
    // The commit has landed: a commit on another incarnation after this tick proves this one gone.
    const since = this.sessions.existence.tick();
    if (doc) {
      this.lastDocs.set(cacheKey, { key, doc });
      while (this.lastDocs.size > 256) this.lastDocs.delete(this.lastDocs.keys().next().value!);
      // Where checks LIST at once, the session's checks wait for this record's and share its LIST.
      const release = this.sessions.existence.hold(keys.session(ns, session.id));
      const stored = this.records.add(cacheKey, [{ ns, key, doc, schedule, incarnation, since }]);
      void stored.finally(release).catch(() => undefined); // storeNewest reports its failures
      schedule(stored);
    }
    // Text this write removed leaves the index's objects too, not only its results: its older versions go.
    if (session.satchel?.['x'] === session.revision)
      schedule(
        (doc ?? Promise.resolve())
          .then(() => this.records.flush(cacheKey))
          .then(() => this.lexical.prune(ns, key))
          .catch((err) => this.onError('lexical index not pruned', err)),
      );
    // The embedded text starts with the messages a partial copy lacks: its vector lags the same way, and
    // the vector index's compaction builds it from the session object.
    if (!change.held && this.embedOnSave && this.embedder?.available())
      this.embedLater(ns, session, { incarnation, since, schedule, what: 'vector record' });
  }

  /** The saved version's vector, stored in the background (when the service cannot take it, it lags). */
  private embedLater(
    ns: string,
    session: StoredSession,
    checked: { incarnation: string; since: number; schedule: Schedule; what: string },
  ): void {
    const key = docKeyOf(session);
    // Only its text waits for the service, not the session.
    let source: StoredSession | null = session;
    checked.schedule(
      (async () => {
        await afterResponse();
        const doc = embeddingTextOf(source!);
        source = null;
        const vectors = await this.vectors(ns, doc, false, true);
        if (!vectors) return;
        const [v] = await this.embedder!.embed([doc], false, { ns, save: true });
        await vectors
          .put(ns, key, v!, checked.schedule)
          .finally(() => this.eraseIfGone(vectors, ns, key, checked));
      })().catch((err) => {
        if (!(err instanceof EmbeddingsUnavailableError)) this.onError('vector not stored', err);
      }),
    );
  }

  /**
   * The saved version's lexical document. An append that changed nothing before it (no drop, no request
   * secrets re-redacting old text) extends the previous version's document; anything else rebuilds it from
   * the session. A partial copy (`change.held`) can only be extended: null when it cannot be. When the
   * previous version's record is not in the bucket (a compaction folded it into a segment, another process
   * still holds it), this version's session is read whole once, and the chain goes on from its record.
   */
  private nextDoc(
    ns: string,
    session: StoredSession,
    receipt: WriteReceipt,
    ctx: WriteContext,
    change: WriteChange,
  ): Promise<LexDoc | null> | null {
    const key = docKeyOf(session);
    const last = this.lastDocs.get(`${ns}/${session.id}`);
    const appendOnly =
      (change.op === 'append' || change.op === 'continue') &&
      change.added > 0 &&
      receipt.dropped_groups === 0 &&
      !ctx.knownValues?.length;
    const previous =
      appendOnly && last && last.key.c === key.c && last.key.r === key.r - 1 ? last.doc : null;
    const held = change.held ?? 0;
    // Only the messages from `held` on are real: the appended ones must all be among them.
    if (held > 0 && (!appendOnly || held > session.messages.length - change.added)) return null;
    const added = appendOnly ? session.messages.slice(-change.added) : [];
    // Tokenizing is CPU proportional to the text: it runs after the response (a new macrotask), never on
    // the save's path. An append chains onto the previous version's document, so order is kept.
    if (held > 0) {
      const before =
        previous ?? afterResponse().then(() => this.lexical.recordAt(ns, { ...key, r: key.r - 1 }));
      return before
        .then((d) => {
          if (d) return extendLexDoc(d, added);
          // Only the newest version's record is stored: an older one is not worth a whole read.
          const newest = this.lastDocs.get(`${ns}/${session.id}`)?.key;
          return newest && newest.c === key.c && newest.r > key.r ? null : this.wholeDoc(ns, key);
        })
        .catch((err) => {
          this.onError('index document not made; the index builds it from the session', err);
          return null;
        });
    }
    const whole = () => afterResponse().then(() => lexDocOf(session));
    // The previous document is null when its version lagged, and fails when its record could not be read.
    return previous ? previous.then((d) => (d ? extendLexDoc(d, added) : whole()), whole) : whole();
  }

  /** The document of a session version read whole (null once a newer version replaced it). */
  private async wholeDoc(ns: string, key: DocKey): Promise<LexDoc | null> {
    const s = await this.sessions.getAt(ns, key.id, key.r, key.c);
    return s && s.revision === key.r && docKeyOf(s).c === key.c ? lexDocOf(s) : null;
  }

  /** Stores the index records still lingering for newer versions now (a runtime about to drain). */
  async flushRecords(): Promise<void> {
    await this.records.flush();
    await this.sessions.existence.flush();
  }

  /** Stores the newest of a session's waiting versions as its index record (the older ones are superseded). */
  private async storeNewest(items: PendingRecord[]): Promise<void> {
    const newest = items.reduce((a, b) => ((b.key.c - a.key.c || b.key.r - a.key.r) > 0 ? b : a));
    const { ns, key, schedule, incarnation, since } = newest;
    await newest.doc
      .then(async (d) => {
        if (!d) return;
        const checked = { incarnation, since, schedule, what: 'lexical index record' };
        await this.lexical
          .put(ns, key, d, schedule)
          .finally(() => this.eraseIfGone(this.lexical, ns, key, checked));
      })
      .catch((err) => this.onError('lexical index record not stored', err));
  }

  /**
   * After a record's PUT (landed, failed, or with its answer lost, when it may have landed): a delete (in
   * any process) deletes the object, then lists the records, so a record that landed after that listing
   * finds the object gone here, and goes too. One side always sees the other. The check is background
   * work of its own (existence.ts: a later commit of this process may answer it).
   */
  private eraseIfGone<D, S extends IndexSegment<D>>(
    index: LsmIndex<D, S>,
    ns: string,
    key: DocKey,
    {
      incarnation,
      since,
      schedule,
      what,
    }: { incarnation: string; since: number; schedule: Schedule; what: string },
  ): void {
    const { existence } = this.sessions;
    const check = existence
      .eraseUnlessLive(keys.session(ns, key.id), incarnation, () => index.dropRecord(ns, key), {
        since,
      })
      .catch((err) => this.onError(`${what} of a deleted session not erased`, err));
    schedule(existence.follow(check));
  }

  /**
   * After a delete: the manifest already keeps the session out of every result; its records go now, and
   * a purge rewrites the segments that still hold its document (docs/design.md, "Deleting"). Deletes made
   * while a purge waits share it, so a cleanup of many sessions rewrites each segment a few times at most.
   */
  afterDelete(ns: string, id: string, ctx: WriteContext): void {
    this.lastDocs.delete(`${ns}/${id}`);
    const schedule = ctx.schedule ?? unattended;
    // The purge erases the id's records with its segments' documents (LsmIndex.purge), and is run again
    // when it fails. It runs whatever happens to the flush before it: until 2026-12-06 a failed flush or
    // listing of the records skipped it, retries and all, and the text stayed in the segments of a quiet
    // namespace (review s56a). The records are not deleted by prefix before it: a purge keeps the live
    // version of an id created again since the delete, a deletion by prefix took its records too.
    schedule(
      this.records
        .flush(`${ns}/${id}`)
        .catch((err) => this.onError('lexical index record not stored before a delete', err))
        .then(() => this.lexical.purge(ns, [id]))
        .catch((err) => this.onError('lexical index not purged', err)),
    );
    // Vectors are numbers only (their segments' tables hold ids and versions), but they go as well: from
    // the space the namespace's vectors are in, with no call to the embeddings service, also when none is
    // configured now (vectors an earlier configuration stored; until 2026-12-06 they stayed). The space is
    // read again (1 s, 2 s, 4 s …) when that read fails.
    schedule(
      eraseRetried(
        async () =>
          (await this.storedVectors(ns))
            ?.purge(ns, [id])
            .catch((err) => this.onError('vector index not purged', err)),
        (err, last) =>
          this.onError(`vector index not purged (its space unread${last ? ', gave up' : ''})`, err),
      ),
    );
  }

  /** Embeddings state for /v1/health. */
  health() {
    if (this.embedder) return this.embedder.state();
    return this.options.localWords
      ? {
          configured: false,
          space: WORD_SPACE,
          state: 'ok' as const,
          search: 'lexical, local word vectors',
        }
      : { configured: false, space: null, state: 'off' as const, search: 'lexical' };
  }

  /** Whether a query's words no session holds go to the local embedder's near words. */
  private get localWords(): boolean {
    return this.options.localWords && !this.embedder?.calibrated;
  }

  // ---- searching ----

  /** The best `limit` sessions for the query. */
  async search(
    ns: string,
    query: string,
    limit: number,
    ctx: RequestContext = {},
  ): Promise<SearchHit[]> {
    const schedule = ctx.schedule ?? unattended;
    const parsed = parseQuery(query);
    const wanted = parsed.tokens;
    if (wanted.length === 0) return [];
    const live = (
      await this.sessions.manifest.view(ns, schedule, { maxAgeMs: this.options.freshnessMs })
    ).entries;
    if (live.length === 0) return [];
    const lex = await this.lexicalFor(ns, live, schedule);
    if (!lex) return deepSearch(this.sessions, ns, live, query, limit, this.options.concurrency);

    const byId = entriesById(live);
    const need = tokensHeld(parsed) > 1 ? 2 : 1;
    const { lexical, near } = this.rankWords(lex, parsed, query, need);
    const qualified = new Set(lexical.filter((h) => h.matched >= need).map((h) => h.id));
    const lists: { ids: string[]; weight: number }[] = [
      { ids: lexical.map((h) => h.id), weight: 1 },
    ];

    const vectorHits = await this.rankVectors(ns, live, query, schedule);
    if (vectorHits.length > 0) {
      const calibrated = this.embedder!.calibrated;
      lists.push({
        ids: vectorHits.map((h) => h.id),
        weight: calibrated ? this.options.vectorWeight : this.options.localVectorWeight,
      });
      // A real model's strong match qualifies on meaning alone; the local embedder only reorders.
      if (calibrated)
        for (const h of vectorHits) if (h.score >= this.options.minVectorScore) qualified.add(h.id);
    }
    // One ranking: its own (BM25) scores; several: the fused score.
    const bm25 = new Map(lexical.map((h) => [h.id, h.score]));
    const fused = (
      lists.length === 1 ? lexical.map((h) => ({ id: h.id, score: h.score })) : fuse(lists)
    ).filter((h) => qualified.has(h.id));
    // A near word that stood in for a typed one is what a snippet can show.
    const snippetWords = [...wanted, ...[...near.values()].flat().map((w) => w.term)];
    const out: SearchHit[] = [];
    for (let i = 0; i < fused.length && out.length < limit;) {
      const batch = fused.slice(i, i + limit - out.length);
      i += batch.length;
      const hits = await mapLimit(batch, this.options.concurrency, async (h) => {
        const e = byId.get(h.id)!;
        const session = await readForSearch(this.sessions, ns, e);
        if (!session) return null; // deleted since the manifest was read
        return {
          id: e.id,
          task: session.task,
          score: round(lists.length === 1 ? (bm25.get(h.id) ?? h.score) : h.score),
          snippet: snippetFor(session, query, snippetWords),
          updated_at: session.updated_at,
        };
      });
      for (const hit of hits) if (hit) out.push(hit);
    }
    return out;
  }

  /**
   * The lexical documents of the live sessions; null when only DeepSearch can answer (the index is
   * unreadable, or behind). A short-lived runtime, which cannot read every session object, answers 503
   * while the index catches up instead.
   */
  private async lexicalFor(
    ns: string,
    live: ManifestEntry[],
    schedule: Schedule,
  ): Promise<Resolved<LexDoc, LexSegment> | null> {
    const budget = this.lexical.queryBudget;
    let lex: Resolved<LexDoc, LexSegment>;
    try {
      lex = await this.lexical.resolve(ns, live, true, schedule, budget !== null);
    } catch (err) {
      // Reading every session object would not fit a short-lived runtime's budget either.
      if (budget !== null && live.length > budget) throw err;
      this.onError('lexical index unreadable; DeepSearch', err);
      return null;
    }
    if (lex.missing.length === 0) return lex;
    // A few it could not build (gone or moved on since the view) are read alone, on every runtime: until
    // 2026-12-07 one made a Node or Lambda search read every session of the namespace (review s63d).
    if (!lex.behind) return this.withUnindexed(ns, lex);
    if (budget === null) return null;
    throw unavailable(
      `the search index is catching up on ${lex.missing.length} saved sessions: ` +
        'try again after Retry-After',
      1,
    );
  }

  /**
   * The index's documents plus those of the few live sessions it could not build (read again here, as
   * DeepSearch would read them), so that the answer leaves out none a DeepSearch finds.
   */
  private async withUnindexed(
    ns: string,
    lex: Resolved<LexDoc, LexSegment>,
  ): Promise<Resolved<LexDoc, LexSegment>> {
    const live = new Map(lex.live);
    const read = await mapLimit(lex.missing, this.options.concurrency, (e) =>
      readForSearch(this.sessions, ns, e),
    );
    lex.missing.forEach((e, i) => {
      const session = read[i];
      if (session) live.set(e.id, { doc: lexDocOf(session) });
    });
    return { segments: lex.segments, live, missing: [] };
  }

  /**
   * BM25 of the query as typed; only a query with a word no live session holds looks for near words (and
   * is ranked again with them), so one whose words are all held costs nothing more.
   */
  private rankWords(lex: Resolved<LexDoc, LexSegment>, parsed: Query, query: string, need: number) {
    const absent = new Set<string>();
    const wanted = parsed.tokens;
    const { parts, runs } = parsed;
    const lexical = rankLexical(lex, wanted, CANDIDATES, need, parts, undefined, absent, runs);
    if (!this.localWords || absent.size === 0)
      return { lexical, near: new Map<string, NearWord[]>() };
    const held = absentHolder(lex, wanted, absent, parts);
    const near = nearWords(lex, wanted, held, typedInCapitals(query));
    if (near.size === 0) return { lexical, near };
    return {
      lexical: rankLexical(lex, wanted, CANDIDATES, need, parts, near, undefined, runs),
      near,
    };
  }

  private async rankVectors(
    ns: string,
    live: ManifestEntry[],
    query: string,
    schedule: Schedule,
  ): Promise<{ id: string; score: number }[]> {
    if (!this.embedder?.available()) return [];
    // The query leaves for the embeddings API redacted, as everything embedded is (a token searched for
    // could only match its [REDACTED] placeholder anyway).
    const text = this.sessions.pipeline.redactText(query);
    try {
      // Urgent: a space still unknown is learned from the query itself, ahead of queued saves.
      const vectors = await this.vectors(ns, text, true);
      if (!vectors) return [];
      const [res, [q]] = await Promise.all([
        vectors.resolve(ns, live, false, schedule),
        this.embedder.embed([text], true, { ns }),
      ]);
      // A query the service refused (zeros: no vector) ranks nothing: the answer is the lexical one
      // (review s53f: every session scored 0 and came back by id, fused with BM25).
      if (!q!.some((x) => x !== 0)) return [];
      return rankVectors(res, q!, CANDIDATES);
    } catch (err) {
      if (!(err instanceof EmbeddingsUnavailableError))
        this.onError('vector search failed; lexical only', err);
      return [];
    }
  }

  /**
   * The vector index of the namespace's current embedding space; a new space drops the old one. Without
   * SATCHEL_EMBEDDINGS_DIMS the space is the first answer's: `probe` (the embedder keeps its vector) or a
   * word is embedded first. Null without an embedder (or while the space is unknown).
   */
  async vectors(
    ns: string,
    probe = 'satchel',
    urgent?: boolean,
    save?: boolean,
  ): Promise<LsmIndex<Float32Array, VecSegment> | null> {
    // A save's text as the probe waits in the save texts' bounded queue (review s53f).
    if (this.embedder?.space() === null)
      await this.embedder.embed([probe], urgent, { ns, ...(save ? { save } : {}) });
    const space = this.embedder?.space();
    if (!space) return null;
    let hash = this.spaceHashes.get(space);
    if (!hash) this.spaceHashes.set(space, (hash = (await sha256Hex(space)).slice(0, 12)));
    const index = this.vectorIndex(space, hash);
    if (this.spaceChecked.get(ns) !== space) {
      const meta = await this.vectorsMeta(ns);
      if (meta.space !== space) {
        // A new model or dimension count: the old vectors mean nothing in this space.
        if (meta.hash && meta.hash !== hash)
          await deletePrefix(this.objects, indexKeys.vectors(ns, meta.hash));
        await this.objects.put(
          indexKeys.vectorsMeta(ns),
          utf8(
            JSON.stringify({
              v: 1,
              space,
              hash,
              dims: Number(space.split('/').pop()),
              created_at: new Date().toISOString(),
            }),
          ),
        );
      }
      this.spaceChecked.set(ns, space);
    }
    return index;
  }

  /**
   * The vector index the namespace's vectors are stored in (`x/vectors_meta.json` says which), with no
   * call to the embedder: what a purge erases, whether or not this process knows its space yet.
   */
  async storedVectors(ns: string): Promise<LsmIndex<Float32Array, VecSegment> | null> {
    const { space, hash } = await this.vectorsMeta(ns);
    const dims = Number(space?.split('/').pop());
    if (!space || !hash || !/^[0-9a-f]{12}$/.test(hash) || !(dims > 0)) return null;
    return this.vectorIndex(space, hash);
  }

  private async vectorsMeta(ns: string): Promise<{ space?: string; hash?: string }> {
    const found = await this.objects.get(indexKeys.vectorsMeta(ns));
    try {
      const meta = found ? JSON.parse(text(found.body)) : {};
      return typeof meta === 'object' && meta !== null ? meta : {};
    } catch {
      return {};
    }
  }

  /** The index of the vectors of one space (`hash`: its key prefix), one per process. */
  private vectorIndex(space: string, hash: string): LsmIndex<Float32Array, VecSegment> {
    let index = this.vectorIndexes.get(space);
    if (!index) {
      const dims = Number(space.split('/').pop());
      index = new LsmIndex(
        this.objects,
        vectorKind(dims, (ns2, list) => this.buildVectors(ns2, list)),
        (n) => indexKeys.vectors(n, hash),
        async (n) => (await this.sessions.manifest.view(n, undefined, { settled: true })).entries,
        {
          ...this.lsmOptions,
          recordGraceMs: 0,
          sessionExists: this.sessionExists,
          // No save stores a vector record (review s66n: a search GETed every lagging one, each a miss).
          ...(this.embedOnSave ? {} : { maxSyncFetch: 0 }),
        },
      );
      this.vectorIndexes.set(space, index);
    }
    return index;
  }

  private async buildLex(ns: string, entries: ManifestEntry[]): Promise<Built<LexDoc>[]> {
    return mapLimit(entries, this.options.concurrency, async (e) => {
      const s = await this.sessionToBuild(ns, e);
      return s === UNREADABLE ? s : s && s.revision === e.revision ? lexDocOf(s) : null;
    });
  }

  /**
   * The session of a version an index builds; `UNREADABLE` when its object is not a session (a torn copy):
   * left out of the index as it is of results, where until 2026-12-07 it failed every search and compaction
   * of the namespace (review s61e). Storage that does not answer still fails the build.
   */
  private async sessionToBuild(
    ns: string,
    e: ManifestEntry,
  ): Promise<StoredSession | null | typeof UNREADABLE> {
    try {
      return await this.sessions.getAt(ns, e.id, e.revision, docKeyOf(e).c);
    } catch (err) {
      if (!SatchelError.is(err, 'corrupt') && !SatchelError.is(err, 'invalid')) throw err;
      this.onError('session unreadable; left out of the search index', err);
      return UNREADABLE;
    }
  }

  private async buildVectors(ns: string, entries: ManifestEntry[]): Promise<Built<Float32Array>[]> {
    if (!this.embedder?.available()) return entries.map(() => null);
    const texts = await mapLimit(entries, this.options.concurrency, async (e) => {
      const s = await this.sessionToBuild(ns, e);
      return s === UNREADABLE ? s : s && s.revision === e.revision ? embeddingTextOf(s) : null;
    });
    const wanted = texts.flatMap((t, i) => (typeof t === 'string' ? [i] : []));
    // An unreadable version stays so whatever the service answers; the others lag while it fails.
    const unbuilt = () => texts.map((t) => (t === UNREADABLE ? t : null));
    try {
      // A blank text (or one the service refused alone) gets zeros: no vector, and done, not asked again.
      const vectors = await this.embedder.embed(
        wanted.map((i) => texts[i] as string),
        false,
        { ns },
      );
      const out: Built<Float32Array>[] = unbuilt();
      wanted.forEach((i, k) => (out[i] = vectors[k]!));
      return out;
    } catch (err) {
      if (err instanceof EmbeddingsUnavailableError) return unbuilt();
      throw err;
    }
  }
}

/** Resolves on a later macrotask: after the response in progress has been handed back. */
function afterResponse(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// ---- index kinds ----

function lexicalKind(build: IndexKind<LexDoc, LexSegment>['build']): IndexKind<LexDoc, LexSegment> {
  return {
    name: 'lexical',
    recordExt: '.json',
    segmentExts: ['.lex'],
    encodeRecord: encodeLexRecord,
    decodeRecord: (_key, body) => decodeLexRecord(body).doc,
    encodeSegment: (entries) => [encodeLexSegment(entries)],
    decodeSegment: ([bytes]) => decodeLexSegment(bytes!),
    build,
  };
}

function vectorKind(
  dims: number,
  build: IndexKind<Float32Array, VecSegment>['build'],
): IndexKind<Float32Array, VecSegment> {
  return {
    name: 'vectors',
    recordExt: '.f32',
    segmentExts: ['.json', '.f32'],
    encodeRecord: (_key, v) => encodeF32([v], dims),
    decodeRecord: (_key, body) => decodeF32(body, dims),
    encodeSegment: (entries) => [
      encodeVecTable(
        entries.map((e) => e.key),
        dims,
      ),
      encodeF32(
        entries.map((e) => e.doc),
        dims,
      ),
    ],
    decodeSegment: ([table, rows]) => {
      const t = decodeVecTable(table!);
      const data = decodeF32(rows!, t.dims);
      // Damage, as a torn .f32 is: the index rebuilds (a plain Error turned vector search off for good).
      if (t.dims !== dims || data.length !== t.docs.length * dims)
        throw new CorruptIndexError('vector segment does not match its table');
      return new VecSegment(t.docs, dims, data);
    },
    build,
  };
}

/**
 * A listed session's object for a result: null when it is gone (deleted since the manifest was read) or
 * unreadable (a corrupt object is left out of results). Storage that does not answer is not "no result":
 * it fails the search (503), so an agent is not told that nothing matches.
 */
function readForSearch(
  sessions: SessionStore,
  ns: string,
  e: ManifestEntry,
): Promise<StoredSession | null> {
  return sessions.getAt(ns, e.id, e.revision, docKeyOf(e).c).catch((err: unknown) => {
    if (err instanceof StorageUnavailableError) throw err;
    if (err instanceof SatchelError && err.kind === 'unavailable') throw err;
    return null;
  });
}

// ---- ranking (pure) ----

/**
 * BM25 (k1 1.2, b 0.75) over the live documents; `matched` = distinct query tokens the session holds (an
 * identifier's whole form counting for its `parts` too, each of `runs` once where all its tokens are:
 * `tokensHeld`). The best `limit`, and with `need` also the best
 * `limit` of those that hold at least `need` of them (the sessions that qualify), best first: those must
 * not be cut by sessions that rank higher on one token.
 */
export function rankLexical(
  res: Resolved<LexDoc, LexSegment>,
  query: string[],
  limit = Infinity,
  need = 0,
  parts: ReadonlyMap<string, string[]> = new Map(),
  near: ReadonlyMap<string, NearWord[]> = new Map(),
  absent?: Set<string>,
  runs: string[][] = [],
  k1 = 1.2,
  b = 0.75,
): LexHit[] {
  const n = res.live.size;
  if (n === 0) return [];
  const { masks, fresh, avg } = liveView(res);
  // Scores accumulate in typed arrays per segment (no object per posting: a common term can have one
  // posting per session).
  const scores = res.segments.map((s) => new Float64Array(s.docs.length));
  // Distinct query tokens a document holds: a query may have thousands (4,096 characters).
  const matched = res.segments.map((s) => new Uint16Array(s.docs.length));
  const freshScores = new Map<string, { score: number; matched: number }>();
  for (const token of new Set(query)) {
    // A word no session holds is scored by the near words standing in for it (words.ts): a session
    // counts, and scores, once for it, by the best of them it holds.
    const variants = near.get(token) ?? [{ term: token, weight: 1 }];
    const group =
      variants.length > 1 ? res.segments.map((sg) => new Float64Array(sg.docs.length)) : null;
    const freshGroup = new Map<string, number>();
    // An identifier's whole form counts, and scores, for its parts too.
    const counts = 1 + (parts.get(token)?.length ?? 0);
    // A CJK bigram counts with its word (below), once all the word's are held.
    const adds = inWord(token) ? 0 : counts;
    for (const { term, weight: factor } of variants) {
      const lists = res.segments.map((seg) => seg.postingsOf(term));
      const df = liveDf(lists, masks, fresh, term);
      if (df === 0) {
        if (variants.length === 1 && term === token) absent?.add(token);
        continue;
      }
      const idf = factor * Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const weight = (tf: number, len: number) =>
        (counts * idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len) / avg));
      lists.forEach((p, si) => {
        if (!p) return;
        const mask = masks[si]!;
        const lens = res.segments[si]!.lens;
        const sc = group ? group[si]! : scores[si]!;
        const mt = matched[si]!;
        for (let k = 0; k < p.docs.length; k++) {
          const di = p.docs[k]!;
          if (mask[di] !== 1) continue;
          const w = weight(p.tfs[k]!, lens[di]!);
          if (!group) {
            sc[di]! += w;
            mt[di]! += adds;
          } else if (w > sc[di]!) sc[di] = w;
        }
      });
      for (const f of fresh) {
        const tf = f.doc.tf.get(term);
        if (tf) freshGroup.set(f.id, Math.max(freshGroup.get(f.id) ?? 0, weight(tf, f.doc.len)));
      }
    }
    group?.forEach((g, si) => {
      for (let di = 0; di < g.length; di++)
        if (g[di]! > 0) {
          scores[si]![di]! += g[di]!;
          matched[si]![di]! += adds;
        }
    });
    for (const [id, w] of freshGroup) {
      const had = freshScores.get(id) ?? { score: 0, matched: 0 };
      had.score += w;
      had.matched += adds;
      freshScores.set(id, had);
    }
  }
  countWords(res, runs, fresh, matched, freshScores);
  return bestHits(res, scores, matched, freshScores, limit, need);
}

/** A CJK word of the query counts once where all its bigrams are held (`Query.runs`). */
function countWords(
  res: Resolved<LexDoc, LexSegment>,
  runs: string[][],
  fresh: readonly { id: string; doc: LexDoc }[],
  matched: Uint16Array[],
  freshScores: Map<string, { matched: number }>,
): void {
  for (const run of runs) {
    res.segments.forEach((seg, si) => {
      const held = new Uint16Array(seg.docs.length);
      for (const t of run)
        for (const di of seg.postingsOf(t)?.docs ?? [])
          if (++held[di]! === run.length) matched[si]![di]!++;
    });
    for (const f of fresh) if (run.every((t) => f.doc.tf.has(t))) freshScores.get(f.id)!.matched++;
  }
}

/** The best `limit` hits, and the best `limit` of those holding `need` tokens, best first. */
function bestHits(
  res: Resolved<LexDoc, LexSegment>,
  scores: Float64Array[],
  matched: Uint16Array[],
  freshScores: Map<string, { score: number; matched: number }>,
  limit: number,
  need: number,
): LexHit[] {
  const order = (x: LexHit, y: LexHit) => x.score - y.score || (x.id < y.id ? 1 : -1);
  const top = new TopK<LexHit>(limit, order);
  // Room even for one word: a CJK word's bigrams score sessions that do not hold it (review s67j: 200
  // holding some of データベース's cut the one holding it).
  const strong = new TopK<LexHit>(limit, order);
  const offer = (hit: LexHit) => {
    if (top.wants(hit.score)) top.push(hit);
    if (hit.matched >= need && strong.wants(hit.score)) strong.push(hit);
  };
  scores.forEach((sc, si) => {
    const docs = res.segments[si]!.docs;
    const mt = matched[si]!;
    for (let di = 0; di < sc.length; di++) {
      if (sc[di]! > 0 && (top.wants(sc[di]!) || (mt[di]! >= need && strong.wants(sc[di]!))))
        offer({ id: docs[di]!.id, score: sc[di]!, matched: mt[di]! });
    }
  });
  for (const [id, s] of freshScores) offer({ id, ...s });
  const best = top.sorted();
  const ids = new Set(best.map((h) => h.id));
  const more = strong.sorted().filter((h) => !ids.has(h.id));
  return more.length ? [...best, ...more].sort((x, y) => order(y, x)) : best;
}

interface LexHit {
  id: string;
  score: number;
  matched: number;
}

/** The best `k` items by `compare` (ascending = worse first), with a min-heap; `wants` is a cheap pre-check. */
class TopK<T extends { score: number }> {
  private readonly heap: T[] = [];
  constructor(
    private readonly k: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  wants(score: number): boolean {
    return this.heap.length < this.k || (this.k > 0 && score >= this.heap[0]!.score);
  }

  push(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.compare(h[i]!, h[parent]!) >= 0) break;
        [h[i], h[parent]] = [h[parent]!, h[i]!];
        i = parent;
      }
    } else if (this.compare(item, h[0]!) > 0) {
      h[0] = item;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.compare(h[l]!, h[m]!) < 0) m = l;
        if (r < h.length && this.compare(h[r]!, h[m]!) < 0) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
  }

  /** Best first. */
  sorted(): T[] {
    return this.heap.slice().sort((a, b) => this.compare(b, a));
  }
}

const byIdCache = new WeakMap<ManifestEntry[], Map<string, ManifestEntry>>();

/** The manifest's entries by id, once per view (a view is reused while nothing changed). */
function entriesById(live: ManifestEntry[]): Map<string, ManifestEntry> {
  let map = byIdCache.get(live);
  if (!map) byIdCache.set(live, (map = new Map(live.map((e) => [e.id, e]))));
  return map;
}

const liveViews = new WeakMap<
  Resolved<LexDoc, LexSegment>,
  { masks: Uint8Array[]; fresh: { id: string; doc: LexDoc }[]; avg: number }
>();

/** How many live documents hold `term`: its postings in each segment (`lists`), and the fresh ones. */
function liveDf(
  lists: ({ docs: Uint32Array } | null)[],
  masks: Uint8Array[],
  fresh: { doc: LexDoc }[],
  term: string,
): number {
  let df = 0;
  lists.forEach((p, si) => {
    if (!p) return;
    const mask = masks[si]!;
    for (let k = 0; k < p.docs.length; k++) df += mask[p.docs[k]!]!;
  });
  for (const f of fresh) if (f.doc.tf.has(term)) df++;
  return df;
}

/** Which segment documents are live, the documents outside segments, and the mean length: once per resolution. */
function liveView(res: Resolved<LexDoc, LexSegment>) {
  const had = liveViews.get(res);
  if (had) return had;
  const masks = res.segments.map((s) => new Uint8Array(s.docs.length));
  const fresh: { id: string; doc: LexDoc }[] = [];
  let total = 0;
  for (const [id, ref] of res.live) {
    if ('doc' in ref) {
      fresh.push({ id, doc: ref.doc });
      total += ref.doc.len;
    } else {
      masks[ref.si]![ref.di] = 1;
      total += res.segments[ref.si]!.lens[ref.di]!;
    }
  }
  const view = { masks, fresh, avg: total / res.live.size || 1 };
  liveViews.set(res, view);
  return view;
}

/**
 * Whether a live session holds `term`: for the query's own tokens, what the ranking found (`absent`: no
 * session holds it), no postings read again; for an identifier's part, also its whole form (a session
 * holding `powershell` holds what `PowerShell` asks for: its parts are not misspellings).
 */
function absentHolder(
  res: Resolved<LexDoc, LexSegment>,
  query: readonly string[],
  absent: ReadonlySet<string>,
  parts: ReadonlyMap<string, string[]>,
): (term: string) => boolean {
  const { masks, fresh } = liveView(res);
  const asked = new Set(query);
  const holds = (term: string) =>
    asked.has(term)
      ? !absent.has(term)
      : res.segments.some((seg, si) => {
          const p = seg.postingsOf(term);
          return !!p && p.docs.some((di) => masks[si]![di] === 1);
        }) || fresh.some((f) => f.doc.tf.has(term));
  return (term) =>
    holds(term) || [...parts].some(([whole, ps]) => ps.includes(term) && holds(whole));
}

/** The tokens of the words typed in capitals (`ENFILE`, `EACCES`): codes, which have no near words. */
function typedInCapitals(query: string): Set<string> {
  const codes = query.match(/(?<![\p{L}\p{N}_])\p{Lu}[\p{Lu}\p{N}_]+(?![\p{L}\p{N}_])/gu) ?? [];
  return new Set(tokenize(codes.join(' ')));
}

/** Cosine (vectors are unit length) over the live vectors, best `limit`. */
export function rankVectors(
  res: Resolved<Float32Array, VecSegment>,
  q: Float32Array,
  limit: number,
): { id: string; score: number }[] {
  const out: { id: string; score: number }[] = [];
  for (const [id, ref] of res.live) {
    const v = 'doc' in ref ? ref.doc : res.segments[ref.si]!.row(ref.di);
    let dot = 0;
    for (let k = 0; k < v.length; k++) dot += v[k]! * q[k]!;
    // Zeros: the session has no vector (no text to embed), so no rank either; nor has a NaN vector
    // (stored before 2026-12-06 from an answer beyond float32), which would disorder the sort.
    if (Number.isFinite(dot) && (dot !== 0 || v.some((x) => x !== 0))) out.push({ id, score: dot });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, limit);
}

/** Weighted reciprocal-rank fusion: Σ weight / (60 + rank). */
export function fuse(lists: { ids: string[]; weight: number }[]): { id: string; score: number }[] {
  const scores = new Map<string, number>();
  for (const { ids, weight } of lists)
    ids.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + weight / (RRF_K + rank + 1)));
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

// ---- DeepSearch ----

/**
 * DeepSearch: reads the sessions newest first (bounded parallel GETs). A session qualifies with 2 or more
 * distinct query tokens (or the only token of a one-token query) in its task or its user, assistant or
 * tool content; system messages never match. Score = distinct tokens found; ties go to the newer session.
 * The scan stops once `limit` sessions hold every token: nothing older can beat them.
 */
export async function deepSearch(
  sessions: SessionStore,
  ns: string,
  live: ManifestEntry[],
  query: string,
  limit: number,
  concurrency = 16,
): Promise<SearchHit[]> {
  const parsed = parseQuery(query);
  const wanted = parsed.tokens;
  if (wanted.length === 0) return [];
  const words = tokensHeld(parsed);
  const need = words > 1 ? 2 : 1;
  const hits: (SearchHit & { at: number })[] = [];
  let strong = 0;
  for (let i = 0; i < live.length && strong < limit; i += concurrency) {
    const loaded = await mapLimit(live.slice(i, i + concurrency), concurrency, (e) =>
      readForSearch(sessions, ns, e),
    );
    for (const session of loaded) {
      if (!session) continue;
      // The same document the lexical index holds, so DeepSearch and the index agree on what matches.
      const tokens = lexDocOf(session).tf;
      const found = tokensHeld(parsed, (t) => tokens.has(t));
      if (found < need) continue;
      if (found === words) strong++;
      hits.push({
        id: session.id,
        task: session.task,
        score: found,
        snippet: snippetFor(session, query, wanted),
        updated_at: session.updated_at,
        at: Date.parse(session.updated_at) || 0,
      });
    }
  }
  return hits
    .sort((a, b) => b.score - a.score || b.at - a.at)
    .slice(0, limit)
    .map(({ at: _at, ...hit }) => hit);
}

/** About 200 characters around the best match: the message holding the most query tokens. */
function snippetFor(session: StoredSession, query: string, wanted: string[]): string {
  // The text holding the most query words as typed (a substring test: this runs for every result); when no
  // text holds any, the stems (`failure` → `failur`) by their first four letters. Only words that give a
  // token: a question's stopwords picked the text with the most `what is the` (review s67e).
  const words = [
    ...new Set(
      fold(query)
        .split(/[^\p{L}\p{N}_]+/u)
        .filter((w) => w.length > 1 && tokenize(w).length),
    ),
  ];
  const stems = [...new Set(wanted.map((w) => w.slice(0, 4)))];
  let best = session.task;
  let bestCount = 0;
  let budget = 512 * 1024; // a huge session: look for the snippet in its first half megabyte only
  for (const probes of [words, stems]) {
    for (const t of [session.task, ...messageTexts(session.messages)]) {
      if ((budget -= t.length) < 0) break;
      const low = fold(t);
      let count = 0;
      for (const w of probes) if (low.includes(w)) count++;
      if (count > bestCount) {
        best = t;
        bestCount = count;
      }
    }
    if (bestCount > 0) break;
    budget = 512 * 1024;
  }
  const low = fold(best);
  let at = -1;
  for (const word of [...words, ...stems]) {
    at = low.indexOf(word);
    if (at >= 0) break;
  }
  const start = Math.max(0, (at < 0 ? 0 : at) - 80);
  // A cut through a surrogate pair leaves half a character: U+FFFD instead (docs/api.md, "Unicode").
  const piece = best
    .slice(start, start + 200)
    .toWellFormed()
    .replace(/\s+/g, ' ')
    .trim();
  return (start > 0 ? '…' : '') + piece + (start + 200 < best.length ? '…' : '');
}

/** Lower case with the offsets of `s` (İ alone lowers to two code units), for a snippet's cut. */
function lower(s: string): string {
  return s.replace(/\u0130/g, 'I').toLowerCase();
}

/** Precomposed Latin, Greek and Cyrillic letters, whose accents the tokenizer folds too. */
const ACCENTED = /[\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF\u1E00-\u1EFF\u1F00-\u1FFF]/g;

/**
 * `s` lower-cased with accents folded (`Café` → `cafe`), of the same length, so that an offset in it is one
 * in `s`: a snippet finds `café` for the query `cafe`, as search does. A letter whose folded form is not one
 * code unit stays as it is.
 */
function fold(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase();
  const folded = lower(
    s.replace(ACCENTED, (c) => {
      const base = c.normalize('NFD').replace(/\p{M}+/gu, '');
      return base.length === 1 ? base : c;
    }),
  );
  return folded.length === s.length ? folded : lower(s);
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
