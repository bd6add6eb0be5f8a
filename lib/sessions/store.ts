import {
  heldMessages,
  decodeBase,
  decodeSegment,
  decodeStored,
  lazyJoin,
  mergeParts,
  messagesOf,
  publicChunks,
  publicChunksOfParts,
  type BaseRef,
  type EncodedMessages,
  type SegRef,
  type StoredObjectForm,
} from '../model/codec.js';
import { unattended, type RequestContext } from '../model/context.js';
import { sha256Hex } from '../model/digest.js';
import {
  badRequest,
  notFound,
  preconditionFailed,
  SatchelError,
  unavailable,
} from '../model/errors.js';
import { assertSessionId, newSessionId, randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import { assertInlineMedia } from '../model/parts.js';
import { mergeExternalRefs } from '../model/refs.js';
import { revisionMatches, revisionMismatch, type ExpectedRevision } from '../model/revision.js';
import type { AppendBody, CreateBody, ReplaceBody } from '../model/requests.js';
import {
  instantOf,
  type Message,
  type SessionSummary,
  type StoredSession,
  type WriteReceipt,
  type WriteRecord,
} from '../model/session.js';
import { corePipeline, type SavePipeline } from '../pipeline/save.js';
import { Batcher, mapLimit } from '../storage/concurrency.js';
import { objectExists } from '../storage/prefix.js';
import { StorageUnavailableError, type ObjectStore } from '../storage/port.js';
import { AttemptTimeoutError, defaultRetryPolicy } from '../storage/retry.js';
import {
  filtersOf,
  incarnationIn,
  stateOf,
  incarnationOf,
  liveFilters,
  lookUpKeyRecord,
  keyRecordsSince,
} from './key-records.js';
import { auditOf, type AuditLog, type AuditRecord } from './audit.js';
import { isWhole, rawNamed, SessionCache, type CachedSession } from './cache.js';
import { FLOOR_MARGIN, RevisionFloors } from './revision-floor.js';
import { eraseRetried, ExistenceChecks } from './existence.js';
import { decodeCursor, encodeCursor, type ListPosition } from './cursor.js';
import { GroupQueue } from './key-queue.js';
import { StandingMarkers } from './markers.js';
import { Manifest, type ManifestEntry, type ManifestOptions } from './manifest.js';
import { trimMessages } from './trim.js';
import { fingerprintOf, keyedWrite, recordsCover } from './write-records.js';
import { deleteParts } from './parts.js';
import {
  scheduleFor,
  WriteLoop,
  type AfterCommit,
  type Committed,
  type WriteContext,
  type WriteRequest,
  type WriteResult,
} from './write-loop.js';

export type { WriteContext, WriteResult } from './write-loop.js';
export { keyedWrite, receiptOf } from './write-records.js';
export { trimMessages } from './trim.js';

/**
 * What a write did, for listeners: `added` messages were appended at the end (nothing else changed
 * when the op is an append and no group was dropped).
 */
export interface WriteChange {
  op: AuditRecord['op'];
  added: number;
  /** When set, `session.messages` before this index are absent (undefined): this process holds only the later ones. */
  held?: number;
}

/** Called after each successful write or delete; search indexing plugs in here. */
export interface SessionListener {
  afterWrite?(
    ns: string,
    session: StoredSession,
    receipt: WriteReceipt,
    ctx: WriteContext,
    change: WriteChange,
  ): Promise<void> | void;
  afterDelete?(ns: string, id: string, ctx: WriteContext): Promise<void> | void;
}

export interface SessionStoreOptions {
  pipeline?: SavePipeline;
  /** The audit log (one record per write); none in unit tests that do not need it. */
  audit?: AuditLog;
  /** Reports failures that must not fail the write itself (an audit record that could not be stored). */
  onError?: (what: string, err: unknown) => void;
  manifest?: ManifestOptions;
  listeners?: SessionListener[];
  /** Bytes of parsed sessions kept in process, so an append with a current revision skips the GET. */
  cacheBytes?: number;
  /** How long a write keeps retrying against concurrent writers before answering `unavailable`. */
  maxContentionMs?: number;
  /**
   * Sessions of at least this many bytes are stored as an immutable base and a small delta on it, so an
   * append writes about the new messages (docs/design.md, "Base, segments and delta"); 0 stores every session whole.
   */
  splitBytes?: number;
  /**
   * A large session's delta is sealed into an immutable segment once its messages pass this many bytes
   * (default: `splitBytes / 64`, 4 KiB, at least 256).
   */
  segmentBytes?: number;
  /**
   * How long this process keeps a session's standing pending marker after its last logged write
   * (markers.ts). 0: remove it in the write's own background work (Workers, Lambda).
   */
  markerIdleMs?: number;
  /**
   * How long a commit's log and audit records wait for the commits after it, to go out together (one log
   * record for the newest, one audit object for all). 0 on Workers and Lambda, where the wait would be
   * the function's. Records of commits made while a batch is being stored always wait for it. A batch
   * of `RECORD_BATCH_FULL` commits goes without waiting longer.
   */
  recordLingerMs?: number;
  /**
   * Whether writes to one session queue in this process and go out as group commits (the default). Off on
   * Workers and Lambda: there the queue's commits ran in the request that came first, and workerd cancels
   * a request that waits on another request's storage work as hung (a plain 500 for writes that landed,
   * review s58h); each request's write then races through If-Match as another process's would, and never
   * takes a standing marker whose PUT another request has not yet seen answered (review s58j).
   */
  groupCommit?: boolean;
  /**
   * How long one storage call may take (`defaultRetryPolicy`, 8 s): how long a write tries again while
   * storage fails its commits unseen; a write waits in this process's queue behind earlier writes to its
   * session at most three times that before it answers 503 without having been sent (tests shorten it).
   */
  storageDeadlineMs?: number;
  /**
   * How long the check after a background record (does the session still exist?) waits for a commit of
   * this process to answer it before it LISTs (existence.ts). 0 (the default): it LISTs at once. The
   * Node server waits 2 s; Workers and Lambda do not wait (their drain would).
   */
  existenceLingerMs?: number;
  /**
   * The most sessions one cleanup deletes; the rest are left for the next call, and its answer says how
   * many (`remaining`). Workers set it: a request there has a budget of storage operations
   * (docs/deploy.md). Default: no limit.
   */
  cleanupBatch?: number;
  now?: () => number;
}

export interface ListOptions {
  limit: number;
  cursor?: string;
  updatedAfter?: number;
  /** Only sessions whose metadata holds every one of these pairs (through the manifest). */
  metadata?: [key: string, value: string][];
}

/**
 * A create's own times (an import keeps the original session's): never in the future, and updated_at not
 * before created_at. A time up to 5 minutes ahead (the sending device's clock) is stored as this server's
 * now: kept as sent, it stayed the namespace's newest for minutes, so `latest` answered it and a sync
 * loop's `updated_after` passed over the real writes after it (review s54b; until 2026-12-06).
 */
function importedTimes(
  body: CreateBody,
  now: number,
): { created_at?: string; updated_at?: string } {
  const skew = 5 * 60_000;
  for (const field of ['created_at', 'updated_at'] as const) {
    const value = body[field];
    if (value !== undefined && Date.parse(value) > now + skew)
      throw badRequest(`${field} is in the future`, [{ path: field, message: 'in the future' }]);
  }
  if (
    body.created_at &&
    body.updated_at &&
    Date.parse(body.updated_at) < Date.parse(body.created_at)
  ) {
    throw badRequest('updated_at is before created_at', [
      { path: 'updated_at', message: 'before created_at' },
    ]);
  }
  const kept = (value: string) => (Date.parse(value) > now ? new Date(now).toISOString() : value);
  return {
    ...(body.created_at ? { created_at: kept(body.created_at) } : {}),
    ...(body.updated_at ? { updated_at: kept(body.updated_at) } : {}),
  };
}

/**
 * Session operations over the object-store port. Every write is a compare-and-swap on the session
 * object (If-Match on its etag, or create-only) through the one write loop (write-loop.ts), retried
 * against concurrent writers, so appends are never lost; each write carries an id recorded inside the
 * object, so an ambiguous retry (the PUT landed but its answer was lost) is never applied twice.
 */
export class SessionStore {
  readonly manifest: Manifest;
  /** The save pipeline (search redacts a query with it before it leaves for the embeddings API). */
  readonly pipeline: SavePipeline;
  private readonly listeners: SessionListener[];
  private readonly audit: AuditLog | undefined;
  private readonly onError: (what: string, err: unknown) => void;
  private readonly cache: SessionCache;
  private readonly queue: GroupQueue<WriteRequest, WriteResult>;
  private readonly writes: WriteLoop;
  private readonly markers: StandingMarkers;
  /** A bound above the revisions of the sessions deleted under each id: one created again starts above it. */
  private readonly floors: RevisionFloors;
  /** Commits whose log and audit records (and listeners) are still to run, batched per session. */
  private readonly records: Batcher<PendingCommit>;
  /** The checks after background records that the session still exists (shared with the search index). */
  readonly existence: ExistenceChecks;
  private readonly now: () => number;
  private readonly cleanupBatch: number;

  constructor(
    readonly objects: ObjectStore,
    options: SessionStoreOptions = {},
  ) {
    this.pipeline = options.pipeline ?? corePipeline;
    this.listeners = options.listeners ?? [];
    this.audit = options.audit;
    this.onError = options.onError ?? (() => undefined);
    this.cache = new SessionCache(options.cacheBytes ?? 64 * 1024 * 1024);
    this.now = options.now ?? Date.now;
    this.cleanupBatch = options.cleanupBatch ?? Infinity;
    this.records = new Batcher(
      (_, items) => this.recordBatch([...items]),
      options.recordLingerMs ?? 100,
      RECORD_BATCH_FULL,
    );
    this.existence = new ExistenceChecks(objects, options.existenceLingerMs ?? 0, (what, err) =>
      this.onError(what, err),
    );
    this.floors = new RevisionFloors(objects);
    const storageDeadlineMs = options.storageDeadlineMs ?? STORAGE_DEADLINE_MS;
    this.markers = new StandingMarkers(objects, {
      now: this.now,
      ...(options.markerIdleMs !== undefined ? { idleMs: options.markerIdleMs } : {}),
      // Without group commit (Workers, Lambda), a write never waits for another request's marker PUT.
      shareUnstored: options.groupCommit ?? true,
    });
    this.manifest = new Manifest(objects, (ns, id) => this.readSummary(ns, id), {
      now: this.now,
      settledMarkers: () => this.markers.settledNow(),
      unsettledMarkers: () => this.markers.unsettledNow(),
      healStale: (ns, id, since) => this.restoreAudit(ns, id, since),
      ...options.manifest,
    });
    this.writes = new WriteLoop({
      objects,
      cache: this.cache,
      pipeline: this.pipeline,
      markers: this.markers,
      now: this.now,
      maxContentionMs: options.maxContentionMs ?? 30_000,
      storageDeadlineMs,
      splitBytes: options.splitBytes ?? 256 * 1024,
      ...(options.segmentBytes ? { segmentBytes: options.segmentBytes } : {}),
      load: (ns, id, partial) => this.load(ns, id, partial),
      afterCommit: (ns, committed) => this.afterCommit(ns, committed),
      existence: this.existence,
      onError: (what, err) => this.onError(what, err),
    });
    // Plain appends queued behind a running write of the same session go out as one group commit (none
    // in a Workers bundle, whose queue runs each write alone: key-queue.ts).
    const run = (group: WriteRequest[]) => this.writes.writeGroup(group);
    this.queue = globalThis.SATCHEL_SHORT_LIVED
      ? new GroupQueue(run, () => false)
      : new GroupQueue(
          run,
          (req) =>
            req.op === 'append' &&
            req.expected === undefined &&
            !req.ctx.knownValues &&
            !req.ctx.receiptExtras &&
            !req.ctx.op &&
            !req.alone,
          {
            maxGroup: 16,
            grouped: options.groupCommit ?? true,
            // Writes waiting behind one storage did not answer are refused when it ends, so each answers
            // within about one storage deadline (until 2026-12-07 the Nth write queued on silent storage
            // answered after N x 8 s: review s61c). Storage that answers slowly gets three deadlines' wait
            // (under the CLI's 25 s) before a queued write is refused unsent.
            waitMs: 3 * storageDeadlineMs,
            stalled: storageSilent,
            refuse: (why) => notSent(why, 3 * storageDeadlineMs),
          },
        );
  }

  /**
   * Stores the records still lingering for more commits at once, and resolves when the work that follows
   * this process's writes so far (log records, audit records, listeners, the checks after them that the
   * session still exists, and the erasing they decide) has settled. Writes answer before it; the
   * runtime's drain, Lambda's entry and tests wait for it here.
   */
  async settled(): Promise<void> {
    await this.records.flush();
    await this.existence.flush();
    await this.markers.settled();
  }

  /** The same for one session's writes (read-your-writes, delete). */
  private settledSession(ns: string, id: string): Promise<void> {
    return this.records.flush(keys.session(ns, id));
  }

  /** Deletes this process's idle standing markers now (a server about to stop). */
  retireMarkers(): Promise<void> {
    return this.markers.retireIdle();
  }

  /** Adds a listener (search indexing registers itself after the store is built). */
  addListener(listener: SessionListener): void {
    this.listeners.push(listener);
  }

  /**
   * The session at `revision` of the incarnation created at `createdMs`: the cached copy when it is exactly
   * that, else storage; null when gone. A copy cached before a delete (by another process) can carry the
   * revision asked for (sessions created again before 2026-12-06 restarted at 1, and a create racing a delete
   * can start below its floor): the creation time tells them apart.
   */
  async getAt(
    ns: string,
    id: string,
    revision: number,
    createdMs: number,
  ): Promise<StoredSession | null> {
    assertSessionId(id);
    const cached = this.cache.get(keys.session(ns, id));
    if (
      isWhole(cached) &&
      cached.session.revision === revision &&
      Date.parse(cached.session.created_at) === createdMs // NaN (unreadable): storage answers
    )
      return cached.session;
    return (await this.load(ns, id))?.session ?? null;
  }

  /** The stored session; `not_found` when it does not exist. Always reads storage, never the cache. */
  async get(ns: string, id: string, ctx: RequestContext = {}): Promise<StoredSession> {
    return (await this.getStored(ns, id, ctx, false)).session;
  }

  /**
   * The stored session, with its public JSON as byte pieces when they come without encoding the messages
   * again (an HTTP GET sends them): cut from the object's bytes when it is stored whole, or built from the
   * cached encoding of its messages when it is a delta. A delta whose parts this process does not hold is
   * sent from their bytes without parsing them (`send`): `session` is then partial (its messages before
   * the parts' end are absent), and the cache keeps those bytes for the next read. `unchanged`: whether
   * the caller holds a revision already (a conditional GET, answered 304): then a delta's parts are not
   * read, and no public JSON is made.
   */
  async getStored(
    ns: string,
    id: string,
    ctx: RequestContext = {},
    send = true,
    unchanged?: (revision: number) => boolean,
  ): Promise<{ session: StoredSession; chunks: Uint8Array[] | null }> {
    assertSessionId(id);
    const found = await this.load(ns, id, false, send, unchanged);
    if (found && unchanged?.(found.session.revision))
      return { session: found.session, chunks: null };
    if (found?.chunks) return { session: found.session, chunks: found.chunks };
    if (found) {
      const { session, body } = found;
      const prior = this.cache.get(keys.session(ns, id))?.encoded;
      const from = body ? { body } : prior ? { prior } : null;
      return { session, chunks: from && publicChunks(session, from) };
    }
    // Listed but gone (deleted in the bucket directly): heal the manifest in the background. Only an
    // entry this process has listed: a 404 of any id must not read the whole manifest.
    const entry = this.manifest.listed(ns, id);
    const heal = async () => {
      if (!(await objectExists(this.objects, keys.session(ns, id))))
        this.healVanished(ns, entry!, ctx);
    };
    if (entry) (ctx.schedule ?? unattended)(heal());
    throw notFound(`session ${id} does not exist`);
  }

  /**
   * The most recently updated session, whole. A listed session whose object is gone (deleted in the
   * bucket behind Satchel's back, or a delete that crashed before its log record) is skipped, and its
   * delete is recorded in the background so the manifest heals.
   */
  async latest(ns: string, ctx: RequestContext = {}): Promise<StoredSession> {
    let before: ListPosition | undefined;
    for (let page = 0; page < 10; page++) {
      const query = { limit: 20, ...(before ? { before } : {}) };
      const { entries, more } = await this.manifest.list(ns, query, ctx.schedule);
      for (const entry of entries) {
        const found = await this.load(ns, entry.id);
        if (found) return found.session;
        this.healVanished(ns, entry, ctx);
      }
      const last = entries[entries.length - 1];
      if (!more || !last) throw notFound('there are no sessions in this namespace');
      before = { at: last.at, id: last.id };
    }
    throw unavailable('the session list changed while reading it; try again');
  }

  /** Metadata newest first, with keyset pagination. */
  async list(ns: string, options: ListOptions, ctx: RequestContext = {}) {
    const before = options.cursor ? decodeCursor(options.cursor) : undefined;
    const query = {
      limit: options.limit,
      ...(before ? { before } : {}),
      ...(options.updatedAfter !== undefined ? { updatedAfter: options.updatedAfter } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
    };
    const page = await this.manifest.list(ns, query, ctx.schedule);
    const last = page.entries[page.entries.length - 1];
    return {
      sessions: page.entries.map(summaryOf),
      next_cursor: page.more && last ? encodeCursor(last) : null,
    };
  }

  /** Creates a session; `conflict` when the id exists in this namespace. */
  async create(ns: string, body: CreateBody, ctx: WriteContext = {}): Promise<WriteResult> {
    if (body.id !== undefined) {
      assertSessionId(body.id);
      // An id becomes part of storage keys: one that holds a secret (the request's own too) is refused
      // rather than stored.
      if (this.looksSecret(body.id, ctx))
        throw badRequest('the id looks like a secret; choose another', [
          { path: 'id', message: 'looks like a secret' },
        ]);
    }
    const id = body.id ?? newSessionId(new Date(this.now()));
    const nowIso = new Date(this.now()).toISOString();
    const times = importedTimes(body, this.now());
    const draft: StoredSession = {
      id,
      created_at: times.created_at ?? times.updated_at ?? nowIso,
      updated_at: times.updated_at ?? times.created_at ?? nowIso,
      model: body.model ?? '',
      provider: body.provider ?? '',
      turns: 0,
      task: body.task,
      sandbox: body.sandbox ?? false,
      messages: body.messages ?? [],
      external_refs: mergeExternalRefs([], body.external_refs, nowIso, ctx.device ?? 'api'),
      untrusted_ingested: body.untrusted_ingested ?? false,
      episode_untrusted: body.episode_untrusted ?? false,
      episode_taint_tracked: false,
      revision: 1,
      ...(body.metadata ? { metadata: body.metadata } : {}),
    };
    assertInlineMedia(draft.messages);
    // An id the caller chose may have held sessions deleted since: this one starts above their revisions,
    // so no tag of theirs matches it. A generated id is new (it carries its time and random bits).
    const floor =
      body.id !== undefined ? () => this.floors.read(ns, id).then((f) => f.value) : undefined;
    return this.writes.create(ns, draft, ctx, floor);
  }

  /** Appends messages (and refs); without `expected` the append lands after whatever is stored. */
  async append(
    ns: string,
    id: string,
    body: AppendBody,
    expected: ExpectedRevision | undefined,
    ctx: WriteContext = {},
  ): Promise<WriteResult> {
    assertInlineMedia(body.messages);
    const fingerprint = await this.fingerprint(ctx, ['append', body]);
    return this.mutate({
      op: 'append',
      ns,
      id,
      expected,
      ctx,
      fingerprint,
      alone: !!body.external_refs?.length,
      build: (cur, nowIso) => ({
        ...cur,
        messages: [...cur.messages, ...body.messages],
        external_refs: mergeExternalRefs(
          cur.external_refs,
          body.external_refs,
          nowIso,
          ctx.device ?? 'api',
        ),
      }),
    });
  }

  /**
   * Appends a model turn (assistant and tool messages) and records the model and provider it used, in one
   * write that lands after whatever is stored. A repeated Idempotency-Key returns the first turn's record.
   * `incarnation`: the token (`satchel.i`, which every create writes) of the session the turn answers; a
   * session deleted and created again under the id meanwhile is another one, and the turn is not stored
   * in it (`not_found`, as when the session was deleted). Until 2026-12-05 it was stored there.
   */
  async appendTurn(
    ns: string,
    id: string,
    /** `read`: the model and provider the session named when the turn began. */
    turn: {
      messages: Message[];
      model: string;
      provider: string;
      read?: { model: string; provider: string };
    },
    ctx: WriteContext,
    incarnation: unknown,
    /** The message the turn answers, as stored: a pop, trim or PUT that removed it meanwhile refuses it. */
    question?: Pick<Message, 'role' | 'content'>,
    /** Where it was stored (its index then): it can only be there or earlier, never after. */
    questionAt = Infinity,
  ): Promise<WriteResult> {
    // No fingerprint: a repeat of a turn is never "a different request", whatever the model said.
    return this.mutate({
      op: 'append',
      ns,
      id,
      ctx,
      build: (cur) => {
        if (cur.satchel?.['i'] !== incarnation) throw notFound(`session ${id} does not exist`);
        // A reply to a message the session no longer holds answers nothing in it (a partial copy, whose
        // older messages are absent, cannot tell: the turn goes in). Every slot is tested: `some` skips a
        // partial copy's empty ones, and its turn was refused as "removed" (review s59m).
        const held = (m: Message | undefined) =>
          !m || (m.role === question!.role && m.content === question!.content);
        const holds = (all: Message[]) => {
          for (let i = 0; i < all.length; i++) if (held(all[i])) return true;
          return false;
        };
        if (question && !holds(cur.messages))
          throw new SatchelError(
            'conflict',
            `the message this turn answered was removed from session ${id} while the model ran ` +
              '(a pop, trim or replace); the reply was not stored',
            { turn: 'removed' },
          );
        // A model or provider another write set while the model ran stays (the next turn uses it).
        const kept =
          turn.read && (cur.model !== turn.read.model || cur.provider !== turn.read.provider);
        return {
          ...cur,
          ...(kept ? {} : { model: turn.model, provider: turn.provider }),
          // The question moves to just before its reply when others wrote after it while the model ran:
          // [uA, uB, aA] paired B's question with A's answer for every later reader (review s60e).
          messages: [...questionLast(cur.messages, question, questionAt), ...turn.messages],
        };
      },
    });
  }

  /** Replaces the session's content; the caller must hold the current revision. */
  async replace(
    ns: string,
    id: string,
    body: ReplaceBody,
    expected: ExpectedRevision,
    ctx: WriteContext = {},
  ): Promise<WriteResult> {
    if (body.id !== undefined && body.id !== id)
      throw badRequest('the body id does not match the path', [
        { path: 'id', message: `expected "${id}"` },
      ]);
    assertInlineMedia(body.messages);
    const fingerprint = await this.fingerprint(ctx, ['replace', body]);
    return this.mutate({
      op: 'replace',
      ns,
      id,
      expected,
      ctx,
      fingerprint,
      build: (cur, nowIso) => ({
        ...cur,
        task: body.task,
        model: body.model ?? cur.model,
        provider: body.provider ?? cur.provider,
        messages: body.messages,
        // Refs are add-only: a replace can add refs but never drop stored ones.
        external_refs: mergeExternalRefs(
          cur.external_refs,
          body.external_refs ?? undefined,
          nowIso,
          ctx.device ?? 'api',
        ),
        sandbox: body.sandbox ?? cur.sandbox,
        untrusted_ingested: body.untrusted_ingested ?? cur.untrusted_ingested,
        episode_untrusted: body.episode_untrusted ?? cur.episode_untrusted,
        ...(body.metadata ? { metadata: body.metadata } : {}),
      }),
    });
  }

  /** Keeps the system message and the newest messages, `keep` in all, never splitting a tool group. */
  async trim(
    ns: string,
    id: string,
    keep: number,
    ctx: WriteContext = {},
    expected?: ExpectedRevision,
  ) {
    let before = 0;
    let after = 0;
    const result = await this.mutate({
      op: 'trim',
      ns,
      id,
      // Its write record keeps the counts, for a replay (one without them answers the session as it is):
      // `after` as stored, since the size cap may drop more than the trim did (the trim's own record can
      // outgrow what it freed; until 2026-12-06 the answer counted only the trim's cut: review s54c).
      ctx: {
        ...ctx,
        receiptExtras: (saved) => {
          after = saved.messages.length;
          return { trimmed: [before, after] };
        },
      },
      expected,
      fingerprint: await this.fingerprint(ctx, ['trim', keep]),
      build: (cur) => {
        before = cur.messages.length;
        const messages = trimMessages(cur.messages, keep);
        after = messages.length;
        return after === before ? null : { ...cur, messages };
      },
    });
    if (result.replayed) {
      const n = result.session.messages.length;
      [before, after] = (result.receipt as { trimmed?: [number, number] }).trimmed ?? [n, n];
    }
    const { receipt, replayed } = result;
    return { id, before, after, dropped: before - after, receipt, replayed };
  }

  /**
   * Removes the newest `count` messages (an agent framework's popItem): one write that lands after
   * whatever is stored, or only on `expected`. Answers the removed messages, oldest first.
   */
  async pop(
    ns: string,
    id: string,
    count: number,
    expected: ExpectedRevision | undefined,
    ctx: WriteContext = {},
  ): Promise<WriteResult & { popped: Message[] }> {
    let popped: Message[] = [];
    const result = await this.mutate({
      op: 'pop',
      ns,
      id,
      expected,
      ctx,
      fingerprint: await this.fingerprint(ctx, ['pop', count]),
      build: (cur) => {
        popped = cur.messages.slice(Math.max(0, cur.messages.length - count));
        if (popped.length === 0) return null;
        return { ...cur, messages: cur.messages.slice(0, cur.messages.length - popped.length) };
      },
    });
    // A replay answers the receipt only: what it removed is not kept.
    return { ...result, popped: result.replayed ? [] : popped };
  }

  /**
   * The record a write with this Idempotency-Key left in `session` (as read from `ns`/`id`), or stored out
   * of the object since (docs/design.md, "Keyed writes"); undefined when there is none in the window.
   */
  async keyedRecord(
    ns: string,
    id: string,
    session: StoredSession,
    idempotencyKey: string,
  ): Promise<WriteRecord | undefined> {
    const now = this.now();
    const inObject = await keyedWrite(session, idempotencyKey, now);
    if (inObject) return inObject;
    const k = 'k:' + (await sha256Hex(idempotencyKey));
    const incarnation = incarnationOf(session);
    return lookUpKeyRecord(this.objects, ns, id, incarnation, k, now, filtersOf(session.satchel));
  }

  /**
   * Deletes a session and its manifest entry; `not_found` when it does not exist. `unavailable` when the
   * object went but not all of its records could be erased: a DELETE again erases them.
   */
  async delete(
    ns: string,
    id: string,
    ctx: WriteContext = {},
    expected?: ExpectedRevision,
  ): Promise<void> {
    const why = await this.deleteObject(ns, id, ctx, expected);
    if (why !== undefined) throw notErased(id, why);
  }

  /**
   * Deletes the session object, then everything that holds copies of it: answers once the object is
   * gone, with why erasing its records failed (undefined when they all went).
   */
  private async deleteObject(
    ns: string,
    id: string,
    ctx: WriteContext,
    expected?: ExpectedRevision,
    chosen?: Chosen,
    again = 0,
  ): Promise<unknown> {
    assertSessionId(id);
    const key = keys.session(ns, id);
    const writeId = randomHex(12);
    // What earlier writes of this process still have to store (log and audit records) lands first, so
    // that the purge below finds it.
    await this.settledSession(ns, id);
    // An id that looks like a secret gets no marker (a key holding it) before its object is found.
    if (this.looksSecret(id, ctx) && !(await objectExists(this.objects, key)))
      return this.goneAlready(ns, id, ctx);
    const pending = await this.manifest.markPending(ns, id, writeId);
    // Nothing is deleted before the DELETE below: a refusal on the way takes the marker back.
    const refuse = async (err: unknown): Promise<never> => {
      await this.manifest.clearPending(pending);
      throw err;
    };
    const [found, floor] = await Promise.all([
      this.objects.get(key),
      this.floors.read(ns, id),
    ]).catch(refuse);
    if (!found) {
      await this.manifest.clearPending(pending);
      return this.goneAlready(ns, id, ctx);
    }
    const { stored, listed } = await this.toDelete(ns, id, found.body, chosen?.entry).catch(refuse);
    // `If-Match` holds against the revision just read (storage has no conditional DELETE everywhere).
    if (!revisionMatches(expected, stored.revision))
      await refuse(
        preconditionFailed(
          stored.revision < 0
            ? 'the stored session is unreadable and shows no revision: delete it without If-Match'
            : revisionMismatch(expected!, stored.revision),
        ),
      );
    // A cleanup's session updated since its view (no longer older than its cutoff) stays.
    if (Date.parse(stored.updated_at) >= (chosen?.cutoff ?? Infinity))
      await refuse(notFound(`session ${id} was updated since`));
    // Before the object goes: a create under the id, which needs the key free, then starts above it.
    // Above what it read by a margin: writes that land before the DELETE are answered, then deleted too.
    // An unreadable object's revision is the one listed for it, or at least the floor it was created above.
    const reached = stored.revision < 0 ? Math.max(listed, floor.value) : stored.revision;
    await this.floors.raise(ns, id, reached + FLOOR_MARGIN, floor).catch(refuse);
    await this.objects
      .delete(key)
      .catch((err: unknown) => this.confirmDeleted(ns, id, stored, err, ctx));
    this.cache.forget(key);
    const erased = await this.eraseCopies(ns, id, stored, ctx, writeId);
    // A commit whose `If-Match` was checked before the DELETE can land after it on radosgw (its conditional
    // PUT is not atomic with a DELETE): the session is back, with the records of that write. It is
    // deleted again, records and all: the commit came first (review s53c; docs/design.md, "Deleting").
    if (again < 2 && (await this.cameBack(key, stored)))
      return this.deleteObject(ns, id, ctx, undefined, undefined, again + 1).catch(
        (err: unknown) => {
          if (!SatchelError.is(err, 'not_found')) throw err;
        },
      );
    return erased;
  }

  /**
   * The session a delete is about to remove, from its object. A corrupt object (a half-copied file: GET
   * answers 500) is deleted too, unless `If-Match` names a revision it cannot show: nothing else could
   * remove it. It shows no times either: its `updated_at` is the one the manifest lists, the one a
   * cleanup chose it by (`chosen`; until 2026-12-06 a cleanup refused it, and answered 503 "try again",
   * or 500 once it was the only old one, on every run: review s59a). `listed`: the listed revision.
   */
  private async toDelete(
    ns: string,
    id: string,
    body: Uint8Array,
    chosen?: ManifestEntry,
  ): Promise<{ stored: StoredSession; listed: number }> {
    try {
      return { stored: decodeStored(body, keys.session(ns, id)).session, listed: 0 };
    } catch (err) {
      if (!SatchelError.is(err, 'corrupt')) throw err;
      // Its delete is logged after the version the manifest lists, whose time may be ahead of this clock.
      // (Settled: it leaves this delete's own marker to its log record, not to a read of this object.)
      const view = chosen
        ? { entries: [chosen] }
        : await this.manifest
            .view(ns, unattended, { settled: true })
            .catch(() => ({ entries: [] as ManifestEntry[] }));
      const entry = view.entries.find((e) => e.id === id);
      const stored = { revision: -1, updated_at: entry?.updated_at ?? '' } as StoredSession;
      return { stored, listed: entry?.revision ?? 0 };
    }
  }

  /**
   * After a session object's DELETE: everything that erases its copies runs, whatever fails. A log record
   * that could not be stored is healed from the pending marker, which then stays. Gives why erasing its
   * records failed (undefined when they all went).
   */
  private async eraseCopies(
    ns: string,
    id: string,
    stored: StoredSession,
    ctx: WriteContext,
    writeId: string,
  ): Promise<unknown> {
    const at = Math.max(this.now(), Date.parse(stored.updated_at) + 1 || 0);
    // A large session's bases (they hold its messages too; a fold racing this delete deletes its own),
    // its keyed records stored out of the object and its audit records; a session created again under
    // the id meanwhile keeps its own. Settled before the log record: a process that stops before it leaves
    // an unlogged marker, whose heal erases them (a record stored first covered it, and none ran: s65a).
    const [erased] = await Promise.allSettled([
      deleteParts(this.objects, ns, id, { records: true, now: this.now() }),
    ]);
    const [logged] = await Promise.allSettled([this.manifest.recordDelete(ns, id, at, writeId)]);
    if (logged.status === 'fulfilled') {
      await this.afterDelete(ns, id, ctx);
      // Its task leaves the manifest's pages and log records too; a cleanup's deletes share one purge.
      (ctx.schedule ?? unattended)(
        this.manifest.purge(ns, [id]).catch((err) => this.onError('manifest not purged', err)),
      );
    } else {
      this.onError('delete log record not stored', logged.reason);
      this.purgeUnlogged(ns, id, ctx, at);
    }
    return erased.status === 'rejected' ? erased.reason : undefined;
  }

  /** Whether the key holds the deleted session again (its incarnation: not a session created since). */
  private async cameBack(key: string, deleted: StoredSession): Promise<boolean> {
    if (deleted.revision < 0) return false;
    const found = await this.objects.get(key).catch(() => null);
    if (!found) return false;
    try {
      return incarnationOf(decodeStored(found.body, key).session) === incarnationOf(deleted);
    } catch {
      return false;
    }
  }

  /** The listeners' work after a delete (the search indexes erase the session). */
  private async afterDelete(ns: string, id: string, ctx: WriteContext): Promise<void> {
    for (const l of this.listeners) {
      try {
        await l.afterDelete?.(ns, id, ctx);
      } catch (err) {
        this.onError('a listener failed after a delete', err);
      }
    }
  }

  /**
   * Erasing for a delete no log record tells of (it failed, or the delete's answer was lost): the manifest's
   * purge first (it finds the object missing and writes the tombstone), then the indexes', whose view of
   * what is live comes from the manifest: only once the manifest's purge succeeded, retried until then
   * (review s67b: run after a failed one, an index kept the session as live, with its text, for good).
   * `at`: the delete's time (as of now, once the object is found gone), up to which a retry erases when
   * the id was created again meanwhile (review s67j).
   */
  private purgeUnlogged(ns: string, id: string, ctx: WriteContext, at = this.now()): void {
    (ctx.schedule ?? unattended)(
      eraseRetried(
        () => this.manifest.purge(ns, [id], at).then(() => this.afterDelete(ns, id, ctx)),
        (err, last) => this.onError(`manifest not purged${last ? ' (gave up)' : ''}`, err),
      ),
    );
  }

  /**
   * A delete that finds no object: it erases what an earlier delete left when its erasing failed after the
   * object went (its answer said so, or was lost), then answers 404 (503 while that erasing fails).
   */
  private async goneAlready(ns: string, id: string, ctx: WriteContext): Promise<never> {
    // A pending marker of the id: a write without its log record, maybe a delete whose erasing never ran
    // (its answer was lost). One LIST, and nothing written for an id that never existed. The purges start
    // whatever happens to the parts' erasing (until 2026-12-06 a failure there answered 503 first, and
    // they waited for a retry the client might never make: review s56e).
    const [erased, marked] = await Promise.all([
      deleteParts(this.objects, ns, id, { records: true, now: this.now() }).then(
        () => null,
        (err: unknown) => ({ err }),
      ),
      this.objects.list(keys.pending(ns, id, ''), { limit: 1 }).catch(() => null),
    ]);
    if (marked?.objects.length) this.purgeUnlogged(ns, id, ctx);
    // Not `notErased`: this call found no session, so its 503 must not say one went (`deleted`), which a
    // client takes for its own delete's doing (until 2026-12-06 a typo'd id's delete resolved after a
    // storage blip here, review s58g).
    if (erased)
      throw unavailable(
        `session ${id} does not exist, but erasing what an earlier delete may have left of it failed ` +
          `(${errorText(erased.err)}): delete it again`,
      );
    throw notFound(`session ${id} does not exist`);
  }

  /**
   * The session object's DELETE failed: when its answer was lost, it may have landed. Returns when the
   * object is gone, or holds a session created again under the id (another incarnation): the delete
   * happened. Otherwise, or when the object cannot be read, rethrows `err`.
   */
  private async confirmDeleted(
    ns: string,
    id: string,
    stored: StoredSession,
    err: unknown,
    ctx: WriteContext,
  ): Promise<void> {
    if (!StorageUnavailableError.is(err)) throw err;
    const now = await this.objects.get(keys.session(ns, id)).catch(() => {
      // Unknown: the delete may have landed. Find out in the background, and erase then.
      if (err.mayHaveLanded) this.confirmLater(ns, id, stored, ctx);
      return Promise.reject(err);
    });
    if (now && sameSession(now.body, stored)) throw err;
  }

  /**
   * A delete whose answer was lost and whose object could not be read again (it answered 503): read again a
   * few times in the background, and when the object is gone after all, erase what holds copies of it
   * (a delete of the id from another process does the same: `goneAlready`).
   */
  private confirmLater(ns: string, id: string, stored: StoredSession, ctx: WriteContext): void {
    const key = keys.session(ns, id);
    const check = async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
        const read = await this.objects.get(key).then(
          (found) => ({ found }),
          () => null,
        );
        if (!read) continue; // still unreadable
        if (read.found && sameSession(read.found.body, stored)) return; // not deleted
        this.cache.forget(key);
        // The purges run whatever happens to the parts' erasing, which runs again when it fails (until
        // 2026-12-06 one failure here skipped both, and the text stayed: review s56a).
        await eraseRetried(
          () => deleteParts(this.objects, ns, id, { records: true, now: this.now() }),
          (err, last) =>
            this.onError(`parts of a deleted session not erased${last ? ' (gave up)' : ''}`, err),
        );
        return this.purgeUnlogged(ns, id, ctx);
      }
    };
    (ctx.schedule ?? unattended)(check().catch((err) => this.onError('delete not confirmed', err)));
  }

  /**
   * Deletes every session whose updated_at is older than `days` days (0: all of them), oldest first, at
   * most `cleanupBatch` of them: `remaining` (when some are left) says how many the next call will find.
   * When some deletes fail, the others still run, and the answer says how many went (503): a retry finds
   * only what is left. The ids of deleted sessions whose records could not all be erased are in that
   * answer: no longer listed, they are erased by a delete of each.
   */
  async cleanup(
    ns: string,
    days: number,
    ctx: WriteContext = {},
  ): Promise<{ deleted: number; remaining?: number }> {
    const cutoff = days === 0 ? Infinity : this.now() - days * 86_400_000;
    const view = await this.manifest.view(ns, ctx.schedule);
    const older = view.entries.filter((e) => e.at < cutoff).sort((a, b) => a.at - b.at);
    const doomed = older.slice(0, this.cleanupBatch);
    const remaining = older.length - doomed.length;
    const failures: unknown[] = [];
    const left: string[] = [];
    const unsure: string[] = [];
    const results = await mapLimit(doomed, 8, (e) =>
      this.deleteObject(ns, e.id, ctx, undefined, { cutoff, entry: e }).then(
        (why) => {
          if (why !== undefined) left.push(e.id);
          return 1;
        },
        (err: unknown) => {
          // Its delete's answer was lost and the object could not be read again: a delete of the id
          // tells (204 or 404, and either erases what is left), where this cleanup no longer lists it.
          if (StorageUnavailableError.is(err) && err.mayHaveLanded) unsure.push(e.id);
          else if (!SatchelError.is(err, 'not_found')) failures.push(err);
          return 0;
        },
      ),
    );
    const deleted = results.reduce((a: number, b: number) => a + b, 0);
    if (failures.length + left.length + unsure.length === 0)
      return remaining ? { deleted, remaining } : { deleted };
    if (failures.length === doomed.length) throw failures[0];
    const said = [`cleanup deleted ${deleted} of ${doomed.length} sessions`];
    if (remaining) said.push(`${remaining} more are left for the next cleanup`);
    if (failures.length)
      said.push(`${failures.length} could not be deleted (${errorText(failures[0])}): try again`);
    if (unsure.length)
      said.push(
        `${unsure.length} may have been deleted (storage did not answer): delete each again: ${unsure.join(', ')}`,
      );
    if (left.length)
      said.push(`${left.length} deleted keep records: delete each again: ${left.join(', ')}`);
    throw unavailable(said.join('; '), 1);
  }

  /** The session's audit records; `not_found` when the session does not exist. */
  async auditRecords(ns: string, id: string): Promise<AuditRecord[]> {
    assertSessionId(id);
    await this.settledSession(ns, id); // this process's records of its answered writes first
    if (!(await objectExists(this.objects, keys.session(ns, id))))
      throw notFound(`session ${id} does not exist`);
    return this.audit ? this.audit.list(ns, id) : [];
  }

  /** The fingerprint of a keyed request (a key reused for another request is 422). */
  private async fingerprint(ctx: WriteContext, request: unknown) {
    return ctx.idempotencyKey ? fingerprintOf(ctx.idempotencyKey, request) : undefined;
  }

  /** One write through the write loop, after every earlier write of this process to the same session. */
  private async mutate(req: WriteRequest): Promise<WriteResult> {
    assertSessionId(req.id);
    await this.assertNamedSafely(req.ns, req.id, req.ctx);
    return this.queue.submit(keys.session(req.ns, req.id), req);
  }

  /**
   * A write of an id that looks like a secret (a create refuses such ids) puts nothing in a key
   * (its marker) unless that session exists: 404 first. The check is a scan of the id alone.
   */
  private async assertNamedSafely(ns: string, id: string, ctx: WriteContext): Promise<void> {
    if (this.looksSecret(id, ctx) && !(await objectExists(this.objects, keys.session(ns, id))))
      throw notFound(`session ${id} does not exist`);
  }

  /** Whether a session id holds what redaction would remove (a rule's match, or a known value). */
  private looksSecret(id: string, ctx: WriteContext): boolean {
    return this.pipeline.redactText(id, ctx.knownValues) !== id;
  }

  /** Records the delete of a listed session whose object is gone, after its last listed version. */
  private healVanished(ns: string, entry: ManifestEntry, ctx: RequestContext): void {
    const work = this.manifest.recordDelete(ns, entry.id, entry.at + 1, randomHex(12));
    (ctx.schedule ?? unattended)(work);
  }

  /**
   * Reads a session object straight from storage, refreshing the cache; a delta is merged with its base
   * (from the cached copy when that holds the same base). `body` is the object's bytes when it is whole.
   * With `partial` (an append's read), a delta whose parts the cache does not hold is not merged: the
   * copy is partial (`held`: its messages before the parts' end are absent). With `send` (a GET's read),
   * such a delta comes as a partial copy with its public JSON (`chunks`) cut from the parts' bytes
   * (`sendParts`). A delta whose revision is `unchanged` comes as a partial copy too.
   */
  private async load(
    ns: string,
    id: string,
    partial = false,
    send = false,
    unchanged?: (revision: number) => boolean,
  ): Promise<(CachedSession & { body?: Uint8Array; chunks?: Uint8Array[] }) | null> {
    const key = keys.session(ns, id);
    for (let attempt = 0; ; attempt++) {
      const epoch = this.cache.epoch;
      const found = await this.objects.get(key);
      if (!found) {
        this.cache.drop(key);
        return null;
      }
      const form = decodeStored(found.body, key);
      if (!form.base) {
        const entry = { etag: found.etag, session: form.session, bytes: found.body.byteLength };
        this.cache.putRead(key, entry, epoch);
        return { ...entry, body: found.body };
      }
      const { base, segs } = form;
      const cached = this.cache.get(key);
      const holdsParts = isWhole(cached) && cached.base?.key === base.key;
      if ((partial || unchanged?.(form.session.revision)) && !holdsParts) {
        const held = heldMessages(base, segs);
        const messages = new Array<Message>(held).concat(form.session.messages);
        const session = { ...form.session, messages };
        const raw = rawNamed(cached?.raw, { base, segs }); // a GET's bytes of parts still named
        const entry = { etag: found.etag, session, bytes: form.bytes, base, segs, held };
        this.cache.putRead(key, raw ? { ...entry, raw } : entry, epoch);
        return entry;
      }
      // A GET cuts its answer from the parts' bytes; a session it cannot cut is parsed from them.
      const bodies = send && !holdsParts ? await this.partBodies(key, base, segs) : undefined;
      const read = { form: { ...form, base, segs }, etag: found.etag, epoch };
      const sent = bodies && this.sendParts(key, read, bodies);
      if (sent) return sent;
      const merged =
        bodies === null ? null : await this.withParts(key, form.session, base, segs, bodies);
      if (merged) {
        const { session, encoded } = merged;
        const entry = { etag: found.etag, session, bytes: form.bytes, base, segs };
        this.cache.putRead(key, encoded ? { ...entry, encoded } : entry, epoch);
        return entry;
      }
      // A part went: a newer write replaced it after this read. Read the session again.
      if (attempt >= 3) throw unavailable('the session changed while it was read; try again', 1);
    }
  }

  /**
   * A delta's public JSON cut from its parts' bytes (`bodies`), not parsed (`publicChunksOfParts`), as a
   * partial copy, which the cache keeps with those bytes: the next read of this process reuses them (a
   * GET cuts from them again, a whole read parses them) instead of reading them again. Undefined when
   * the bytes cannot be sent as they are (the usual read parses them).
   */
  private sendParts(
    key: string,
    read: { form: Extract<StoredObjectForm, { base: BaseRef }>; etag: string; epoch: number },
    bodies: PartBodies,
  ): (CachedSession & { chunks: Uint8Array[] }) | undefined {
    const { form, etag, epoch } = read;
    const { session: head, base, segs } = form;
    const chunks = publicChunksOfParts(head, base, bodies.base, segs, bodies.segs);
    if (!chunks) return undefined;
    const held = heldMessages(base, segs);
    const session = { ...head, messages: new Array<Message>(held).concat(head.messages) };
    const raw = new Map(
      [base, ...segs].map((ref, i) => [ref.key, i ? bodies.segs[i - 1]! : bodies.base]),
    );
    const entry = { etag, session, bytes: form.bytes, base, segs, held, raw };
    // A copy of a later revision (this process wrote meanwhile) stays.
    if ((this.cache.get(key)?.session.revision ?? 0) <= head.revision)
      this.cache.putRead(key, entry, epoch);
    return { ...entry, chunks };
  }

  /**
   * The bytes of a delta's parts: those the cached copy keeps (a GET's, `raw`), the others read in
   * parallel; null when one is gone.
   */
  private async partBodies(
    key: string,
    base: BaseRef,
    segs: readonly SegRef[],
  ): Promise<PartBodies | null> {
    const raw = this.cache.get(key)?.raw;
    const found = await Promise.all(
      [base, ...segs].map(
        (ref) => raw?.get(ref.key) ?? this.objects.get(ref.key).then((f) => f?.body),
      ),
    );
    if (found.some((b) => !b)) return null;
    const [first, ...rest] = found as Uint8Array[];
    return { base: first!, segs: rest };
  }

  /**
   * The whole session from a delta's head, its base and its segments (null when one is gone), with the
   * encoding of (a prefix of) its messages when there is one to reuse: the cached copy's, or the parts'
   * own bytes, so that a GET and the next fold need not encode them again. Parts the cached copy names
   * too are not read again (they never change), nor are those in `read` (a GET's).
   */
  private async withParts(
    key: string,
    head: StoredSession,
    base: BaseRef,
    segs: readonly SegRef[],
    read?: PartBodies,
  ): Promise<{ session: StoredSession; encoded?: EncodedMessages | undefined } | null> {
    const cached = this.cache.get(key);
    const same = isWhole(cached) && cached.base?.key === base.key;
    let reused = 0;
    while (same && reused < segs.length && cached.segs?.[reused]?.key === segs[reused]!.key)
      reused++;
    const fetched = segs.slice(reused);
    let baseBody: Uint8Array | undefined;
    let bodies: Uint8Array[];
    if (same) {
      const found = await Promise.all(fetched.map((ref) => this.objects.get(ref.key)));
      if (found.some((f) => !f)) return null;
      bodies = found.map((f) => f!.body);
    } else {
      // Every part, from a GET's partial copy where it keeps their bytes.
      const all = read ?? (await this.partBodies(key, base, segs));
      if (!all) return null;
      [baseBody, bodies] = [all.base, all.segs];
    }
    const runs = fetched.map((ref, i) => decodeSegment(bodies[i]!, ref));
    // The messages read from the cache (the base's, and the segments both name), or the base's own.
    const n = segs.slice(0, reused).reduce((n, s) => n + s.messages, base.messages);
    const stored = same ? null : decodeBase(baseBody!, base.key);
    const session = stored
      ? mergeParts(head, stored, base, runs)
      : { ...head, messages: cached!.session.messages.slice(0, n).concat(...runs, head.messages) };
    const prior = stored ? messagesOf(baseBody!, base.json, stored.messages) : cached!.encoded;
    // That encoding stays a prefix when it covers no more than the messages read from the cache.
    if (!prior || prior.messages.length > n) return { session };
    if (prior.messages.length < n || !bodies.length) return { session, encoded: prior };
    const kept = n + fetched.reduce((k, s) => k + s.messages, 0);
    return { session, encoded: lazyJoin(session.messages.slice(0, kept), prior.json, bodies) };
  }

  /** The manifest's view of one session, read from its object (used for verification and rebuilds). */
  private async readSummary(ns: string, id: string): Promise<ManifestEntry | null> {
    const found = await this.load(ns, id, true); // the fields, not the messages
    return found ? entryOf(found.session, found.bytes) : null;
  }

  /**
   * After a session write landed (the write has answered): its manifest log record, one audit record
   * per request, then the listeners. True when the log record is stored, so the write's standing marker
   * may go; otherwise the marker stays and the manifest heals from the object.
   */
  private afterCommit(ns: string, committed: Committed): Promise<AfterCommit> {
    this.manifest.noteWrite(ns);
    const slot = keys.session(ns, committed.session.id);
    const item: PendingCommit = { ns, committed, logged: false, settled: false };
    return this.records.add(slot, [item]).then(() => ({
      logged: item.logged,
      settled: item.settled,
    }));
  }

  /** The records of a batch of commits to one session key (`recordCommits`, per incarnation). */
  private async recordBatch(items: PendingCommit[]): Promise<void> {
    // Commits to a session deleted and created again under its id within the batch (another
    // incarnation) are recorded apart, in the order they landed: each has its newest version.
    const byIncarnation = new Map<string, PendingCommit[]>();
    for (const item of items) {
      const incarnation = incarnationOf(item.committed.session);
      const group = byIncarnation.get(incarnation);
      if (group) group.push(item);
      else byIncarnation.set(incarnation, [item]);
    }
    for (const group of byIncarnation.values()) await this.recordCommits(group);
  }

  /**
   * The records of commits of one session (one incarnation), together: the listeners, commit by commit
   * (the search index's record goes alongside), one log record (the newest version is all the manifest
   * needs) and one audit object holding every request's record. None when this process has since
   * committed on a session created again under the id: the delete of this one erased what it had, and
   * nothing more of it is stored.
   */
  private async recordCommits(items: PendingCommit[]): Promise<void> {
    items.sort((a, b) => a.committed.session.revision - b.committed.session.revision);
    const { ns } = items[0]!;
    const newest = items[items.length - 1]!.committed;
    const key = keys.session(ns, newest.session.id);
    const since = newest.landedAt ?? Infinity;
    if (this.existence.knownGone(key, incarnationOf(newest.session), since)) {
      for (const item of items) item.logged = item.settled = true; // nothing to store: its marker may go
      return;
    }
    // Their checks share one LIST where checks would LIST at once (existence.ts, `hold`); the index
    // records the listeners store hold the session too, and go alongside the log and audit records.
    const release = this.existence.hold(key);
    try {
      for (const { committed: c } of items) {
        const change = {
          op: c.op,
          added: c.added,
          ...(c.held !== undefined ? { held: c.held } : {}),
        };
        for (const l of this.listeners)
          Promise.resolve()
            .then(() => l.afterWrite?.(ns, c.session, c.receipt, c.writes[0]!.ctx, change))
            .catch((err) => this.onError('a listener failed after a write', err));
      }
      const audit = this.storeAudit(ns, items);
      // A log record that cannot be stored is healed from the write's pending marker, which stays.
      const entry = entryOf(newest.session, newest.receipt.bytes);
      const logKey = keys.log(ns, entry.at, newest.writeId);
      const scrub = scrubDue(items);
      // A create among them: the entry's incarnation began with this process's commits, after any delete.
      const first = items.some((i) => i.committed.first);
      const logged = this.manifest.recordPut(ns, entry, newest.writeId, first).then(
        () => true,
        (err) => void this.onError('log record not stored; the marker heals it', err),
      );
      const [stored, auditStored] = await Promise.all([logged, audit.stored]);
      // Text the entry no longer holds leaves the manifest's older entries too, once this one is logged.
      if (scrub && stored)
        scheduleFor(
          items.flatMap(({ committed }) => committed.writes),
          this.scrubOlder(ns, entry),
        );
      else if (scrub) this.relogThenScrub(ns, newest, entry, newest.writeId, first);
      for (const item of items) {
        item.logged = stored === true;
        item.settled = item.logged && auditStored === true;
      }
      // The check runs on as background work of its own: read-your-writes and a delete wait for the
      // records, not for it.
      const erased = this.existence.follow(this.eraseIfDeleted(ns, newest, logKey, audit.key()));
      scheduleFor(
        items.flatMap(({ committed }) => committed.writes),
        erased,
      );
    } finally {
      release();
    }
  }

  /**
   * Stores the audit records of a commit's writes. The records' names are known before their PUTs: one
   * that failed may have landed (its answer lost), so the check after them (`key`) covers it too. A
   * refused one is stored again in the background (1 s, 2 s, 4 s …; the same name: one object), each later
   * landing checked as well; only a writer that stopped first leaves it to the marker's heal, whose write
   * records a burst may have pruned (review s68b). `stored`: true when the first attempt stored them.
   */
  private storeAudit(
    ns: string,
    items: PendingCommit[],
  ): { stored: Promise<unknown>; key: () => string | undefined } {
    const newest = items[items.length - 1]!.committed;
    const entries = items.flatMap(({ committed }) =>
      committed.writes.flatMap(({ record }) => {
        const audit = auditOf(record);
        return audit ? [{ record: audit, writeKey: record.k }] : [];
      }),
    );
    let key: string | undefined;
    let again = false;
    const stored = this.audit
      ? eraseRetried(
          async () => {
            await this.audit!.recordAll(ns, newest.session.id, entries, (k) => (key = k));
            if (again) void this.existence.follow(this.eraseIfDeleted(ns, newest, undefined, key));
          },
          (err, last) => {
            again = true;
            this.onError(`audit record not stored${last ? ' (gave up)' : ''}`, err);
          },
        )
      : Promise.resolve(true);
    return { stored, key: () => key };
  }

  /** The manifest's scrub of the entries older than `entry` (text a write removed). */
  private scrubOlder(ns: string, entry: ManifestEntry): Promise<void> {
    return this.manifest
      .scrub(ns, entry.id, entry.at)
      .catch((err) => this.onError('manifest not scrubbed of an older version', err));
  }

  /**
   * A write that removed text whose log record was refused: the scrub waits for its log record (the
   * entries before it go, never the newest), so the record is stored again in the background after 1 s,
   * 2 s, 4 s … (`eraseRetried`), checked as any record is (a delete, or a later removal, may have come
   * meanwhile), then the scrub runs; when every attempt fails, the scrub runs all the same (settled views
   * then miss the session until its marker heals). Until 2026-12-06 no scrub ran, and the older entries'
   * text stayed in the manifest's pages (review s56a).
   */
  private relogThenScrub(
    ns: string,
    newest: Committed,
    entry: ManifestEntry,
    writeId: string,
    first: boolean,
  ): void {
    const logKey = keys.log(ns, entry.at, writeId);
    const relog = async () => {
      await this.manifest.recordPut(ns, entry, writeId, first);
      void this.existence.follow(this.eraseIfDeleted(ns, newest, logKey));
      void this.scrubOlder(ns, entry);
    };
    void eraseRetried(
      relog,
      (err, last) => {
        this.onError(
          `log record of a write that removed text not stored${last ? ' (gave up)' : ''}`,
          err,
        );
        if (last) void this.scrubOlder(ns, entry);
      },
      { later: true },
    );
  }

  /**
   * Deleted means gone, across processes: a delete deletes the session object, then lists the records
   * that hold its text to erase them. Records of this process that landed after that listing find the
   * object gone here, and go too; one side always sees the other. A commit of this process after them
   * answers the check; else one LIST per session and `existenceLingerMs` (existence.ts).
   */
  private async eraseIfDeleted(
    ns: string,
    { session, landedAt }: Committed,
    logKey?: string,
    auditKey?: string,
  ): Promise<void> {
    if (logKey === undefined && auditKey === undefined) return;
    // Stale (a later write removed text this version holds; its scrub may have run before the log
    // record landed): the log record goes, the audit record stays.
    const erase = (gone: boolean) =>
      Promise.all([
        logKey !== undefined && this.manifest.dropLog(ns, logKey),
        gone && auditKey !== undefined && this.objects.delete(auditKey),
      ]);
    try {
      const key = keys.session(ns, session.id);
      await this.existence.eraseUnlessLive(key, stateOf(session), erase, { since: landedAt });
    } catch (err) {
      this.onError('records of a deleted session not erased', err);
    }
  }

  /**
   * Restores the audit records of a session's writes since `since` from its write records (a writer that
   * stopped between its commit and its audit record), and sweeps the parts such a writer may have left;
   * the compactor calls it for a stale marker.
   */
  private async restoreAudit(ns: string, id: string, since: number): Promise<void> {
    const found = await this.load(ns, id, true); // the write records, not the messages
    const session = found?.session;
    if (session && this.audit) {
      const kept = session.satchel?.writes ?? [];
      // Keyed records stored out of the object since then are read back from their packs (until 2026-12-07
      // they were not, and ~27 keyed writes after the marker lost its audit records: review s68b).
      const storedOut = liveFilters(filtersOf(session.satchel), this.now()).some(
        (f) => f.t >= since,
      );
      if (!recordsCover(session.satchel, since))
        this.onError(
          `audit records of ${id} since ${since} may be lost`,
          new Error('writer stopped'),
        );
      const out = storedOut
        ? await keyRecordsSince(this.objects, ns, id, incarnationOf(session), since, this.now())
        : [];
      const records = out.concat(kept.filter((w) => w.at >= since));
      const named: string[] = [];
      const puts = mapLimit(records, 8, async (w) => {
        const record = auditOf(w);
        if (record)
          await this.audit!.recordAll(ns, id, [{ record, writeKey: w.k }], (k) => named.push(k));
      });
      // A delete may have listed the audit records before these landed: they go unless the session stays.
      const erase = () => Promise.all(named.map((k) => this.objects.delete(k)));
      // When this check fails, the marker stays (unhealed): the next compaction restores them again while
      // the session lives, or erases what is left of it once it is gone.
      await this.existence.eraseUnlessLive(keys.session(ns, id), incarnationOf(session), erase, {
        strict: true,
        after: puts,
      });
      await puts;
    }
    // Gone: what an earlier restore stored after the delete listed it goes too, whoever stored it (a
    // session created again under the id meanwhile keeps its own: deleteParts reads the object last).
    // The same when the session at the id was created after the marker (no write of it: a delete that
    // stopped, then the id created again, review s65a); its own marker's heal reads no audit records.
    // Live: parts its stopped writer left go too (review s64f: no fold may come); a young one keeps the
    // marker for a later heal (a bare throw: the compactor just keeps the marker, it logs nothing).
    const records = !session || Date.parse(session.created_at) > since;
    if (await deleteParts(this.objects, ns, id, { records, now: this.now() })) throw Error();
  }
}

