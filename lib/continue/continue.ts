import type { DeliveryProgress, RequestContext } from '../model/context.js';
import { sha256Hex } from '../model/digest.js';
import { randomHex } from '../model/ids.js';
import { chain } from '../pipeline/save.js';
import type { ExpectedRevision } from '../model/revision.js';
import { badGateway, SatchelError, unavailable } from '../model/errors.js';
import { describeError, type Logger } from '../model/log.js';
import { keys } from '../model/keys.js';
import type { ExternalRefInput, Message, StoredSession, WriteReceipt } from '../model/session.js';
import { makeReceipt } from '../sessions/write-records.js';
import {
  receiptOf,
  type SessionStore,
  type WriteContext,
  type WriteResult,
} from '../sessions/store.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  text,
  utf8,
  type ObjectStore,
} from '../storage/port.js';
import { fitContext, ownMessageLast } from './context.js';
import { LeaseBusyError, Leases, type Lease } from './lease.js';
import { chatClient, ModelError, type ChatFn, type ModelConfig } from './model.js';
import { runTurn, type SearchFn } from './turn.js';

/**
 * The continue operation: store the user message first (the normal append, through the save pipeline),
 * then, when a model is configured, run one model turn under the session's lease and store the turn's
 * messages in one more append. Exactly once: with an Idempotency-Key `K` the user message is appended
 * with `K` and the turn with `K turn`, whose write record keeps the reply; a repeat finds those records
 * and answers the first result without calling the model. A repeat after a failed turn (502, 409, a
 * crash) stores nothing twice and runs the missing turn.
 */

export interface ContinueBody {
  message: string;
  external_refs?: ExternalRefInput[] | undefined;
}

/** The answer to a continue: a write receipt plus whether a model turn ran, and its reply. */
export interface ContinueAnswer extends WriteReceipt {
  model_turn: boolean;
  reply?: string;
}

export interface ContinueOutcome {
  answer: ContinueAnswer;
  /** True when the answer is a stored earlier result (`Idempotent-Replayed`). */
  replayed: boolean;
}

export interface ContinuerOptions {
  sessions: SessionStore;
  objects: ObjectStore;
  /** Absent: continue only stores the message. */
  model?: ModelConfig | undefined;
  search: SearchFn;
  log: Logger;
  /** The model client (default: fetch against `model.url`). */
  chat?: ChatFn;
  /**
   * How long work after the answer may run where the runtime ends it (Workers' `waitUntil`: 30 s); absent
   * where nothing does (Node). Bounds a webhook delivery's wait for the lease, and its turn (`deliver`).
   */
  backgroundMs?: number;
}

/** Lease time beyond the turn's deadline: storing the turn (leases expire by storage's clock). */
const LEASE_MARGIN_MS = 30_000;

/** Kept at the end of `backgroundMs` to store a delivery's turn and mark it done after the model. */
const BACKGROUND_STORE_MS = 5_000;

/**
 * The least time a delivery's turn keeps for its model when it waits for the lease within `backgroundMs`
 * (a turn usually takes seconds; one cut off by the budget is a logged 502, its message stored).
 */
const TURN_ROOM_MS = 10_000;

/** What a continue is besides its request: a webhook's progress, `latest`'s unpin, a delivery's start. */
interface ContinueExtras {
  progress?: DeliveryProgress | undefined;
  unpin?: (() => Promise<void>) | undefined;
  /** A webhook delivery after its 202, nobody waiting on it: when its work began (ms since the epoch). */
  background?: number;
}

/** What a turn uses: the model, the leases, and `ContinueExtras.background`. */
interface TurnUse {
  model: ModelConfig;
  leases: Leases;
  background?: number | undefined;
}

/** Runs continues; built once per app. */
/** A continue's refusals of its message (4xx): what a repeat of the request would meet too. */
const REFUSALS = new Set(['invalid', 'too_large', 'stale', 'key_reused', 'not_found']);

