import { decodeSession } from '../model/codec.js';
import type { RequestContext } from '../model/context.js';
import {
  conflict,
  notFound,
  preconditionFailed,
  unavailable,
  unprocessable,
} from '../model/errors.js';
import { randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import { revisionMatches, type ExpectedRevision } from '../model/revision.js';
import type { StoredSession, WriteReceipt, WriteRecord } from '../model/session.js';
import type { SavePipeline } from '../pipeline/save.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  type ObjectStore,
} from '../storage/port.js';
import type { AuditRecord } from './audit.js';
import type { CachedSession, SessionCache } from './cache.js';
import type { Manifest } from './manifest.js';
import {
  claimsOf,
  findClaim,
  makeReceipt,
  pruneWrites,
  seal,
  type WriteClaims,
} from './write-records.js';

/** The per-request context of a write. */
export interface WriteContext extends RequestContext {
  /** Client's Idempotency-Key: a repeated key returns the first write's receipt and changes nothing. */
  idempotencyKey?: string;
  /** What the audit log calls this write when it is not the operation's own name (e.g. `continue`). */
  op?: AuditRecord['op'];
  /** Secret values registered for this request only (redacted in every form). */
  knownValues?: string[];
  /**
   * Extra fields kept with this write's receipt in its write record, so a replay returns them too
   * (continue's reply).
   */
  receiptExtras?: (saved: StoredSession) => Record<string, unknown>;
}

/** One compare-and-swap write on a session, as a request object instead of positional parameters. */
export interface WriteRequest {
  op: AuditRecord['op'];
  ns: string;
  id: string;
  /** The caller's If-Match; undefined lands the write after whatever is stored. */
  expected?: ExpectedRevision;
  ctx: WriteContext;
  /** A hash of the request body, so a key reused for another body is refused (422). */
  fingerprint?: string;
  /** The next state from the current one; null when there is nothing to write. */
  build: (cur: StoredSession, nowIso: string) => StoredSession | null;
}

export interface WriteResult {
  session: StoredSession;
  receipt: WriteReceipt;
  /** True when an Idempotency-Key (or this write's own id) matched an earlier write and nothing was written. */
  replayed: boolean;
  /** Create only: the head alone was over the size cap, so the first user message was not stored. */
  headDropped?: boolean;
}

/** A write that landed, for what follows it (manifest log record, audit record, listeners). */
export interface Committed {
  session: StoredSession;
  receipt: WriteReceipt;
  writeId: string;
  op: AuditRecord['op'];
  added: number;
  sources: string[];
}

export interface WriteLoopDeps {
  objects: ObjectStore;
  cache: SessionCache;
  pipeline: SavePipeline;
  manifest: Pick<Manifest, 'markPending' | 'clearPending'>;
  now: () => number;
  /** How long a write keeps retrying against concurrent writers before answering `unavailable`. */
  maxContentionMs: number;
  /** Reads the session object from storage (refreshing the cache); null when it does not exist. */
  load: (ns: string, id: string) => Promise<CachedSession | null>;
  /** Runs after the commit, before the write answers. */
  afterCommit: (ns: string, committed: Committed, ctx: WriteContext) => Promise<void>;
}

/** What one attempt tried to commit: enough to finish it when a re-read shows that it landed after all. */
type Tried = Committed & { record: WriteRecord; uncertain: boolean };

type Attempt =
  { lost: true; tried: Tried } | { lost: false; committed: Committed | null; result: WriteResult };

/**
 * The one write loop (docs/design.md, "A write"): under a pending marker, read the session (or use the
 * cached copy), answer a replay from its write records, check If-Match, build the next state, run the
 * save pipeline, seal the receipt into the object and PUT it with If-Match on the etag read. On a
 * precondition failure, re-read and try again with jittered backoff until the contention deadline.
 */
export class WriteLoop {
  constructor(private readonly deps: WriteLoopDeps) {}