/** The session a cleanup chose to delete: by its manifest entry, older than `cutoff` (ms). */
interface Chosen {
  cutoff: number;
  entry: ManifestEntry;
}

/** The bytes of a delta's base and segments, in order. */
interface PartBodies {
  base: Uint8Array;
  segs: Uint8Array[];
}

/**
 * A batch of this many commits' records goes at once instead of lingering: a writer that appends faster
 * than the linger stores its log and audit records every 8 commits, so that its unkeyed write records,
 * which stay in the session object until then, are at most about 8 to 10 (`WriteLoop.settled`), not 16.
 */
const RECORD_BATCH_FULL = 8;

/** A commit whose log and audit records are still to be stored. */
interface PendingCommit {
  ns: string;
  committed: Committed;
  logged: boolean;
  /** The log record and every audit record of the commit are stored. */
  settled: boolean;
}

/**
 * Whether a batch of commits may leave text of an older version in the manifest's older entries: a write
 * that removed text (a replace, an import, request secrets or a rescan redacting old text again; marked
 * `satchel.x`) that changed the task, model, provider or metadata of the version it replaced (each such
 * change scrubs the entries before it, so the older ones hold what that version held). Until 2026-12-05
 * this compared with the entry this process last listed, which another process's change in between left
 * out (its text stayed in the manifest's pages).
 */