export class Continuer {
  private readonly leases: Leases | undefined;
  private readonly chat: ChatFn | undefined;
  /**
   * The running turns' own signals, which `stopTurns` fires, and whether it was called. Not one
   * process-long AbortController: on Workers an I/O object made in one request cannot be used in another
   * (a turn's signal combined with one made in an earlier request failed its model call).
   */
  private readonly turns = new Set<AbortController>();
  private stopped = false;
  /**
   * When a model turn must end at the latest (ms since the epoch), besides the model timeout: set by a
   * runtime stopped at a time limit of its own (the Lambda entry, per invocation), so that a turn cut off
   * answers its 502 "your message was stored" before the runtime stops (review s57a).
   */
  turnsEndBy: number | undefined;

  constructor(private readonly options: ContinuerOptions) {
    const { model } = options;
    if (model) {
      this.leases = new Leases(options.objects, {
        ttlMs: model.timeoutMs + LEASE_MARGIN_MS,
        waitMs: model.waitMs,
      });
      this.chat = options.chat ?? chatClient(model);
    }
  }

  /**
   * Cuts off the model turns running here, and any that starts after (a Node server's stop,
   * functions/node.ts): each releases its session's lease and answers 502, its message stored and no reply.
   * Until 2026-12-06 a stop closed their connections and left their leases live until they expired (the
   * turn timeout + 30 s), so the retry the CLI printed, and a webhook's redelivery, answered 409 after a
   * restart while no turn ran anywhere (review s56d).
   */
  stopTurns(): void {
    this.stopped = true;
    for (const turn of this.turns) turn.abort();
  }

  /**
   * The session `continue` on `latest` goes to. With an Idempotency-Key the first request's choice is kept
   * in a create-only object for 24 h (like a webhook's claim), so a repeat goes to the same session even
   * when another one has become the latest since; without a key, simply the latest. `unpin` deletes the
   * choice this request stored: `run` calls it when the message was refused (review s56c: a 413, 412 or
   * 422 left the choice, so a corrected retry under the key went to a session no longer the latest).
   */
  async latest(
    ns: string,
    idempotencyKey: string | undefined,
    ctx: RequestContext = {},
  ): Promise<{ id: string; unpin?: () => Promise<void> }> {
    const { sessions, objects } = this.options;
    const resolve = async () => (await sessions.latest(ns, ctx)).id;
    if (idempotencyKey === undefined) return { id: await resolve() };
    const key = keys.latestChoice(ns, await sha256Hex(idempotencyKey));
    const found = await objects.get(key);
    const earlier = found ? parseChoice(found.body, Date.now()) : null;
    if (earlier) return { id: earlier };
    const id = await resolve();
    const body = utf8(JSON.stringify({ session: id, at: new Date().toISOString() }));
    try {
      // Create-only, or replace an expired choice only if nobody else replaced it first.
      await objects.put(key, body, {
        ...(found ? { ifMatch: found.etag } : { ifNoneMatch: '*' }),
        contentType: 'application/json',
      });
      return { id, unpin: () => objects.delete(key) };
    } catch (err) {
      if (!PreconditionFailedError.is(err)) throw err;
      // The same request, at the same moment, elsewhere: go where it went.
      const winner = await objects.get(key);
      return { id: (winner && parseChoice(winner.body, Date.now())) || id };
    }
  }

  /**
   * Stores the user message, then runs and stores one model turn when a model is configured. A webhook's
   * `progress` (lib/hooks/hooks.ts): the message is already stored, so only the turn runs; or it is told
   * when the message is, before the turn.
   */
  run(
    ns: string,
    id: string,
    body: ContinueBody,
    ifMatch: ExpectedRevision | undefined,
    ctx: WriteContext,
    progress?: DeliveryProgress,
    unpin?: () => Promise<void>,
  ): Promise<ContinueOutcome> {
    return this.continueWith(ns, id, body, ifMatch, ctx, { progress, unpin });
  }

