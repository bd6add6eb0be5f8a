import {
  decodeSegment,
  decodeStored,
  joinArrays,
  type BaseRef,
  type EncodedMessages,
  type SegRef,
} from '../model/codec.js';
import { utf8 } from '../model/bytes.js';
import type { RequestContext } from '../model/context.js';
import {
  conflict,
  NeedsWholeSession,
  notFound,
  payloadTooLarge,
  SatchelError,
  preconditionFailed,
  unavailable,
  unconfirmed,
  unprocessable,
} from '../model/errors.js';
import { randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import { revisionMatches, revisionMismatch, type ExpectedRevision } from '../model/revision.js';
import type { StoredSession, WriteReceipt, WriteRecord } from '../model/session.js';
import type { ReserveInput, SavePipeline } from '../pipeline/save.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  type ObjectStore,
} from '../storage/port.js';
import { mayHaveLanded } from '../storage/create-only.js';
import { settleAll } from '../storage/concurrency.js';
import { defaultRetryPolicy } from '../storage/retry.js';
import { deleteParts } from './parts.js';
import {
  addToFilters,
  filtersOf,
  lookUpKeyRecord,
  storeOut,
  incarnationOf,
  StoredKeyRecords,
  type StoreOutPlan,
  sweepDue,
  stateOf,
  sweepKeyRecords,
  type DaySweep,
  type KeyFilter,
} from './key-records.js';
import type { AuditRecord } from './audit.js';
import { eraseRetried, type ExistenceChecks } from './existence.js';
import { isWhole, partsOf, rawNamed, type CachedSession, type SessionCache } from './cache.js';
import type { MarkedWrite, StandingMarkers } from './markers.js';
import {
  claimsOf,
  findClaim,
  makeReceipt,
  otherRequest,
  keepWrites,
  receiptOf,
  ownRedactions,
  recordGrowth,
  seal,
  sealDelta,
  unkeyedKept,
  type Fingerprint,
  type WriteClaims,
} from './write-records.js';
import { unattended, type Schedule } from '../model/context.js';

/** The per-request context of a write. */
export interface WriteContext extends RequestContext {
  /** Client's Idempotency-Key: a repeated key returns the first write's receipt and changes nothing. */
  idempotencyKey?: string;
  /** What the audit log calls this write when it is not the operation's own name (e.g. `continue`). */
  op?: AuditRecord['op'];
  /** Secret values registered for this request only (redacted in every form). */
  knownValues?: string[];
  /**
   * Secrets redacted from this request's content before it reached the write (a webhook's payload, in
   * its summary): its receipt's and audit record's `redactions` count them with the pipeline's own.
   */
  redacted?: number;
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
  /** Hashes of the request body with its key, so a key reused for another body is refused (422). */
  fingerprint?: Fingerprint;
  /** The next state from the current one; null when there is nothing to write. */
  build: (cur: StoredSession, nowIso: string) => StoredSession | null;
  /**
   * Never in a group commit: an append with external refs, whose redactions the pipeline counts for the
   * whole commit (a group's members each count only their messages' and their request's).
   */
  alone?: boolean;
}

export interface WriteResult {
  /**
   * The session as written. After an append from a process that did not hold a large session's parts,
   * a partial copy: its messages before the parts' end are absent (undefined); `get` reads it whole.
   */
  session: StoredSession;
  receipt: WriteReceipt;
  /** True when an Idempotency-Key (or this write's own id) matched an earlier write and nothing was written. */
  replayed: boolean;
  /** A create or a PUT: the head alone was over the size cap, so the first user message was not stored. */
  headDropped?: boolean;
}

/** One request's share of a commit (a group commit holds several): its write record and context. */
export interface CommittedWrite {
  /** As stored in the session, with its receipt and audit fields (`auditOf` makes its audit record). */
  record: WriteRecord;
  ctx: WriteContext;
}

/** Hands `work` to the schedule of every request in `writes` (each keeps its runtime alive for it). */
export function scheduleFor(writes: readonly CommittedWrite[], work: Promise<unknown>): void {
  for (const schedule of new Set(writes.map((w) => w.ctx.schedule ?? unattended))) schedule(work);
}

/** What a commit's background work stored (`WriteLoopDeps.afterCommit`). */
export interface AfterCommit {
  logged: boolean;
  settled: boolean;
}

/** A write that landed, for what follows it (manifest log record, audit records, listeners). */
export interface Committed {
  session: StoredSession;
  receipt: WriteReceipt;
  writeId: string;
  op: AuditRecord['op'];
  added: number;
  /** The requests this commit answered, in order (one, or a group). */
  writes: CommittedWrite[];
  /** Set when `session` is a partial copy: its messages before this index are absent (`CachedSession.held`). */
  held?: number;
  /** A tick (ExistenceChecks) taken once it landed; unset when a re-read found that it had landed. */
  landedAt?: number;
  /** The version it replaced, as this write read it (its text fields tell whether the manifest is scrubbed). */
  prior?: StoredSession;
  /** Set by a create: `session` is the first version of its incarnation. */
  first?: true;
  /** The head alone was over the size cap, so the first user message was not stored (a create or a PUT). */
  headDropped?: true;
}

export interface WriteLoopDeps {
  objects: ObjectStore;
  cache: SessionCache;
  pipeline: SavePipeline;
  markers: Pick<StandingMarkers, 'begin'>;
  now: () => number;
  /**
   * How long a write keeps retrying against concurrent writers before answering `unavailable`: the time
   * of its attempts lost to another writer's commit (a precondition failure), not of those storage failed.
   */
  maxContentionMs: number;
  /**
   * How long a write keeps trying again when storage failed its commits without saying whether they landed
   * (no other writer moved the object): the storage's own deadline for one call (8 s by default,
   * `defaultRetryPolicy`). It then answers that the write may have been stored.
   */
  storageDeadlineMs?: number;
  /** Sessions of at least this many bytes are stored as a base and a delta; 0 stores every one whole. */
  splitBytes: number;
  /** A delta is sealed into a segment once its messages pass this many bytes (`segmentSize` by default). */
  segmentBytes?: number;
  /**
   * Reads the session object from storage (refreshing the cache); null when it does not exist. With
   * `partial`, a large session's parts are not read unless the cache holds the rest: the copy may then be
   * partial (`held`), which only an append can write on.
   */
  load: (ns: string, id: string, partial?: boolean) => Promise<CachedSession | null>;
  /**
   * What follows a commit (log record, audit records, listeners): runs after the write has answered.
   * Resolves `logged` when the log record is stored, and `settled` when its audit records are stored too
   * (the marker may then go; its write records then answer nothing any more: `WriteLoop.settled`).
   */
  afterCommit: (ns: string, committed: Committed) => Promise<AfterCommit>;
  /** Told of every commit that lands: it answers the existence checks of records stored before it. */
  existence: ExistenceChecks;
  /** Reports background work that failed (the write itself stands). */
  onError?: (what: string, err: unknown) => void;
}

/** One request of a (possibly grouped) write, with its claims and its answer once known. */
interface Member {
  req: WriteRequest;
  claims: WriteClaims;
  result?: PromiseSettledResult<WriteResult>;
  /** Its key's record stored out of the object, when a lookup found one (`lookedUp`: the filters it used). */
  storedOut?: WriteRecord;
  lookedUp?: string;
}

/** One group's write in progress: what the commit loop and the code around it share. */
interface GroupRun {
  ns: string;
  id: string;
  key: string;
  writeId: string;
  members: Member[];
  mark: MarkedWrite;
  /** A write may have landed without its log record: the marker must stay. */
  unknown: boolean;
  /** A commit landed and its after-commit work (which releases the marker) is under way. */
  finished: boolean;
  /** Where its background work goes (the first request's schedule). */
  schedule: Schedule;
  /** The keys of the keyed records its attempts stored out of the object... */
  keyRecordsStored: string[];
  /** ...their PUTs (settled once they landed or failed)... */
  keyRecordsDone: Promise<unknown>[];
  /** ...of the session this names (`incarnationOf`). */
  keyRecordsFor?: string;
  /** Its attempts that did not land, or may have landed unseen (`uncertain`). */
  tries: Tried[];
  /** This process held the session before this write: it will likely write again (`storeOut`). */
  warm: boolean;
  /** The marker's PUT failed: the write fails with its error (no attempt can commit). */
  markerFailed?: boolean;
}