function scrubDue(items: PendingCommit[]): boolean {
  const texts = (s?: StoredSession) =>
    JSON.stringify([s?.task, s?.model, s?.provider, s?.metadata]);
  return items.some(
    ({ committed: c }) =>
      // A write that removed text (`satchel.x`: never a first version) and changed what entries hold.
      c.session.satchel?.['x'] === c.session.revision &&
      (!c.prior || texts(c.prior) !== texts(c.session)),
  );
}

/** The manifest entry of a stored session. */
/**
 * Whether a stored object's bytes hold the session `stored` was read from (not one created again under its
 * id); an object that is no session (a corrupt one a delete was for) counts as the same.
 */
function sameSession(body: Uint8Array, stored: StoredSession): boolean {
  const was = incarnationOf(stored);
  return (incarnationIn(body) ?? was) === was;
}

function entryOf(s: StoredSession, bytes: number): ManifestEntry {
  const { id, task, turns, model, provider, created_at, updated_at, sandbox } = s;
  return {
    ...{ id, task, turns, model, provider, created_at, updated_at, bytes, sandbox },
    metadata: s.metadata ?? {},
    untrusted_ingested: s.untrusted_ingested,
    episode_untrusted: s.episode_untrusted,
    revision: s.revision,
    at: instantOf(updated_at) || 0,
    i: incarnationOf(s),
  };
}