  /**
   * A webhook delivery's continue after its 202 (Node, Workers), which no client waits for: its turn waits
   * for the session's lease as long as a lease lives (the model timeout + 30 s), within `backgroundMs`,
   * so that each delivery of a burst on one session gets its turn. Until review s61b it waited
   * SATCHEL_CONTINUE_WAIT_MS (5 s), like a client's continue, and the later ones of a burst ran none.
   */
  deliver(
    ns: string,
    id: string,
    message: Message,
    ctx: WriteContext,
    progress?: DeliveryProgress,
  ): Promise<ContinueOutcome> {
    const body = { message: message.content };
    return this.continueWith(ns, id, body, undefined, ctx, { progress, background: Date.now() });
  }

  private async continueWith(
    ns: string,
    id: string,
    body: ContinueBody,
    ifMatch: ExpectedRevision | undefined,
    ctx: WriteContext,
    { progress, unpin, background }: ContinueExtras,
  ): Promise<ContinueOutcome> {
    const { sessions, model } = this.options;
    const leases = this.leases;
    const message: Message = { role: 'user', content: body.message };
    if (progress?.stored) {
      const session = await sessions.get(ns, id);
      const receipt = makeReceipt(session, 0, 0, 0);
      // Its turn is owed while the session holds the message (the session deleted and created again,
      // trimmed or popped since owes none) and no turn of its own is stored. While the message's keyed
      // record is kept, so is its turn's (written later), which `turn` looks for: another delivery's
      // reply after the message answers that one, not this (until 2026-12-06 it counted as this one's,
      // review s55b). Past the record's 24 h, a reply after the message is taken for its turn. The turn
      // answers the message as stored (maybe its shorter form).
      const key = ctx.idempotencyKey;
      const recorded = !!key && !!(await sessions.keyedRecord(ns, id, session, key));
      const owed = heldMessage(session.messages, message, !recorded);
      if (!owed || !model || !leases)
        return { answer: { ...receipt, model_turn: false }, replayed: true };
      const stored = { session, receipt, replayed: true };
      return this.turnAfter(ns, id, owed, stored, ctx, { model, leases, background });
    }
    const stored = await sessions
      .append(
        ns,
        id,
        {
          messages: [message],
          ...(body.external_refs ? { external_refs: body.external_refs } : {}),
        },
        ifMatch,
        { ...ctx, op: 'continue' },
      )
      .catch(async (err: unknown) => {
        // Refused (a 4xx: the same request sent again would be refused too), `latest`'s choice for the key
        // goes. It stays after a storage failure: a repeat of this request running at once may have stored
        // the message in the chosen session, and a retry must go there (review s56e).
        if (unpin && SatchelError.is(err) && REFUSALS.has(err.kind))
          await unpin().catch(() => undefined);
        throw err;
      });
    if (!model || !leases)
      return { answer: { ...stored.receipt, model_turn: false }, replayed: stored.replayed };
    await progress?.onStored();
    return this.turnAfter(ns, id, message, stored, ctx, { model, leases, background });
  }