/** What one attempt tried to commit: enough to finish it when a re-read shows that it landed after all. */
type Tried = Committed & {
  records: WriteRecord[];
  members: Member[];
  uncertain: boolean;
  /** Uncertain because an attempt got no answer at all (not an error answer, `noAnswer`). */
  unanswered: boolean;
  /** The parts the object it replaced named and it does not, which go if this attempt landed. */
  replaced: string[];
  /** The etag its PUT was conditional on. */
  ifMatch: string;
  /** A read showed that it did not land and never will (`discardUnlanded`). */
  ruledOut?: boolean;
  /** The session it was written on (`incarnationOf`). */
  incarnation: string;
  /** The parts this attempt stored, which nothing names unless the attempt landed. */
  written: string[];
};

type Attempt =
  | { lost: true; tried: Tried }
  | { lost: false; committed: Committed | null }
  | { reread: true; whole?: boolean };

type Verdict = WriteResult | 'reread' | { landed: Tried } | null;

/**
 * The one write loop (docs/design.md, "A write"): under the session's standing pending marker, read the
 * session (or use the cached copy), answer replays from its write records, check If-Match, build the next
 * state, run the save pipeline, seal the receipts into the object and PUT it with If-Match on the etag
 * read: that PUT is the commit, and the write answers as soon as it lands; its log record, audit records
 * and listeners run after. On a precondition failure, re-read and try again with jittered backoff until
 * the contention deadline. Several appends to one session queued in this process commit as one group:
 * one PUT, one write record and receipt each.
 */
export class WriteLoop {
  /** Keyed records this process has stored out of their objects, and its PUTs of them under way. */
  private readonly keyRecords: StoredKeyRecords;

  /**
   * The unkeyed writes (`w:` record keys) of this process whose log and audit records are stored. Their
   * records in the session object answer nothing any more: the write has its answer (a lost-answer check
   * only ever asks about a write still waiting for one), the compactor has no audit record to restore, and
   * there is no key to replay. So this process's next write to the session leaves them out, and its delta
   * carries one or two records where it carried 16 (docs/design.md "The session object"). A keyed record
   * answers retries for 24 h and stays.
   */
  private readonly settled = new Set<string>();
  /**
   * Parts of lost attempts in runs that failed while the object stood at the etag their PUT was
   * conditional on, by session key (at most 256 keys): `dropLeft` erases them at the next commit.
   */
  private readonly leftParts = new Map<string, string[]>();

  constructor(private readonly deps: WriteLoopDeps) {
    this.keyRecords = new StoredKeyRecords(deps.objects, deps.existence);
  }

  /**
   * Creates a session object create-only; `conflict` when the id is taken. `floor`: the highest revision
   * of the sessions deleted under a chosen id (`RevisionFloors`, read alongside the pending marker's PUT):
   * the session starts above it.
   */
  async create(
    ns: string,
    draft: StoredSession,
    ctx: WriteContext,
    floor?: () => Promise<number>,
  ): Promise<WriteResult> {
    const { objects, pipeline, cache, now } = this.deps;
    const writeId = randomHex(12);
    const key = keys.session(ns, draft.id);
    const record: WriteRecord = { k: 'w:' + writeId, at: now(), r: {} };
    // A new token tells this session apart from any deleted before it under the id (`incarnationOf`).
    draft.satchel = { writes: [record], i: randomHex(4) };
    const mark = this.deps.markers.begin(ns, draft.id, ctx.schedule);
    // 'unknown': the create may have landed without its log record, so the marker must stay.
    let state: 'open' | 'unknown' | 'finished' = 'open';
    try {
      const above = floor?.();
      if (above) draft.revision = (await above) + 1;
      const op = ctx.op ?? 'create';
      const saved = pipeline.apply({
        next: draft,
        previous: null,
        ...(ctx.knownValues ? { knownValues: ctx.knownValues } : {}),
        reserve: (at) => {
          const n = at.session.messages.length;
          const widened = { ...at, redactions: at.redactions + (ctx.redacted ?? 0) };
          return recordGrowth([record], widened, () => this.auditFields(op, ctx, n, n, at.sources));
        },
      });
      const session = saved.session;
      const redactions = saved.redactions + (ctx.redacted ?? 0);
      const receipt = makeReceipt(session, 0, redactions, saved.dropped_groups);
      const n = session.messages.length;
      record.a = this.auditFields(op, ctx, n, n, saved.sources);
      const sealed = seal(session, receipt, [record]);
      await mark.ready;
      let etag: string | undefined;
      let landedAt: number | undefined;
      const epoch = cache.epoch; // a delete meanwhile: no copy is kept
      try {
        const sent = this.deps.existence.tick();
        ({ etag } = await objects.put(key, sealed.body, { ifNoneMatch: '*' }));
        // No object was there when it landed: records of a session under the id before it are its.
        landedAt = this.deps.existence.proven(key, stateOf(session), sent, etag);
      } catch (err) {
        // The create may have landed with its answer lost: only the object can say whose it is.
        if (mayHaveLanded(err)) state = 'unknown';
        await this.createFailed(key, draft, err, state === 'unknown');
      }
      // A copy cached under the id (a session deleted elsewhere) is not this one's, cached or not.
      cache.drop(key);
      // None after a lost answer: the object the re-read found may hold later writes this copy lacks.
      if (etag)
        cache.putRead(
          key,
          { etag, session, bytes: sealed.body.byteLength, encoded: sealed.messages },
          epoch,
        );
      const added = session.messages.length;
      state = 'finished';
      const writes = [{ record, ctx }];
      const first = true;
      this.finish(ns, mark, { session, receipt, writeId, op, added, writes, landedAt, first });
      return { session, receipt, replayed: false, headDropped: saved.head_dropped };
    } finally {
      if (state !== 'finished') mark.end(state === 'open');
    }
  }

  /** Runs one compare-and-swap write to completion (or to a replay, a refusal, or the deadline). */
  async write(req: WriteRequest): Promise<WriteResult> {
    const [settled] = await this.writeGroup([req]);
    if (settled!.status === 'rejected') throw settled!.reason;
    return settled!.value;
  }

  /**
   * Runs writes to one session as one compare-and-swap (a group commit): each keeps its own idempotency
   * record, answer and audit record. Answers each request's outcome, in order.
   */
  async writeGroup(reqs: WriteRequest[]): Promise<PromiseSettledResult<WriteResult>[]> {
    // A request whose Idempotency-Key an earlier one of the group holds (a client's retry queued beside its
    // first attempt) runs after the group, on its own: it then finds that one's record (a replay, or 422).
    // A Workers bundle has no groups (key-queue.ts): left out there.
    if (!globalThis.SATCHEL_SHORT_LIVED) {
      const held = new Set<string>();
      const again = reqs.map((r) => {
        const k = r.ctx.idempotencyKey;
        if (k === undefined) return false;
        return held.has(k) || (held.add(k), false);
      });
      if (again.some(Boolean)) {
        const first = await this.writeGroup(reqs.filter((_, i) => !again[i]));
        const out: PromiseSettledResult<WriteResult>[] = [];
        for (const [i, r] of reqs.entries())
          out.push(again[i] ? (await this.writeGroup([r]))[0]! : first.shift()!);
        return out;
      }
    }
    const { ns, id, ctx } = reqs[0]!;
    const key = keys.session(ns, id);
    const writeId = randomHex(12);
    const members: Member[] = await Promise.all(
      reqs.map(async (req, i) => ({
        req,
        claims: await claimsOf(i === 0 ? writeId : randomHex(12), req.ctx.idempotencyKey),
      })),
    );
    const mark = this.deps.markers.begin(ns, id, ctx.schedule);
    // `unknown`: a write may have landed without its log record, so the marker must stay.
    const schedule = ctx.schedule ?? unattended;
    const run: GroupRun = {
      ns,
      id,
      key,
      writeId,
      members,
      mark,
      unknown: false,
      finished: false,
      schedule,
      keyRecordsStored: [],
      keyRecordsDone: [],
      tries: [],
      warm: this.deps.cache.get(key) !== undefined,
    };
    mark.ready.catch(() => (run.markerFailed = true));
    try {
      await this.commitLoop(run);
    } catch (err) {
      run.unknown ||= run.tries.some((t) => t.uncertain); // an attempt may have landed: the marker stays
      // A write that may have been stored never answers as one that was not (a "try again" stores it twice).
      for (const m of members) m.result ??= rejected(mayBeStored(run, m) ? maybeStored(m) : err);
    } finally {
      if (!run.finished) {
        mark.end(!run.unknown);
        this.checkLeft(run);
      }
    }
    // A request the landed commit did not hold (it changed nothing then) runs on its own.
    for (const m of members) m.result ??= (await this.writeGroup([m.req]))[0];
    return members.map((m) => m.result!);
  }