/** The public metadata of a manifest entry (what `list` answers); entries written before v1.1 lack the newer fields. */
export function summaryOf(e: ManifestEntry): SessionSummary {
  return {
    id: e.id,
    task: e.task,
    turns: e.turns,
    model: e.model,
    provider: e.provider,
    created_at: e.created_at,
    updated_at: e.updated_at,
    bytes: e.bytes,
    metadata: e.metadata ?? {},
    sandbox: e.sandbox ?? false,
    untrusted_ingested: e.untrusted_ingested ?? false,
    episode_untrusted: e.episode_untrusted ?? false,
  };
}

/** A delete whose object went (or was gone) but whose leftovers could not all be erased (or listed). */
function notErased(id: string, why: unknown): SatchelError {
  // `deleted`: the problem says so in a field, for a client's retry that then meets a 404 (review s58e).
  return new SatchelError(
    'unavailable',
    `session ${id} is gone, but erasing what may be left of it failed (${errorText(why)}): delete it again`,
    { retryAfter: 1, deleted: true },
  );
}

/** How long one storage call may take, by default (`SessionStoreOptions.storageDeadlineMs`). */
const STORAGE_DEADLINE_MS = defaultRetryPolicy.deadlineMs ?? 8000;

/**
 * True when a write failed because storage did not answer it: a write loop's "may have been stored" (an
 * attempt's answer lost, and storage no help in finding out for a storage deadline), or a storage call
 * that got no answer. The writes queued behind it would each spend a storage deadline the same way.
 */