  /** The model turn after the stored user message; its failures say that the message is stored. */
  private turnAfter(
    ns: string,
    id: string,
    message: Message,
    stored: WriteResult,
    ctx: WriteContext,
    use: TurnUse,
  ): Promise<ContinueOutcome> {
    return this.turn(ns, id, message, stored, ctx, use).catch((thrown: unknown) => {
      // The message is stored: an answer that hides it invites a retry that stores it again. A reply the
      // cap cannot hold (413) says so too; it is the save pipeline's detail, which says nothing was written.
      const err = foreseen(thrown, this.options.log);
      const revision = storedAs(stored.receipt);
      const retry = retryAdvice(ctx.idempotencyKey, ': a stored turn is answered, not run again');
      // A 404: the session was deleted since the message was stored, and maybe created again under its
      // id, which the store's "session X does not exist" denied (review s55b).
      if (SatchelError.is(err, 'not_found'))
        err.message = `session ${id} was deleted since your message was stored; the reply was not stored`;
      if (SatchelError.is(err, 'too_large'))
        err.message = err.message.replace(
          'nothing was written',
          `your message was stored (${revision}) and no reply was stored`,
        );
      // The message's write succeeded: as its receipt would, the answer carries the revision it made (its
      // ETag); not a 404's or a removed message's 409, whose session no longer holds it (review s67d).
      const tagged = (e: SatchelError) => {
        if (e.kind !== 'not_found' && e.extra.turn !== 'removed')
          e.extra.revision = stored.receipt.revision;
        return e;
      };
      // Storage unreachable, or the write loop's own 503s (the contention deadline, a write that may have
      // been stored): their "try again" would store the message twice without the key.
      const busy = SatchelError.is(err, 'unavailable');
      if (!busy && !StorageUnavailableError.is(err)) throw tagged(err);
      const why = busy
        ? err.message.replace(/; (try again|read the session before sending it again)$/, '')
        : 'storage is unreachable';
      throw tagged(
        unavailable(
          `${why}; your message was stored (${revision}), and whether a model turn was stored ` +
            `for it is unknown. ${retry}`,
          (busy && err.extra.retryAfter) || 1,
        ),
      );
    });
  }

  /**
   * The record of a turn of Idempotency-Key `key` and the key that salted its digest: under `K turn`;
   * for a repeat (`repeat`: the message's record was found) also under `K#turn`, a turn stored before
   * 2026-12-05, in the 24 h such a record is kept.
   */
  private async storedTurn(
    ns: string,
    id: string,
    session: StoredSession,
    key: string,
    repeat: boolean,
  ): Promise<[object, string] | undefined> {
    for (const k of repeat ? [`${key} turn`, `${key}#turn`] : [`${key} turn`]) {
      const found = await this.options.sessions.keyedRecord(ns, id, session, k);
      if (found) return [receiptOf(found, id), k];
    }
    return undefined;
  }

  /**
   * A repeat's answer from its turn's record. The record keeps its reply's digest (`rd`, salted with the
   * turn's key), not its text: the turn's final message is the last of the write that stored it, and a
   * replay answers the newest message of the session (read whole: a replay is rare, and a copy at hand
   * may be partial) with that digest; none when a later write removed it. A trim, pop, replace or rescan
   * that removes the reply thus leaves no copy of it in the record, in the object or in a pack of records
   * stored out (docs/design.md "Continue").
   */
  private async replayTurn(
    ns: string,
    id: string,
    stored: WriteResult,
    [r, keyed]: [object, string],
  ): Promise<ContinueOutcome> {
    const { rd, reply } = r as { rd?: unknown; reply?: unknown };
    const found =
      typeof reply === 'string' // a record of a Satchel before 2026-12-05 17:40 UTC
        ? reply
        : (await this.options.sessions.get(ns, id)).messages.findLast(
            (m) => chain(keyed, [m]) === rd,
          )?.content;
    return { answer: answerOf(stored.receipt, r, found), replayed: true };
  }