  /** Reads, checks, builds and commits until every member has its answer (or the deadline). */
  private async commitLoop(run: GroupRun): Promise<void> {
    const { ns, id, key, members, mark } = run;
    // Appends may write on a partial copy (the delta without the parts); any other write reads it whole.
    const partial = members.every((m) => m.req.op === 'append');
    const load = (whole = false) => this.deps.load(ns, id, partial && !whole);
    let cached = this.deps.cache.get(key) ?? null;
    if (cached && !partial && !isWhole(cached)) cached = null;
    // The first read, and the first attempt's work up to its first PUT, run alongside the marker's PUT
    // (when the marker is not already standing): every PUT of an attempt waits for it (`mark.ready`).
    const read = cached ? null : await load();
    cached ??= read;
    let fromCache = read === null;
    const tries = run.tries;
    const clock: Clock = { contended: 0, began: 0 };
    for (let attempt = 0; ; attempt++) {
      const open = members.filter((m) => !m.result);
      this.discardKeyRecordsOfDeleted(run, cached);
      if (!cached) {
        this.discardUnlanded(run, tries, null);
        for (const m of open) m.result = rejected(notFound(`session ${id} does not exist`));
        return;
      }
      await this.lookUpStoredOut(run, open, cached.session).catch((err: unknown) => {
        run.unknown = tries.some((t) => t.uncertain); // an attempt may have landed: the marker stays
        throw err;
      });
      const verdict = this.checkAll(open, cached.session, fromCache, tries);
      if (verdict === 'reread') {
        cached = await load();
        fromCache = false;
        continue;
      }
      if (verdict) return this.finishLanded(run, tries, cached, verdict.landed);
      if (!fromCache) for (const t of tries) if (hiddenIn(t, cached.session)) hidden(run, t);
      this.discardUnlanded(run, tries, cached);
      const left = members.filter((m) => !m.result);
      if (left.length === 0 || this.gaveUp(run, left, clock)) return;
      clock.began = this.deps.now();
      let outcome: Attempt;
      try {
        outcome = await this.attempt(run, cached, left, fromCache);
      } catch (err) {
        run.unknown = tries.some((t) => t.uncertain);
        // Split unless an attempt may still land (`mayBeStored`): one a read ruled out never will.
        const live = tries.some((t) => t.uncertain && !t.ruledOut);
        if (left.length > 1 && err instanceof SatchelError && !live && !run.markerFailed) {
          // The group as a whole was refused (say, over the size cap): each request on its own.
          for (const m of left) m.result = (await this.writeGroup([m.req]))[0];
          return;
        }
        throw err;
      }
      if ('reread' in outcome) {
        cached = await load(outcome.whole);
        fromCache = false;
        continue;
      }
      if (!outcome.lost) {
        if (outcome.committed) {
          run.finished = true;
          this.finish(ns, mark, outcome.committed);
        }
        return;
      }
      tries.push(outcome.tried);
      clock.last = outcome.tried;
      if (!outcome.tried.uncertain)
        await sleep(Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6)));
      // It may have landed: read before anything else, so that a landed write is never refused.
      cached = await load().catch((err) => {
        run.unknown = tries.some((t) => t.uncertain);
        throw err;
      });
      fromCache = false;
    }
  }

  /**
   * Ends a run whose attempts keep being lost, answering `left` (true): past the contention deadline,
   * which counts the attempts lost to another writer's commit; or once storage has failed attempts in a
   * row, each still able to land (a re-read found the object at the etag it was conditional on), for
   * as long as one storage call may take. A member whose attempt may have landed is told so.
   */
  private gaveUp(run: GroupRun, left: Member[], clock: Clock): boolean {
    const now = this.deps.now();
    const last = clock.last;
    clock.last = undefined;
    if (last?.uncertain && !last.ruledOut) clock.stalledSince ??= clock.began;
    else if (last) {
      clock.contended += now - clock.began;
      clock.stalledSince = undefined;
    }
    const limit = this.deps.storageDeadlineMs ?? STORAGE_DEADLINE_MS;
    const stalled = clock.stalledSince !== undefined && now - clock.stalledSince >= limit;
    if (!stalled && clock.contended <= this.deps.maxContentionMs) return false;
    run.unknown = run.tries.some((t) => t.uncertain); // a delayed PUT may still land: keep the marker
    const busy = stalled
      ? unavailable('storage did not answer this write in time; try again', 2)
      : unavailable('too many concurrent writers on this session; try again', 1);
    for (const m of left) m.result = rejected(mayBeStored(run, m) ? maybeStored(m) : busy);
    return true;
  }

  /**
   * Finds the records of keyed members that are not in the object but that its filters say may have been
   * stored out of it (docs/design.md, "Keyed writes"): one GET each, in parallel, read after the object.
   * A fresh key usually passes no filter and costs nothing. Looked up again only when the filters change.
   */
  private async lookUpStoredOut(run: GroupRun, open: Member[], cur: StoredSession): Promise<void> {
    const kf = cur.satchel?.kf;
    if (kf === undefined) return; // nothing ever left this object: every write without keys ends here
    const signature = JSON.stringify(kf);
    const now = this.deps.now();
    const wanted = open.filter(
      (m) =>
        m.claims.keyed !== undefined &&
        m.storedOut === undefined &&
        m.lookedUp !== signature &&
        !findClaim(cur, m.claims, now),
    );
    if (wanted.length === 0) return;
    const filters = filtersOf(cur.satchel);
    const incarnation = incarnationOf(cur);
    const { objects } = this.deps;
    const { ns, id } = run;
    await Promise.all(
      wanted.map(async (m) => {
        const k = m.claims.keyed!;
        const record = await lookUpKeyRecord(objects, ns, id, incarnation, k, now, filters);
        m.lookedUp = signature;
        if (record) m.storedOut = record;
      }),
    );
  }

  /**
   * The session turned out deleted (and perhaps created again) since this run stored keyed records out of
   * it: they go too, since the delete may have listed `k/<id>/` before they landed.
   */
  private discardKeyRecordsOfDeleted(run: GroupRun, cached: CachedSession | null): void {
    if (run.keyRecordsStored.length === 0) return;
    if (!cached || incarnationOf(cached.session) !== run.keyRecordsFor)
      for (const k of run.keyRecordsStored.splice(0)) this.discard(run, k);
  }

  /** Our own earlier attempt landed although its answer was lost: finish it, as a first write. */
  private finishLanded(run: GroupRun, tries: Tried[], cached: CachedSession, landed: Tried): void {
    // Each member's own redaction count, as a commit answered at once gives it (`answerMembers`).
    landed.members.forEach((m, i) => {
      m.result = fulfilled({ ...landed, receipt: ownReceipt(landed.receipt, landed.records[i]!) });
    });
    const named = partsOf(cached);
    for (const k of landed.replaced) if (!named.has(k)) this.discard(run, k);
    // The other attempts can no longer land: the object moved past them with this one.
    this.ruledOut(
      run,
      tries.filter((t) => t !== landed),
      named,
    );
    run.finished = true;
    this.finish(run.ns, run.mark, landed);
  }

  /**
   * The parts of attempts whose answer was lost and that can no longer land: the object has moved on
   * from the etag their PUT was conditional on (or is gone), and they are not in it. Never a part the
   * object names (`named`, else the ones `cached` names): an attempt that landed unseen (its write record
   * pruned by the writes after it) may have left the parts the session now stands on.
   */
  private discardUnlanded(
    run: GroupRun,
    tries: readonly Tried[],
    cached: CachedSession | null,
    named = partsOf(cached),
  ): void {
    for (const t of tries)
      if (!cached || cached.etag !== t.ifMatch) {
        for (const k of t.written) if (!named.has(k)) this.discard(run, k);
        t.written = [];
        t.unanswered = false; // ruled out: it can no longer land
        t.ruledOut = true;
      }
  }

  /**
   * Hands what follows a commit to the background; the marker is released once its records (log and
   * audit) are stored: one that failed keeps it, for the compactor's stale healing to restore.
   */
  private finish(ns: string, mark: MarkedWrite, committed: Committed): void {
    const work = this.deps.afterCommit(ns, committed).then(
      ({ settled }) => {
        if (settled)
          for (const { record } of committed.writes) {
            // Forgotten all at once when full: those records are then pruned by count, as before.
            if (this.settled.size >= SETTLED_MAX) this.settled.clear();
            if (record.k.startsWith('w:')) this.settled.add(record.k);
          }
        mark.end(settled);
      },
      () => mark.end(false),
    );
    scheduleFor(committed.writes, work);
  }

  /**
   * Settles the members that are replays (their key is in the session) or refused (If-Match), or asks
   * for a re-read, or finds that an earlier attempt of ours landed. A cached copy is never trusted for
   * an answer: `reread` asks for a fresh read.
   */
  private checkAll(
    open: Member[],
    cur: StoredSession,
    fromCache: boolean,
    tries: readonly Tried[],
  ): 'reread' | { landed: Tried } | null {
    for (const m of open) {
      let verdict: Verdict;
      try {
        verdict = this.check(m, cur, fromCache, tries);
      } catch (err) {
        m.result = rejected(err);
        continue;
      }
      if (verdict === 'reread' || (verdict && 'landed' in verdict)) return verdict;
      if (verdict) m.result = fulfilled(verdict);
    }
    return null;
  }

  private check(
    m: Member,
    cur: StoredSession,
    fromCache: boolean,
    tries: readonly Tried[],
  ): Verdict {
    const { req, claims } = m;
    const previous = findClaim(cur, claims, this.deps.now()) ?? m.storedOut;
    if (previous) {
      if (fromCache) return 'reread';
      // Attempts of one write share their key and may share a millisecond: the revision tells them apart.
      const revision = (previous.r as { revision?: number }).revision;
      const mine = tries.findLast(
        (t) => t.receipt.revision === revision && this.holds(t, cur, previous),
      );
      if (mine) return { landed: mine };
      if (
        previous.k === claims.keyed &&
        req.fingerprint !== undefined &&
        otherRequest(previous, req.fingerprint, req.ctx.op ?? req.op)
      ) {
        throw unprocessable('this Idempotency-Key was used for a different request');
      }
      return { session: cur, receipt: receiptOf(previous, cur.id), replayed: true };
    }
    if (!revisionMatches(req.expected, cur.revision)) {
      if (fromCache) return 'reread';
      throw preconditionFailed(revisionMismatch(req.expected!, cur.revision));
    }
    return null;
  }

  /**
   * Whether `cur` holds attempt `t`'s records (`previous` among them), so that it is this attempt that
   * landed: every keyed one with its time and fingerprint, and every unkeyed one (its key is this
   * process's own), unless records of its revision may have been pruned. Another server's write with the
   * same Idempotency-Key, built on the same revision in the same millisecond, holds the key only: until
   * 2026-12-06 that was taken for this attempt, and the requests grouped with it were answered stored
   * (review s57b); nor may the object hold records of that commit this attempt did not make (another
   * server grouped the same request with others: review s57e). Another server's same request alone in
   * its commit cannot be told from this attempt (the answer is the same; its log and audit records are
   * written once more, under the same names).
   */
  private holds(t: Tried, cur: StoredSession, previous: WriteRecord): boolean {
    if (!t.records.some((r) => r.k === previous.k && r.at === previous.at)) return false;
    const writes = cur.satchel?.writes ?? [];
    // A commit's records share its time and revision: one there that this attempt did not make is another
    // server's, which grouped the same keyed request with others (review s57e).
    const ours = new Set(t.records.map((r) => r.k));
    const revision = t.receipt.revision;
    if (writes.some((w) => w.at === previous.at && !ours.has(w.k) && revisionOf(w) === revision))
      return false;
    const pruned = !unkeyedKept(cur.satchel, revision);
    return t.records.every((r, i) => {
      if (r.k.startsWith('w:')) return pruned || writes.some((w) => w.k === r.k && w.at === r.at);
      const m = t.members[i]!;
      const found =
        r.k === previous.k ? previous : (findClaim(cur, m.claims, this.deps.now()) ?? m.storedOut);
      return found?.k === r.k && found.at === r.at && found.g === r.g;
    });
  }

  /** Builds, runs the pipeline, seals and PUTs once; `lost` when another writer changed the object first. */
  private async attempt(
    run: GroupRun,
    cached: CachedSession,
    members: Member[],
    fromCache: boolean,
  ): Promise<Attempt> {
    const { now } = this.deps;
    const { writeId } = run;
    const cur = cached.session;
    const nowMs = Math.max(now(), (Date.parse(cur.updated_at) || 0) + 1);
    const nowIso = new Date(nowMs).toISOString();
    const { next, built } = buildAll(members, cur, nowIso);
    // "Nothing to change" is an answer: never given from a cached copy that may be behind.
    if (built.length === 0 && fromCache) return { reread: true };
    const noop = { session: cur, receipt: makeReceipt(cur, cached.bytes, 0, 0), replayed: false };
    const unchanged = members.filter((m) => !built.some((b) => b.m === m));
    for (const m of unchanged) m.result = fulfilled(noop);
    if (built.length === 0) return { lost: false, committed: null };
    const records = built.map(({ m }) => recordOf(m, nowMs));
    // The session's incarnation: key records' names, and what a commit proves (existence.ts).
    const incarnation = incarnationOf(cur);
    const { satchel, plan, sweep } = this.bookkeeping(run, cur, incarnation, records);
    const draft: StoredSession = {
      ...next,
      updated_at: nowIso,
      revision: cur.revision + 1,
      satchel,
    };
    // Keyed records leaving the object are stored before the commit, alongside the encoding's parts.
    const storing = this.storeKeyRecords(run, incarnation, plan.store);
    const first = built[0]!.m.req;
    // Every member is open again when the commit does not land: the re-read (or the error) decides.
    const reopen = () => unchanged.forEach((m) => delete m.result);
    // A partial copy that cannot take this write (a rescan, the cap, a fold) reads the whole session, once
    // this attempt's key records are stored (or failed): a re-read that finds the session deleted then
    // deletes them after they landed, not before.
    const encoded = await this.saveAndEncode(run, cached, draft, built, records, nowMs).catch(
      (err: unknown) => {
        if (!NeedsWholeSession.is(err)) throw err;
        return null;
      },
    );
    if (!encoded) {
      reopen();
      await storing.catch(() => undefined);
      return { reread: true, whole: true };
    }
    const { saved, receipt, sealed } = encoded;
    const session = saved.session;
    const committed: Committed = {
      session,
      receipt,
      writeId,
      op: first.ctx.op ?? first.op,
      added: Math.max(0, session.messages.length - cur.messages.length),
      writes: built.map(({ m }, i) => ({ record: records[i]!, ctx: m.req.ctx })),
      prior: cur,
      ...(sealed.held !== undefined ? { held: sealed.held } : {}),
      ...(saved.head_dropped ? { headDropped: true as const } : {}),
    };
    const tried = { ...committed, records, members: built.map((b) => b.m) };
    const outcome = await storing
      .then(
        () => this.commit(run, cached, incarnation, sealed, tried),
        (err: unknown) => {
          for (const k of sealed.written) this.discard(run, k); // no commit names them
          throw err;
        },
      )
      .catch((err: unknown) => {
        reopen();
        throw err;
      });
    if (outcome.lost) reopen();
    else answerMembers(built, committed, records);
    if (!outcome.lost) this.afterLanded(run, incarnation, plan.ahead, sweep);
    return outcome;
  }

  /** Runs the save pipeline on the draft, completes the write records, and encodes the object to PUT. */
  private async saveAndEncode(
    run: GroupRun,
    cached: CachedSession,
    draft: StoredSession,
    built: { m: Member; added: number }[],
    records: WriteRecord[],
    nowMs: number,
  ): Promise<{ saved: ReturnType<SavePipeline['apply']>; receipt: WriteReceipt; sealed: Encoded }> {
    const cur = cached.session;
    const first = built[0]!.m.req;
    // A group's receipt counts what the whole commit did (its members share it), so the members' too.
    const before = built.reduce((n, { m }) => n + (m.req.ctx.redacted ?? 0), 0);
    const audit = (at: ReserveInput) => (i: number) => {
      const { m } = built[i]!;
      const n = at.session.messages.length;
      return this.auditFields(m.req.ctx.op ?? m.req.op, m.req.ctx, n, n, at.sources);
    };
    const saved = this.deps.pipeline.apply({
      next: draft,
      previous: cur,
      previousBytes: cached.bytes,
      newMessages: newTail(cur.messages, draft.messages),
      replaced: ['replace', 'import'].includes(first.ctx.op ?? first.op),
      ...(first.ctx.knownValues ? { knownValues: first.ctx.knownValues } : {}),
      ...(cached.held !== undefined ? { held: cached.held } : {}),
      // The records' growth, and the mark of text removed (below): `,"x":` and the revision.
      reserve: (at) =>
        recordGrowth(
          records,
          { ...at, redactions: at.redactions + before },
          audit(at),
          first.ctx.receiptExtras?.(at.session),
        ) + `,"x":${draft.revision}`.length,
    });
    // A write that removes text its session's older versions hold (anything but an append that changed
    // nothing before it: no group dropped by the cap, no request secrets redacting old text again, no
    // rescan under new rules or configured secrets, `scanOf`, that redacted something) marks
    // the session with its revision (`satchel.x`): the search index prunes the older versions, and a log
    // or index record of one that lands after that goes (existence.ts, docs/design.md).
    const op = first.ctx.op ?? first.op;
    if (
      draft.revision > 1 &&
      ((op !== 'append' && op !== 'continue') ||
        saved.dropped_groups ||
        first.ctx.knownValues?.length ||
        (saved.redactions && scanOf(cur) !== scanOf(saved.session)))
    )
      saved.session.satchel = { ...saved.session.satchel!, x: draft.revision };
    // The cap judges a group as one append: it refuses only when the newest message would go, and may drop
    // a member's messages (one that can never fit) with history to make room for a later member. Each
    // member then runs on its own (`commitLoop`), where the cap answers for it alone (this error is never
    // an answer).
    if (built.length > 1 && saved.dropped_groups > 0) throw payloadTooLarge('group over the cap');
    const receipt = makeReceipt(saved.session, 0, saved.redactions + before, saved.dropped_groups);
    // A group's members share the revision, not the count: each has the secrets of its own messages and
    // request (the commit's total told every member, and its audit record, of the others' secrets); what
    // no member's messages held (older text a rescan redacted) goes with the first.
    if (built.length > 1) {
      let at = cur.messages.length;
      const own = built.map(({ m, added }) => {
        let n = m.req.ctx.redacted ?? 0;
        for (const end = at + added; at < end; at++) n += saved.byMessage[at] ?? 0;
        return n;
      });
      own[0]! += receipt.redactions - own.reduce((a, b) => a + b, 0);
      records.forEach((r, i) => ownRedactions.set(r, own[i]!));
    }
    built.forEach(({ m, added }, i) => {
      const fields = [m.req.ctx, added, saved.session.messages.length, saved.sources] as const;
      records[i]!.a = this.auditFields(m.req.ctx.op ?? m.req.op, ...fields);
    });
    const extras = first.ctx.receiptExtras?.(saved.session);
    const next = { session: saved.session, receipt, records, extras, nowMs };
    return { saved, receipt, sealed: await this.encode(run, cached, next) };
  }

  /**
   * The bookkeeping a write leaves (`satchel`): its records added and the old ones pruned; keyed records
   * past KEYED_PUSH_AT leave (`out`, stored first by the caller) and their keys join the filters (`kf`),
   * whose expired generations go.
   */
  private bookkeeping(
    run: GroupRun,
    cur: StoredSession,
    incarnation: string,
    records: WriteRecord[],
  ): { satchel: NonNullable<StoredSession['satchel']>; plan: StoreOutPlan; sweep?: DaySweep } {
    const now = this.deps.now();
    const cap = this.deps.pipeline.maxSessionBytes ?? Infinity;
    // Unkeyed records (16 of one-off writers: a Lambda container, a Worker isolate, another server) take
    // at most a sixteenth of a cap under 1 MiB: under the 4 KiB minimum they took 2.3 KiB (review s54c).
    // Above, 16 records of a few hundred bytes are far below it, and none is measured.
    const unkeyedBytes = cap < 1 << 20 ? cap / 16 : Infinity;
    const settled = (k: string) => this.settled.has(k);
    const { writes, wp } = keepWrites(cur, records, now, settled, unkeyedBytes);
    const stored = (r: WriteRecord) => this.keyRecords.has(run.ns, run.id, incarnation, r);
    const storing = (r: WriteRecord) => this.keyRecords.storingNow(run.ns, run.id, incarnation, r);
    // Keyed records take at most an eighth of the cap in the object (`storeOut`).
    const budget = cap / 8;
    const plan = storeOut(writes, records, now, stored, run.warm, storing, budget);
    const { kept, leaving } = plan;
    const satchel = { ...cur.satchel, writes: kept, ...(wp ? { wp } : {}) };
    const before = filtersOf(cur.satchel);
    // Filters that are not Satchel's are left as they are (a key not in the object is then looked up).
    if (before === null && leaving.length === 0) return { satchel, plan };
    const kf: KeyFilter[] = addToFilters(before, leaving, now);
    const next = kf.length || cur.satchel?.kf ? { ...satchel, kf } : satchel;
    // The days of stored-out records no retry reaches go at most once a day, with the next records out.
    const sweep = leaving.length ? sweepDue(cur.satchel, now) : undefined;
    return { satchel: sweep ? { ...next, ks: sweep.to } : next, plan, ...(sweep ? { sweep } : {}) };
  }

  /**
   * The keyed-record work that waits for a landed commit, in the background: the days of stored-out
   * records no retry reaches (once `ks` has landed), and the records the commit kept that this process
   * stores now (once the commit shows that they are the live session's) and drops in its next write.
   */
  private afterLanded(
    run: GroupRun,
    incarnation: string,
    ahead: WriteRecord[],
    sweep: DaySweep | undefined,
  ): void {
    const { objects } = this.deps;
    const report = this.report;
    if (sweep)
      run.schedule(
        sweepKeyRecords(objects, run.ns, run.id, sweep).catch(
          report('keyed records not swept (the next sweep or the delete takes them)'),
        ),
      );
    if (ahead.length) {
      const storing = this.deps.existence.follow(
        this.keyRecords.storeAhead(run.ns, run.id, incarnation, ahead),
      );
      run.schedule(storing.catch(report('keyed records not stored ahead, or not checked')));
    }
  }

  /**
   * Stores keyed records out of the object in packs, create-only (one stored before by a lost attempt is
   * the same), once the run's marker is stored. The run remembers them: when the session turns out
   * deleted, they go.
   */
  private storeKeyRecords(
    run: GroupRun,
    incarnation: string,
    out: WriteRecord[],
  ): Promise<unknown> {
    if (out.length === 0) return Promise.resolve();
    run.keyRecordsFor = incarnation;
    const { names, done } = this.keyRecords.store(run.ns, run.id, incarnation, out, run.mark.ready);
    run.keyRecordsStored.push(...names);
    run.keyRecordsDone.push(done);
    run.schedule(done.catch(() => undefined)); // awaited by the attempt
    return done;
  }

  /**
   * A run that ends without a commit (an error, a refusal, the deadline) may leave objects that landed
   * after its last read, or are still on their way: its key records, and the parts of attempts whose
   * answer was lost. Nothing after them showed the session alive, and a delete may have listed them
   * before they landed. Once they settle, the session's object tells (a GET, or a commit of this process
   * meanwhile): when their incarnation is gone, so are they (nothing can name them any more).
   */
  private checkLeft(run: GroupRun): void {
    if (run.markerFailed) return; // none was sent
    const left = new Map<string, string[]>();
    const add = (incarnation: string, names: string[]) => {
      if (names.length) left.set(incarnation, [...(left.get(incarnation) ?? []), ...names]);
    };
    add(run.keyRecordsFor ?? '', run.keyRecordsStored.splice(0));
    const parts = run.tries.filter((t) => t.uncertain && t.written.length);
    for (const t of parts) add(t.incarnation, [...t.written]);
    const done = Promise.allSettled(run.keyRecordsDone);
    const { existence } = this.deps;
    for (const [incarnation, names] of left) {
      const erase = () => this.deps.objects.delete(names);
      const check = existence
        .eraseUnlessLive(run.key, incarnation, erase, { strict: true, after: done })
        .then(() => this.dropUnnamed(run, parts));
      run.schedule(
        existence.follow(check).catch(this.report('records or parts left by a write not checked')),
      );
    }
  }

  /**
   * The session lives on: the parts of attempts whose answer was lost go when its object has moved past
   * the etag their PUT was conditional on (they can no longer land) and does not name them (they did not,
   * or a later commit replaced them). Else they would stay while the session lives, holding text its
   * user may trim away, and, never stored, the failed request's own message.
   */
  private async dropUnnamed(run: GroupRun, tries: Tried[]): Promise<void> {
    if (!tries.some((t) => t.written.length)) return;
    const now = await this.deps.load(run.ns, run.id, true);
    if (!now) return; // gone: erased above
    const named = partsOf(now);
    for (const t of tries) {
      const names = t.written.splice(0);
      if (t.ifMatch !== now.etag) {
        const unnamed = names.filter((k) => !named.has(k));
        if (unnamed.length) await this.deps.objects.delete(unnamed);
      } else if (names.length) {
        // It may still land: the next commit of this process to the session rules it out (`dropLeft`).
        const left = this.leftParts;
        left.set(run.key, [...(left.get(run.key) ?? []), ...names]);
        if (left.size > 256) left.delete(left.keys().next().value!);
      }
    }
  }

  /**
   * After a commit: earlier attempts, and those of runs before (`dropLeft`), can no longer land. `named`:
   * the parts the committed object names (never the cache's copy, which a delete meanwhile leaves empty).
   */
  private ruledOut(run: GroupRun, tries: readonly Tried[], named: Set<string>): void {
    this.discardUnlanded(run, tries, null, named);
    this.dropLeft(run, named);
  }

  /**
   * After a commit of this process to `run`'s session: the parts `dropUnnamed` kept can no longer land
   * (the object moved on with this commit), and go unless the object names them.
   */
  private dropLeft(run: GroupRun, named: Set<string>): void {
    const left = this.leftParts.get(run.key);
    if (!left) return;
    this.leftParts.delete(run.key);
    for (const k of left) if (!named.has(k)) this.discard(run, k);
  }

  /**
   * The conditional PUT of the encoded object: the commit. When it lands, the cache holds the new
   * object and the parts only the replaced object named go; when it is lost (or its answer is), the re-read
   * decides.
   */
  private async commit(
    run: GroupRun,
    cached: CachedSession,
    /** `cached`'s (`incarnationOf`). */
    incarnation: string,
    sealed: Encoded,
    tried: Omit<
      Tried,
      'uncertain' | 'unanswered' | 'ifMatch' | 'replaced' | 'written' | 'incarnation'
    >,
  ): Promise<Exclude<Attempt, { reread: true }>> {
    const { session, receipt } = tried;
    let landedAt: number;
    await run.mark.ready; // no commit before its marker (a failed marker fails the write)
    try {
      const sent = this.deps.existence.tick();
      const epoch = this.deps.cache.epoch; // a delete meanwhile: no copy is kept
      const { etag } = await this.deps.objects.put(run.key, sealed.body, { ifMatch: cached.etag });
      // The object the PUT was conditional on existed when it landed, after every record landed before.
      landedAt = this.deps.existence.proven(run.key, stateOf(session), sent, etag);
      const { encoded, base, segs } = sealed;
      // A partial copy keeps a GET's bytes of the parts its object still names.
      const raw = sealed.held !== undefined ? rawNamed(cached.raw, { base, segs }) : undefined;
      this.deps.cache.drop(run.key);
      this.deps.cache.putRead(
        run.key,
        {
          etag,
          session,
          bytes: receipt.bytes,
          ...(encoded ? { encoded } : {}),
          ...(base ? { base, segs: segs ?? [] } : {}),
          ...(sealed.held !== undefined ? { held: sealed.held } : {}),
          ...(raw ? { raw } : {}),
        },
        epoch,
      );
    } catch (err) {
      const uncertain = mayHaveLanded(err);
      // Parts written for this attempt only: nothing names them unless the PUT may have landed.
      if (!uncertain) for (const k of sealed.written) this.discard(run, k);
      // Lost to another writer, or perhaps landed with the answer lost: the re-read tells which.
      if (!PreconditionFailedError.is(err) && !uncertain) throw err;
      const kept = partsOf(sealed);
      const replaced = [...partsOf(cached)].filter((k) => !kept.has(k));
      const written = uncertain ? sealed.written : [];
      return {
        lost: true,
        tried: {
          ...tried,
          uncertain,
          unanswered: uncertain && noAnswer(err),
          replaced,
          ifMatch: cached.etag,
          written,
          incarnation,
        },
      };
    }
    // The parts the replaced object named are no longer read by anyone who reads the session now.
    const kept = partsOf(sealed);
    for (const k of partsOf(cached)) if (!kept.has(k)) this.discard(run, k);
    // Earlier attempts whose answer was lost can no longer land: this one moved the object on. What
    // it names is `kept`, never the cache's copy (which a delete meanwhile leaves empty).
    this.ruledOut(run, run.tries, kept);
    if (sealed.folded) run.schedule(this.sweepParts(run));
    const { records: _r, members: _m, ...committed } = tried;
    return { lost: false, committed: { ...committed, landedAt } };
  }

  /**
   * Encodes the next state as the session object (docs/design.md, "Base, segments and delta"). A session under
   * `splitBytes` is stored whole. A larger one is stored as a delta on an immutable base and segments:
   * the messages after theirs, and every other field. When the write keeps the parts' messages as they
   * are, only the delta is written while its messages stay under the segment size; past it, they are
   * sealed first into a new segment (create-only), merged with the ones before it as `planSegments`
   * says. Otherwise (the history changed, or the segments outgrew the base) the write first stores the
   * whole next state as a new base (create-only), and the delta on it is empty.
   */
  private async encode(
    run: GroupRun,
    cached: CachedSession,
    next: {
      session: StoredSession;
      receipt: WriteReceipt;
      records: WriteRecord[];
      extras: Record<string, unknown> | undefined;
      /** The write's time, after the object's `updated_at`: parts' keys carry it (see `sweepParts`). */
      nowMs: number;
    },
  ): Promise<Encoded> {
    const { session, receipt, records, extras, nowMs } = next;
    const { ns, id } = run;
    const { splitBytes } = this.deps;
    const prior = cached.base;
    const same = samePrefix(session.messages, cached.session.messages);
    // The segments whose messages the result still starts with (a pop into a segment drops it, and its
    // other messages go back to the delta); none when it does not start with the base's.
    const segs =
      prior && same >= prior.messages ? keptSegments(cached.segs ?? [], prior, same) : [];
    const kept = segs.reduce((n, s) => n + s.messages, prior?.messages ?? 0);
    let held = cached.held;
    // A partial copy holds only the messages after its parts: it can write a delta on them, not a base.
    if (held !== undefined && !(prior && same >= prior.messages && kept >= held))
      throw new NeedsWholeSession('prefix');
    if (prior && same >= prior.messages) {
      const delta = sealDelta(session, receipt, records, prior, segs, extras);
      // The cached encoding stays a prefix of the result when it covers none of what changed.
      const encoded =
        cached.encoded && cached.encoded.messages.length <= same ? cached.encoded : undefined;
      const segmentBytes = this.deps.segmentBytes ?? segmentSize(splitBytes);
      const partial = held !== undefined ? { held } : {};
      if (delta.tail <= segmentBytes || session.messages.length === kept)
        return { body: delta.body, base: prior, segs, encoded, written: [], ...partial };
      const mint = () => keys.part(ns, id, nowMs);
      let plan = planSegments(session.messages, prior, segs, segmentBytes, mint, held);
      if (plan && 'needs' in plan) {
        // The merge takes segments this copy does not hold: read them (small, and never changed).
        held = await this.fillSegments(ns, id, session.messages, prior, segs, plan.needs);
        plan = planSegments(session.messages, prior, segs, segmentBytes, mint, held);
      }
      if (plan && !('needs' in plan)) {
        await this.storeParts(run, [...plan.bodies]);
        const sealed = sealDelta(session, receipt, records, prior, plan.segs, extras);
        const written = [...plan.bodies.keys()];
        const longer = encoded && extendPrefix(encoded, session.messages, plan.kept);
        const after = held !== undefined ? { held } : {};
        return {
          body: sealed.body,
          base: prior,
          segs: plan.segs,
          encoded: longer,
          written,
          ...after,
        };
      }
    }
    if (held !== undefined) throw new NeedsWholeSession('base');
    const sealed = seal(session, receipt, records, cached.encoded, extras);
    if (!splitBytes || sealed.body.byteLength < splitBytes)
      return { body: sealed.body, encoded: sealed.messages, written: [] };
    const base: BaseRef = {
      key: keys.part(ns, id, nowMs),
      revision: session.revision,
      messages: session.messages.length,
      json: sealed.messages.json.byteLength,
    };
    await this.storeParts(run, [[base.key, sealed.body]]);
    const delta = sealDelta(session, receipt, records, base, [], extras);
    const written = [base.key];
    return { body: delta.body, base, segs: [], encoded: sealed.messages, folded: true, written };
  }

  /**
   * Reads the segments holding messages `from` up to those `messages` holds (a partial copy's), and puts
   * their messages in place; the new index of the first message held. A segment gone means the object
   * moved on (a merge): the write then reads the session whole.
   */
  private async fillSegments(
    ns: string,
    id: string,
    messages: unknown[],
    base: BaseRef,
    segs: readonly SegRef[],
    from: number,
  ): Promise<number> {
    const wanted: { ref: SegRef; at: number }[] = [];
    let at = base.messages;
    for (const ref of segs) {
      if (at >= from && messages[at] === undefined) wanted.push({ ref, at });
      at += ref.messages;
    }
    const found = await Promise.all(wanted.map(({ ref }) => this.deps.objects.get(ref.key)));
    if (found.some((f) => !f)) throw new NeedsWholeSession(`gone: ${ns}/${id}`);
    wanted.forEach(({ ref, at }, i) => {
      const run = decodeSegment(found[i]!.body, ref);
      for (let j = 0; j < run.length; j++) messages[at + j] = run[j];
    });
    return from;
  }

  /**
   * Deletes the session's parts that nothing names and that are older than a write can take: left by a
   * writer that stopped between a part and its commit, or whose commit's answer was lost. A part's key
   * time is its write's time, which is after the `updated_at` of the object the write read: a writer whose
   * clock is behind still keys its parts after the object this sweep follows, so they are never swept
   * before their commit.
   */
  private async sweepParts({ ns, id }: GroupRun): Promise<void> {
    await deleteParts(this.deps.objects, ns, id, { now: this.deps.now() }).catch(() => undefined);
  }

  /**
   * Stores new parts create-only, once the run's marker is stored. When one fails, so does the write, and
   * no commit names them: each goes once every PUT has settled (one whose answer was lost may have landed,
   * and a delete may have listed `b/<id>/` before).
   */
  private async storeParts(run: GroupRun, parts: [string, Uint8Array][]): Promise<void> {
    await run.mark.ready;
    try {
      await settleAll(parts.map(([key, body]) => putOnce(this.deps.objects, key, body)));
    } catch (err) {
      for (const [key] of parts) this.discard(run, key);
      throw err;
    }
  }

  /** A handler for background work that failed: the deployment's `onError` hears `what`. */
  private readonly report =
    (what: string) =>
    (err: unknown): void =>
      this.deps.onError?.(what, err);

  /**
   * Deletes an object no session names any more (a replaced base holds text a write removed), in the
   * background: while its DELETE fails, again after 1 s, 2 s, 4 s … as a delete's erasing (`eraseRetried`),
   * and the last failure is reported. The run's schedule and the drain (`SessionStore.settled`) wait for
   * the first attempt. Until 2026-12-06 two quick attempts were all, and a quiet session kept the replaced
   * base until its next fold's sweep (review s59a).
   */
  private discard(run: GroupRun, key: string): void {
    const { objects, existence } = this.deps;
    const erased = eraseRetried(
      () => objects.delete(key),
      (err, last) => {
        if (last) this.report('a part or record no session names not erased (gave up)')(err);
      },
    );
    run.schedule(existence.follow(erased));
  }

  /** A write record's audit fields; the device label is redacted, since it is stored in the session. */
  private auditFields(
    op: AuditRecord['op'],
    ctx: WriteContext,
    added: number,
    messages: number,
    sources: string[],
  ): NonNullable<WriteRecord['a']> {
    const d = this.deps.pipeline.redactText(ctx.device ?? 'unknown');
    return { o: op, d, n: added, m: messages, ...(sources.length ? { s: sources } : {}) };
  }

  /**
   * After a create's PUT of `draft` failed with `err`: returns when the object is the create's own after
   * all (its token `satchel.i`: it landed, its answer lost); else throws the create's answer. When it
   * may have landed (`uncertain`) and the object cannot tell (its read failed, or there is none yet while
   * a PUT that got no answer may still land), the answer says so and names the id: a create sent again
   * without it would store a second session.
   */
  private async createFailed(
    key: string,
    draft: StoredSession,
    err: unknown,
    uncertain: boolean,
  ): Promise<void> {
    const { id } = draft;
    const refused = () =>
      PreconditionFailedError.is(err) ? conflict(`session ${id} already exists`) : err;
    if (!uncertain) throw refused();
    const maybe = unconfirmed(
      `storage did not confirm this create: session ${id} may have been stored; read it before ` +
        'creating it again, or create it again with this id (a second create of an id is 409 and stores nothing)',
    );
    const found = await this.deps.objects.get(key).catch(() => {
      throw maybe;
    });
    if (!found) throw noAnswer(err) ? maybe : refused();
    // The token, not the create's write record, which 16 unkeyed writes since would have pruned.
    if (decodeStored(found.body, key).session.satchel?.i === draft.satchel!.i) return;
    throw refused(); // another session's: this create-only PUT never landed
  }
}