  /** Creates a session object create-only; `conflict` when the id is taken. */
  async create(ns: string, draft: StoredSession, ctx: WriteContext): Promise<WriteResult> {
    const { objects, pipeline, cache, now } = this.deps;
    const writeId = randomHex(12);
    const key = keys.session(ns, draft.id);
    const record: WriteRecord = { k: 'w:' + writeId, at: now(), r: {} };
    draft.satchel = { writes: [record] };
    return this.underPendingMarker(ns, draft.id, writeId, async (ready, landed) => {
      const saved = pipeline.apply({
        next: draft,
        previous: null,
        ...(ctx.knownValues ? { knownValues: ctx.knownValues } : {}),
      });
      const session = saved.session;
      const receipt = makeReceipt(session, 0, saved.redactions, saved.dropped_groups);
      const sealed = seal(session, receipt, record);
      await ready;
      let etag: string;
      try {
        ({ etag } = await objects.put(key, sealed.body, { ifNoneMatch: '*' }));
      } catch (err) {
        // The create may have landed with its answer lost: only the object can say whose it is.
        const uncertain = mayHaveLanded(err);
        const ours = uncertain
          ? await this.ownObject(key, 'w:' + writeId).catch((readErr) => {
              landed(); // unknown: the pending marker stays, and the manifest heals from the object
              throw readErr;
            })
          : null;
        if (!ours && PreconditionFailedError.is(err))
          throw conflict(`session ${draft.id} already exists`);
        if (!ours) {
          if (uncertain) landed(); // a delayed PUT may still land: keep the marker for the manifest
          throw err;
        }
        etag = ours;
      }
      landed();
      cache.put(key, { etag, session, bytes: sealed.body.byteLength, encoded: sealed.messages });
      const op = ctx.op ?? 'create';
      await this.deps.afterCommit(
        ns,
        { session, receipt, writeId, op, added: session.messages.length, sources: saved.sources },
        ctx,
      );
      return { session, receipt, replayed: false, headDropped: saved.head_dropped };
    });
  }