  /** The model turn after the stored user message, under the session's lease. */
  private async turn(
    ns: string,
    id: string,
    message: Message,
    stored: WriteResult,
    ctx: WriteContext,
    { model, leases, background }: TurnUse,
  ): Promise<ContinueOutcome> {
    const { sessions } = this.options;
    const bounds: { waitMs?: number; endBy?: number } =
      background === undefined ? {} : this.backgroundBounds(background, model);
    const key = ctx.idempotencyKey;
    // The turn's own key: with a space, which no client's key holds, so no request's key is ever a turn's
    // (`K#turn` was: a continue keyed `K#turn` after one keyed `K` was answered as that turn, and an append
    // keyed `K#turn` took continue `K`'s reply). A repeat looks under `K#turn` too (`storedTurn`).
    const turnKey = key !== undefined ? `${key} turn` : undefined;
    // What keys the reply's digest in the turn's write record: the Idempotency-Key (never stored) when
    // there is one, so that whoever reads the bucket cannot test guesses at a reply removed since.
    const salt = turnKey ?? randomHex(16);
    const replay = (found: [object, string]) => this.replayTurn(ns, id, stored, found);
    const turnRecord = (session: StoredSession) =>
      key === undefined ? undefined : this.storedTurn(ns, id, session, key, stored.replayed);
    // A repeat of a continue whose turn is stored: the first answer, without waiting for the lease.
    const earlier = stored.replayed ? await turnRecord(stored.session) : undefined;
    if (earlier) return replay(earlier);
    const lease = await this.takeLease(leases, ns, id, stored, key, bounds.waitMs);
    try {
      // Read after taking the lease: it holds every turn that finished before ours may start.
      const session = await sessions.get(ns, id);
      const done = await turnRecord(session);
      if (done) return await replay(done);
      // A repeat whose message a pop, trim or replace removed is refused as its first try was, before the
      // model runs (until 2026-12-06 it stored a reply to a message the session no longer held: review s55c).
      const own = this.ownForm(session, message, stored, ctx);
      if (!own && stored.replayed)
        throw new SatchelError(
          'conflict',
          `your message was removed from session ${id} since; nothing was stored`,
          { turn: 'removed' },
        );
      const context = fitContext(ownMessageLast(session.messages, own), model.contextBytes);
      // The session's model and provider, when it names them (odek's "model used"); else the configured ones.
      const use = {
        model: session.model || model.model,
        provider: session.provider || model.provider,
      };
      const turn = await this.runTurn(
        ns,
        context,
        use.model,
        storedAs(stored.receipt),
        ctx,
        bounds.endBy,
      );
      const saved = await sessions.appendTurn(
        ns,
        id,
        { messages: turn, ...use, read: { model: session.model, provider: session.provider } },
        {
          ...ctx,
          redacted: 0, // the user message's write counted them
          op: 'continue',
          idempotencyKey: turnKey,
          receiptExtras: (s) => ({ rd: chain(salt, s.messages.slice(-1)) }),
        },
        stored.session.satchel?.['i'], // the session its message went to
        own, // still there, at or before where it went (a repeat: the session now)
        (stored.replayed ? session : stored.session).messages.length - 1,
      );
      if (saved.replayed) return await replay([saved.receipt, salt]);
      const reply = saved.session.messages.at(-1)?.content ?? '';
      return { answer: answerOf(stored.receipt, saved.receipt, reply), replayed: false };
    } finally {
      await leases.release(lease).catch((err) =>
        this.options.log.warn('continue lease not released; it expires', {
          error: describeError(err),
        }),
      );
    }
  }

  /**
   * The stored (redacted) form of our message: as this call stored it, or on a repeat as the session
   * holds it, sent or redacted, or last if nothing was written since.
   */
  private ownForm(
    session: StoredSession,
    message: Message,
    stored: WriteResult,
    ctx: WriteContext,
  ): Message | undefined {
    if (!stored.replayed) return ownStored(stored.session);
    const { pipeline } = this.options.sessions;
    const forms = [message.content, pipeline.redactText(message.content, ctx.knownValues)];
    return (
      session.messages.findLast((m) => m.role === 'user' && forms.includes(m.content)) ??
      (session.revision === stored.receipt.revision ? session.messages.at(-1) : undefined)
    );
  }

  /**
   * A delivery's turn's bounds (`started`: when its work began): the lease waited for as long as a lease
   * lives; within `backgroundMs` (Workers) only while the turn keeps TURN_ROOM_MS before that ends, and
   * the turn ending by then (a 502 logged, not work cut off in silence), never waiting less than a client.
   */
  private backgroundBounds(
    started: number,
    model: ModelConfig,
  ): { waitMs: number; endBy?: number } {
    const ttl = model.timeoutMs + LEASE_MARGIN_MS;
    const budget = this.options.backgroundMs;
    if (budget === undefined) return { waitMs: ttl };
    const endBy = started + budget - BACKGROUND_STORE_MS;
    return {
      waitMs: Math.max(model.waitMs, Math.min(ttl, endBy - TURN_ROOM_MS - Date.now())),
      endBy,
    };
  }