/** A session object ready to PUT, with what the cache keeps of it. */
interface Encoded {
  body: Uint8Array;
  encoded?: EncodedMessages | undefined;
  base?: BaseRef;
  segs?: SegRef[];
  /** True when this write stored a new base (`base`): the next sweep of leftover parts follows it. */
  folded?: boolean;
  /** The parts this write stored (a base or segments), which nothing names until the PUT lands. */
  written: string[];
  /** The session is a partial copy: its messages before this index are absent (`CachedSession.held`). */
  held?: number;
}

/** PUTs an immutable part create-only under this write's own key (a precondition failure: an earlier try landed). */
async function putOnce(objects: ObjectStore, key: string, body: Uint8Array): Promise<void> {
  try {
    await objects.put(key, body, { ifNoneMatch: '*' });
  } catch (err) {
    if (!PreconditionFailedError.is(err)) throw err;
  }
}

/** The delta's messages are sealed into a segment once their encoding passes this size (by default). */
export function segmentSize(splitBytes: number): number {
  return Math.max(256, splitBytes / 64);
}

/** Segments merge by level: `SEG_FANOUT` of one level (a factor of it in size) make one of the next. */
const SEG_FANOUT = 8;

/**
 * The segments after sealing the messages past `kept` into a new one: while `SEG_FANOUT` or more of
 * the newest are at or below the newest one's level, they merge into one (re-encoded from the messages), so each
 * message is rewritten about once per level and a reader has fewer than `SEG_FANOUT` segments per level
 * to read. Null when the
 * segments would hold more than the base: the write folds into a new base instead, which bounds the
 * parts of a session and what its base fold costs per appended byte. `bodies` are the new objects.
 */