function storageSilent(reason: unknown): boolean {
  if (SatchelError.is(reason, 'unavailable')) return reason.extra.maybeStored === true;
  return (
    StorageUnavailableError.is(reason) &&
    (reason.noAnswer || reason.cause instanceof AttemptTimeoutError)
  );
}

/**
 * The 503 of a write refused while it waited in the session's queue: it was never sent, so unlike the
 * write before it, it cannot have been stored (its detail must not say "may have been stored").
 */
function notSent(why: 'waited' | 'stalled', waitMs: number): SatchelError {
  return unavailable(
    why === 'stalled'
      ? 'storage did not answer an earlier write to this session in time; this write waited behind it ' +
          'and was not sent to storage; try again'
      : `this write waited ${Math.round(waitMs / 1000)} s behind earlier writes to this session and ` +
          'was not sent to storage; try again',
    2,
  );
}

/** A failure in words fit for an answer: a domain error's own detail; storage's never (keys, hosts). */
function errorText(err: unknown): string {
  return SatchelError.is(err) ? err.message : 'storage is unreachable';
}

/**
 * The messages with the newest copy of `question` at or before `atMost` (where it was stored: appends go
 * after it, and trims, pops and moves only take it earlier) moved to the end: as they are when it is
 * last, or not there (a partial copy's unread slots are left where they are). A later message with the
 * same text is another writer's, and moving it split that writer's exchange (review s60f).
 */
function questionLast(
  messages: Message[],
  question: Pick<Message, 'role' | 'content'> | undefined,
  atMost: number,
): Message[] {
  if (!question) return messages;
  let at = Math.min(atMost, messages.length - 1);
  for (; at >= 0; at--) {
    const m = messages[at];
    if (m !== undefined && m.role === question.role && m.content === question.content) break;
  }
  if (at < 0 || at === messages.length - 1) return messages;
  const moved = messages.slice(); // slice and splice keep a partial copy's holes
  moved.push(...moved.splice(at, 1));
  return moved;
}