  private async takeLease(
    leases: Leases,
    ns: string,
    id: string,
    stored: WriteResult,
    key: string | undefined,
    waitMs: number | undefined,
  ): Promise<Lease> {
    try {
      // A stopping server's turns are cut off (`stopTurns`): so is their wait for a lease.
      const stop = () => this.stopped;
      return await leases.take(keys.lease(ns, id), {
        waitMs, // undefined: the options'
        stop,
        // A delivery on Node waits one lease lifetime for each holder, however long its line is; on
        // Workers its invocation's budget bounds it.
        fromHead: waitMs !== undefined && this.options.backgroundMs === undefined,
      });
    } catch (err) {
      if (!LeaseBusyError.is(err)) throw err;
      // On a repeat, the turn running may be this message's own (its first request's): "no turn ran for
      // it" was untrue then (review s55b). This request ran none.
      throw new SatchelError(
        'conflict',
        `another continue is running a model turn on session ${id}; your message was stored ` +
          `(${storedAs(stored.receipt)}); this request ran no turn for it. ` +
          retryAdvice(key, ' after Retry-After'),
        { retryAfter: err.retryAfter, turn: 'busy' },
      );
    }
  }

  private async runTurn(
    ns: string,
    context: Message[],
    modelName: string,
    revision: string,
    { schedule, idempotencyKey, knownValues }: WriteContext,
    endBy: number | undefined,
  ): Promise<Message[]> {
    const { model, log, sessions } = this.options;
    // A query leaves (for the embeddings service) without the request's own secrets (review s68g).
    const search: SearchFn = (n, input, s) =>
      this.options.search(
        n,
        input.query
          ? { ...input, query: sessions.pipeline.redactText(input.query, knownValues) }
          : input,
        s,
      );
    // The turn's own signal, fired by its timeout or by `stopTurns`.
    const turnSignal = new AbortController();
    const left = Math.min(this.turnsEndBy ?? Infinity, endBy ?? Infinity) - Date.now();
    const ms = Math.max(0, Math.min(model!.timeoutMs, left));
    const timer = setTimeout(() => turnSignal.abort(), ms);
    this.turns.add(turnSignal);
    if (this.stopped) turnSignal.abort();
    try {
      const turn = await runTurn(context, {
        chat: this.chat!,
        model: modelName,
        ns,
        search,
        schedule,
        signal: turnSignal.signal,
        contextBytes: model!.contextBytes,
      });
      return turn.messages;
    } catch (err) {
      if (!ModelError.is(err)) throw err;
      // Cut off by `stopTurns` (the chat client calls any abort a timeout).
      const stopped = err.kind === 'timeout' && this.stopped;
      log.warn(stopped ? 'model turn cut off: the server is stopping' : 'model turn failed', {
        kind: err.kind,
        status: err.status,
        said: err.said,
      });
      const why = stopped
        ? 'the server is stopping and cut the model turn off'
        : err.kind === 'timeout' && ms < model!.timeoutMs
          ? `the model did not answer in the ${Math.round(ms / 100) / 10} s this request had left ` +
            "before the runtime's time limit"
          : err.message;
      throw badGateway(
        `${why}; your message was stored (${revision}) and no reply was stored. ` +
          retryAdvice(idempotencyKey, ' to run the turn without storing the message again'),
      );
    } finally {
      clearTimeout(timer);
      this.turns.delete(turnSignal);
    }
  }
}

/**
 * The continue's answer: the turn write's receipt, counting what both writes redacted and dropped, and
 * the reply (left out when a later write removed it from the session).
 */
export function answerOf(
  user: WriteReceipt,
  turn: object,
  reply: string | undefined,
): ContinueAnswer {
  const r = turn as WriteReceipt;
  return {
    id: r.id,
    revision: r.revision,
    turns: r.turns,
    updated_at: r.updated_at,
    bytes: r.bytes,
    redactions: user.redactions + r.redactions,
    dropped_groups: user.dropped_groups + r.dropped_groups,
    untrusted_ingested: r.untrusted_ingested,
    episode_untrusted: r.episode_untrusted,
    model_turn: true,
    reply,
  };
}