export function planSegments(
  messages: readonly unknown[],
  base: BaseRef,
  segs: readonly SegRef[],
  size: number,
  mint: () => string,
  held = 0,
): { segs: SegRef[]; bodies: Map<string, Uint8Array>; kept: number } | { needs: number } | null {
  const level = (json: number) =>
    Math.max(0, Math.floor(Math.log(json / size) / Math.log(SEG_FANOUT) + 1e-9));
  const list = [...segs];
  const bodies = new Map<string, Uint8Array>();
  const add = (from: number, to: number) => {
    const body = utf8(JSON.stringify(messages.slice(from, to)));
    const ref = { key: mint(), messages: to - from, json: body.byteLength };
    bodies.set(ref.key, body);
    list.push(ref);
  };
  const start = (i: number) => list.slice(0, i).reduce((n, s) => n + s.messages, base.messages);
  add(start(list.length), messages.length);
  for (;;) {
    // The newest segments at or below the newest one's level (a long message's segment takes the
    // smaller ones before it): 8 or more of them merge into one.
    const top = level(list.at(-1)!.json);
    let run = 0;
    while (run < list.length && level(list[list.length - 1 - run]!.json) <= top) run++;
    if (run < SEG_FANOUT) break;
    const from = start(list.length - run);
    // A partial copy lacks the messages before `held`: the caller reads those segments first.
    if (from < held) return { needs: from };
    for (const gone of list.splice(list.length - run)) bodies.delete(gone.key);
    add(from, messages.length);
  }
  if (list.reduce((n, s) => n + s.json, 0) > base.json) return null;
  return { segs: list, bodies, kept: messages.length };
}