  /** Runs one compare-and-swap write to completion (or to a replay, a refusal, or the deadline). */
  async write(req: WriteRequest): Promise<WriteResult> {
    const key = keys.session(req.ns, req.id);
    const writeId = randomHex(12);
    const claims = await claimsOf(writeId, req.ctx.idempotencyKey);
    return this.underPendingMarker(req.ns, req.id, writeId, async (ready, landed) => {
      let cached = this.deps.cache.get(key) ?? null;
      // The first read runs alongside the pending marker's PUT.
      const read = cached ? null : await this.deps.load(req.ns, req.id);
      cached ??= read;
      await ready;
      let fromCache = read === null;
      const tries: Tried[] = [];
      const deadline = this.deps.now() + this.deps.maxContentionMs;
      for (let attempt = 0; ; attempt++) {
        if (!cached) throw notFound(`session ${req.id} does not exist`);
        const verdict = this.check(req, cached.session, claims, fromCache, tries);
        if (verdict === 'reread') {
          cached = await this.deps.load(req.ns, req.id);
          fromCache = false;
          continue;
        }
        if (verdict && 'landed' in verdict) {
          // Our own earlier attempt landed although its answer was lost: finish it, as a first write.
          const mine = verdict.landed;
          landed();
          await this.deps.afterCommit(req.ns, mine, req.ctx);
          return { session: mine.session, receipt: mine.receipt, replayed: false };
        }
        if (verdict) return verdict;
        if (attempt > 0 && this.deps.now() > deadline) {
          if (tries.some((t) => t.uncertain)) landed(); // a delayed PUT may still land: keep the marker
          throw unavailable('too many concurrent writers on this session; try again', 1);
        }
        const outcome = await this.attempt(req, key, cached, claims, writeId).catch((err) => {
          // Whatever fails after an attempt that may have landed keeps the pending marker, so the
          // manifest heals from the object whether or not it did.
          if (tries.some((t) => t.uncertain)) landed();
          throw err;
        });
        if (outcome.lost) {
          tries.push(outcome.tried);
          if (outcome.tried.uncertain) {
            // It may have landed: read before anything else, so that a landed write is never refused.
            cached = await this.deps.load(req.ns, req.id).catch((err) => {
              landed();
              throw err;
            });
            fromCache = false;
            continue;
          }
        } else {
          if (outcome.committed) {
            landed();
            await this.deps.afterCommit(req.ns, outcome.committed, req.ctx);
          }
          return outcome.result;
        }
        await sleep(Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6)));
        cached = await this.deps.load(req.ns, req.id);
        fromCache = false;
      }
    });
  }

  /**
   * A replay (this request's key or this write's own id is in the session), a refusal (If-Match), or
   * null to go on. A cached copy is never trusted for either answer: `reread` asks for a fresh read.
   */
  private check(
    req: WriteRequest,
    cur: StoredSession,
    claims: WriteClaims,
    fromCache: boolean,
    tries: readonly Tried[],
  ): WriteResult | 'reread' | { landed: Tried } | null {
    const previous = findClaim(cur, claims);
    if (previous) {
      if (fromCache) return 'reread';
      // Attempts of one write share their key and may share a millisecond: the revision tells them apart.
      const revision = (previous.r as { revision?: number }).revision;
      const mine = tries.findLast(
        (t) =>
          t.record.k === previous.k &&
          t.record.at === previous.at &&
          t.receipt.revision === revision,
      );
      if (mine) return { landed: mine };
      if (
        previous.k === claims.keyed &&
        previous.f !== undefined &&
        req.fingerprint !== undefined &&
        previous.f !== req.fingerprint
      ) {
        throw unprocessable('this Idempotency-Key was used for a different request');
      }
      return { session: cur, receipt: previous.r as unknown as WriteReceipt, replayed: true };
    }
    if (!revisionMatches(req.expected, cur.revision)) {
      if (fromCache) return 'reread';
      throw preconditionFailed(`the session is at revision ${cur.revision}, not ${req.expected}`);
    }
    return null;
  }

  /** Builds, runs the pipeline, seals and PUTs once; `lost` when another writer changed the object first. */
  private async attempt(
    req: WriteRequest,
    key: string,
    cached: CachedSession,
    claims: WriteClaims,
    writeId: string,
  ): Promise<Attempt> {
    const { pipeline, objects, cache, now } = this.deps;
    const cur = cached.session;
    const nowMs = Math.max(now(), (Date.parse(cur.updated_at) || 0) + 1);
    const nowIso = new Date(nowMs).toISOString();
    const next = req.build(cur, nowIso);
    if (!next)
      return {
        lost: false,
        committed: null,
        result: { session: cur, receipt: makeReceipt(cur, cached.bytes, 0, 0), replayed: false },
      };
    const record: WriteRecord = {
      k: claims.keyed ?? claims.own,
      ...(claims.keyed && req.fingerprint ? { f: req.fingerprint } : {}),
      at: nowMs,
      r: {},
    };
    const draft: StoredSession = {
      ...next,
      updated_at: nowIso,
      revision: cur.revision + 1,
      satchel: { ...cur.satchel, writes: pruneWrites(cur.satchel?.writes ?? [], record, now()) },
    };
    const knownValues = req.ctx.knownValues ? { knownValues: req.ctx.knownValues } : {};
    const saved = pipeline.apply({
      next: draft,
      previous: cur,
      previousBytes: cached.bytes,
      newMessages: newTail(cur.messages, draft.messages),
      ...knownValues,
    });
    const session = saved.session;
    const receipt = makeReceipt(session, 0, saved.redactions, saved.dropped_groups);
    const sealed = seal(session, receipt, record, cached.encoded, req.ctx.receiptExtras?.(session));
    const added = Math.max(0, session.messages.length - cur.messages.length);
    const committed = {
      session,
      receipt,
      writeId,
      op: req.ctx.op ?? req.op,
      added,
      sources: saved.sources,
    };
    try {
      const { etag } = await objects.put(key, sealed.body, { ifMatch: cached.etag });
      cache.put(key, { etag, session, bytes: sealed.body.byteLength, encoded: sealed.messages });
    } catch (err) {
      // Lost to another writer, or perhaps landed with the answer lost: the re-read tells which.
      if (PreconditionFailedError.is(err) || mayHaveLanded(err)) {
        return { lost: true, tried: { ...committed, record, uncertain: mayHaveLanded(err) } };
      }
      throw err;
    }
    return { lost: false, committed, result: { session, receipt, replayed: false } };
  }

  /** The etag of the session object at `key` when its write records hold `claim` (our own write); else null. */
  private async ownObject(key: string, claim: string): Promise<string | null> {
    const found = await this.deps.objects.get(key);
    if (!found) return null;
    const session = decodeSession(found.body, key);
    return session.satchel?.writes.some((w) => w.k === claim) ? found.etag : null;
  }

  /**
   * Runs a write under its pending marker: the marker's PUT starts at once (`ready` settles when it is
   * stored, and must before the commit); when the write did not land (`landed` never called), the
   * marker is removed again (best effort: the manifest's compactor also heals it).
   */
  private async underPendingMarker<T>(
    ns: string,
    id: string,
    writeId: string,
    write: (ready: Promise<unknown>, landed: () => void) => Promise<T>,
  ): Promise<T> {
    const pending = this.deps.manifest.markPending(ns, id, writeId);
    pending.catch(() => undefined);
    let hasLanded = false;
    try {
      return await write(pending, () => {
        hasLanded = true;
      });
    } finally {
      if (!hasLanded)
        await pending.then(
          (k) => this.deps.manifest.clearPending(k),
          () => undefined,
        );
    }
  }
}

/** How many trailing messages of `next` are not `cur`'s (by identity): what this write adds or replaces. */
function newTail(cur: readonly unknown[], next: readonly unknown[]): number {
  let same = 0;
  while (same < cur.length && same < next.length && cur[same] === next[same]) same++;
  return next.length - same;
}

/** True when a failed write may still have happened (its answer was lost, or the adapter cannot tell). */
function mayHaveLanded(err: unknown): boolean {
  if (PreconditionFailedError.is(err)) return err.afterLostAnswer;
  return StorageUnavailableError.is(err) && err.mayHaveLanded;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