/** How long `latest`'s choice for an Idempotency-Key holds: as long as the key's write record. */
const LATEST_CHOICE_MS = 24 * 3600_000;

/** The session of a stored `latest` choice while it holds; null when expired or unreadable. */
function parseChoice(body: Uint8Array, nowMs: number): string | null {
  try {
    const v = JSON.parse(text(body)) as { session?: unknown; at?: unknown };
    const at = typeof v.at === 'string' ? Date.parse(v.at) : NaN;
    if (typeof v.session === 'string' && v.session && at > nowMs - LATEST_CHOICE_MS)
      return v.session;
  } catch {
    // fall through
  }
  return null;
}

/**
 * The stored copy of a webhook's message `own` (its last copy); undefined when the session holds none, or
 * (`unanswered`) an assistant message follows it. Found by its text, or else by its untrusted-content
 * opening tag, whose nonce is fixed per delivery (lib/hooks): the message may be stored in the shorter
 * form the size cap made the hook send, or in the form an earlier version of the summary gave it.
 */
function heldMessage(messages: Message[], own: Message, unanswered: boolean): Message | undefined {
  const user = (test: (m: Message) => boolean) =>
    messages.findLastIndex((m) => m.role === 'user' && test(m));
  let at = user((m) => m.content === own.content);
  const tag = WRAPPER_OPENING.exec(own.content)?.[0];
  if (at < 0 && tag) at = user((m) => m.content.startsWith(tag));
  if (at < 0 || (unanswered && messages.slice(at + 1).some((m) => m.role === 'assistant')))
    return undefined;
  return messages[at];
}

/**
 * A failure after the message was stored as an answer can tell it: anything unforeseen (a bug, an
 * unreadable object) becomes a 503, which the caller makes say that the message is stored, never a 500
 * that hides it (until 2026-12-06 a TypeError was: review s55b).
 */
function foreseen(err: unknown, log: Logger): SatchelError | StorageUnavailableError {
  if (StorageUnavailableError.is(err) || (SatchelError.is(err) && err.kind !== 'corrupt'))
    return err;
  log.error('continue failed', { error: describeError(err) });
  return unavailable('continue failed');
}

/**
 * What a retry of a continue whose message is stored does: with the request's Idempotency-Key, `keyed`
 * follows "Retry with the same Idempotency-Key"; without one it stores the message again (until
 * 2026-12-06 the 502 told a request without a key to retry with "the same" one: review s55b).
 */
function retryAdvice(key: string | undefined, keyed: string): string {
  return key === undefined
    ? 'Without an Idempotency-Key, a retry stores the message again.'
    : `Retry with the same Idempotency-Key${keyed}.`;
}

/** The opening line of Satchel's untrusted-content wrapper (contract v1.1), the nonce included. */
const WRAPPER_OPENING = /^<untrusted_content_[0-9a-f]{16} source="[^"\n]*">\n/;

/** This continue's user message as its append stored it (the last message), if the cap kept it. */
function ownStored(saved: StoredSession): Message | undefined {
  const last = saved.messages.at(-1);
  return last?.role === 'user' ? last : undefined;
}

/**
 * How the message was stored, for the answers of a turn that failed after it ("revision 7; the size cap
 * removed 2 older message groups to make room for it"): they carry no receipt, and what storing the
 * message dropped is acknowledged history gone (until 2026-12-06 they did not say so: review s54c).
 */
function storedAs(receipt: WriteReceipt): string {
  const said = [`revision ${receipt.revision}`];
  const n = receipt.dropped_groups;
  if (n)
    said.push(
      `the size cap removed ${n} older message group${n > 1 ? 's' : ''} to make room for it`,
    );
  const r = receipt.redactions;
  if (r) said.push(`${r} secret${r > 1 ? 's' : ''} in it redacted`);
  return said.join('; ');
}