/** `encoded` (an encoding of a prefix of `messages`) extended to their first `n`; undefined when it is not one. */
function extendPrefix(
  encoded: EncodedMessages,
  messages: readonly unknown[],
  n: number,
): EncodedMessages | undefined {
  const have = encoded.messages.length;
  if (have > n || !encoded.messages.every((m, i) => m === messages[i])) return undefined;
  const json = joinArrays(encoded.json, utf8(JSON.stringify(messages.slice(have, n))));
  return { messages: messages.slice(0, n), json };
}

/** How many first messages `next` and `cur` share, the same objects (nothing rewrote them). */
function samePrefix(next: readonly unknown[], cur: readonly unknown[]): number {
  const limit = Math.min(next.length, cur.length);
  let same = 0;
  while (same < limit && next[same] === cur[same]) same++;
  return same;
}

/** The first segments whose messages all lie within the first `same` messages (after the base's). */
function keptSegments(segs: readonly SegRef[], base: BaseRef, same: number): SegRef[] {
  let end = base.messages;
  let j = 0;
  while (j < segs.length && end + segs[j]!.messages <= same) end += segs[j++]!.messages;
  return segs.slice(0, j);
}

/** Each request builds on the one before it; one whose build changes nothing is left out. */
function buildAll(members: Member[], cur: StoredSession, nowIso: string) {
  let next = cur;
  const built: { m: Member; added: number }[] = [];
  for (const m of members) {
    const after = m.req.build(next, nowIso);
    if (!after) continue;
    built.push({ m, added: Math.max(0, after.messages.length - next.messages.length) });
    next = after;
  }
  return { next, built };
}

/** The write record of one request: its key (Idempotency-Key's hash, or its own id); the receipt follows. */
function recordOf(m: Member, at: number): WriteRecord {
  const { keyed, own } = m.claims;
  return {
    k: keyed ?? own,
    ...(keyed && m.req.fingerprint ? { g: m.req.fingerprint.g } : {}),
    at,
    r: {},
  };
}

function fulfilled(value: WriteResult | Tried): PromiseFulfilledResult<WriteResult> {
  const result: WriteResult =
    'records' in value
      ? { session: value.session, receipt: value.receipt, replayed: false }
      : value;
  return { status: 'fulfilled', value: result };
}

function rejected(reason: unknown): PromiseRejectedResult {
  return { status: 'rejected', reason };
}

/** How many trailing messages of `next` are not `cur`'s (by identity): what this write adds or replaces. */
function newTail(cur: readonly unknown[], next: readonly unknown[]): number {
  return next.length - samePrefix(next, cur);
}

/**
 * Answers the members of an attempt that may have landed unseen (`hiddenIn`): trying again could store
 * them twice. The attempt is settled: no later read decides it again.
 */
function hidden(run: GroupRun, t: Tried): void {
  run.unknown = true; // the marker stays
  t.unanswered = false;
  const err = unconfirmed(
    'storage lost the answer to this write and later writes hid its record: it may have been stored; ' +
      'read the session before sending it again',
  );
  // Over whatever the read answered them: a 412 (`If-Match`) may come from this very write.
  for (const m of t.members) m.result = rejected(err);
}

/** How a run's lost attempts went (`WriteLoop.gaveUp`). */
interface Clock {
  /** The time spent on attempts lost to another writer's commit (the contention deadline counts it). */
  contended: number;
  /** When the first of the attempts in a row that storage failed, each still able to land, began. */
  stalledSince?: number;
  /** When the latest attempt began; `last`: what it tried, when it was lost (until `gaveUp` counts it). */
  began: number;
  last?: Tried;
}

/** How long a write tries again after commits storage failed unseen, by default (`storageDeadlineMs`). */
const STORAGE_DEADLINE_MS = defaultRetryPolicy.deadlineMs ?? 8000;

/** True when an attempt that held `m` may have landed or may still land: no read has ruled it out. */
function mayBeStored(run: GroupRun, m: Member): boolean {
  return run.tries.some((t) => t.uncertain && !t.ruledOut && t.members.includes(m));
}

/**
 * The answer of a write that may have been stored, when the run ends without knowing (storage failed
 * or stopped answering after an attempt whose answer was lost): sending it again without its key could
 * store it twice (docs/api.md).
 */
function maybeStored(m: Member): SatchelError {
  const next =
    m.req.ctx.idempotencyKey !== undefined
      ? 'send it again with the same Idempotency-Key, which stores it at most once'
      : 'read the session before sending it again';
  return unconfirmed(`storage did not confirm this write: it may have been stored; ${next}`);
}

/**
 * True when `cur`, read after the attempt `t` that got no answer, cannot tell whether it landed: `cur`
 * is of the same session and at or past t's revision, and the write records that would show it (all
 * unkeyed: a keyed record is kept for the retention window, in the object or stored out) may have been
 * pruned by the unkeyed ones written since (`unkeyedKept` reads the object's prune mark). An attempt a
 * read has ruled out is not asked again (`discardUnlanded`).
 */
function hiddenIn(t: Tried, cur: StoredSession): boolean {
  const revision = t.receipt.revision;
  if (!t.unanswered || t.incarnation !== incarnationOf(cur) || cur.revision < revision)
    return false;
  if (t.records.some((r) => !r.k.startsWith('w:'))) return false;
  return !unkeyedKept(cur.satchel, revision);
}

/**
 * True when the write failed without any answer to an attempt that may have reached storage (a timeout,
 * a broken connection): an error answer (a 5xx, as radosgw gives to racing conditional PUTs) means the
 * backend most likely did not store it.
 */
function noAnswer(err: unknown): boolean {
  if (PreconditionFailedError.is(err)) return err.noAnswer;
  return StorageUnavailableError.is(err) && err.noAnswer;
}

/** How many settled writes a process remembers (`WriteLoop.settled`); one forgotten is pruned by count. */
const SETTLED_MAX = 4096;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The rules and configured secrets a session was last scanned under (`satchel.scan.v`, save.ts). */
function scanOf(session: StoredSession): unknown {
  return (session.satchel?.['scan'] as { v?: unknown } | undefined)?.v;
}

/**
 * Each member's answer once the commit landed: the commit's receipt, with the member's own redaction
 * count (`ownRedactions`) in a group.
 */
function answerMembers(
  built: { m: Member }[],
  { session, receipt, headDropped }: Committed,
  records: WriteRecord[],
): void {
  built.forEach(({ m }, i) => {
    const own = ownReceipt(receipt, records[i]!);
    m.result = fulfilled({ session, receipt: own, replayed: false, headDropped });
  });
}

/** The commit's receipt with a group member's own redaction count, when it has one. */
function ownReceipt(receipt: WriteReceipt, record: WriteRecord): WriteReceipt {
  const own = ownRedactions.get(record);
  return own === undefined ? receipt : { ...receipt, redactions: own };
}

/** The revision a write record's receipt names. */
function revisionOf(w: WriteRecord): number | undefined {
  return (w.r as { revision?: number }).revision;
}
