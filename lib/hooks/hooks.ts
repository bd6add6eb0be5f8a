import { sha256Hex, toHex } from '../model/digest.js';
import {
  badRequest,
  corrupt,
  notFound,
  payloadTooLarge,
  SatchelError,
  unauthorized,
  unavailable,
  unprocessable,
} from '../model/errors.js';
import type { DeliveryProgress, RequestContext } from '../model/context.js';
import { describeError, type Logger } from '../model/log.js';
import { wrapUntrusted } from '../search/tool.js';
import { idDay } from '../model/ids.js';
import { keys } from '../model/keys.js';
import type { Message } from '../model/session.js';
import type { SessionStore, WriteContext } from '../sessions/store.js';
import { fingerprintOf } from '../sessions/write-records.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  text,
  utf8,
  type ObjectStore,
} from '../storage/port.js';
import { hmacSha256, verifySignature } from './signature.js';
import { parsePayload, summarize, SUMMARY_MAX_BYTES } from './summary.js';

/** One webhook: its HMAC secret, the namespace it writes into, and which session it continues. */
export interface HookConfig {
  secret: string;
  namespace: string;
  /** A session id, `latest` (the namespace's most recently updated session) or `new` (one per delivery). */
  session: string;
}

/**
 * Signed webhooks (`POST /v1/hooks/{name}`), apart from HTTP: admit and verify a request, then store its
 * payload as one untrusted user message, exactly once per delivery id. docs/design.md ("Webhooks") has
 * the marker object and how each crash point heals.
 */

/**
 * Hands a webhook's message to a session: an append, or a continue (the message, then a model turn) when a
 * model is configured. It must make a repeated `ctx.idempotencyKey` a no-op (as append does).
 */
export type Deliver = (
  ns: string,
  sessionId: string,
  message: Message,
  ctx: WriteContext,
  progress?: DeliveryProgress,
) => Promise<unknown>;

/**
 * The delivery without a model: append the message through the save pipeline (nothing when stored). The
 * marker then says `stored` before `done`, as with a model: a redelivery after a failed `done` finds the
 * message stored and writes nothing, also when the session was deleted since (review s55b, finding 5).
 */
export function appendMessage(sessions: SessionStore): Deliver {
  return async (ns, id, message, ctx, progress) => {
    if (progress?.stored) return;
    await sessions.append(ns, id, { messages: [message] }, undefined, ctx);
    await progress?.onStored();
  };
}

/** A request header by (case-insensitive) name. */
export type HeaderLookup = (name: string) => string | undefined;

/** A delivery whose signature checked out. */
export interface VerifiedDelivery {
  name: string;
  hook: HookConfig;
  /**
   * `X-Satchel-Delivery` or `X-GitHub-Delivery`, else `hmac:<hex>`: an HMAC-SHA256 of what the signature
   * covers (`<t>.<raw body>` with the Satchel scheme, the raw body with GitHub's) under a key made from the
   * hook's secret (`macHex`). Until 2026-12-06 it was `sha256:<hex>`, a plain hash: whoever read it in a log
   * could test guesses at the secrets the stored message shows redacted (review s55b, finding 2).
   */
  delivery: string;
  /** `X-GitHub-Event`, when sent. */
  event?: string;
  contentType?: string;
  body: Uint8Array<ArrayBuffer>;
}

/** A delivery whose work failed (logged); `unknown` when its message may have been stored all the same. */
export interface DeliveryFailure {
  failed: true;
  unknown: boolean;
  /** What failed: an answer that waits for the work (Lambda) names it (`failureProblem`). */
  error: unknown;
  /** The session the message went to, or was going to, when the work got that far. */
  session?: string;
  /** The message is stored (by this attempt or an earlier one) and what follows it (a model turn) failed. */
  turnOwed: boolean;
  /** The message and its turn are stored: only the marker's `done` failed (a redelivery writes nothing). */
  delivered: boolean;
}

/** How far a delivery's work got, for its DeliveryFailure. */
interface Progress {
  session?: string;
  stored: boolean;
  delivered: boolean;
}

export interface DeliveryOutcome {
  session: string;
  /** True when the delivery was already stored and nothing was written. */
  duplicate: boolean;
  /** True when the delivery id was already used for another payload: nothing was written (logged). */
  refused?: boolean;
}

/**
 * What the marker object of a delivery holds. `stored`: the message is in the session and what follows it
 * (a continue's model turn) has not finished.
 */
export interface DeliveryMarker {
  session: string;
  state: 'claimed' | 'stored' | 'done';
  /**
   * HMAC-SHA256 (hex) of the delivery's raw body under a key made from the hook's secret (`macHex`), so
   * that the same id sent with another payload is told from a redelivery, while whoever reads the bucket
   * cannot test guesses at the payload's redacted secrets. A plain SHA-256 in a marker written before
   * 2026-12-06 (compared as such). Absent in a marker written before 2026-12-06: that delivery keeps the
   * append key it was given then (`appendKey`).
   */
  digest?: string;
}

type Claim = { marker: DeliveryMarker; etag: string };

export interface WebhookOptions {
  hooks: ReadonlyMap<string, HookConfig>;
  sessions: SessionStore;
  deliver: Deliver;
  log: Logger;
  now?: () => number;
  /**
   * Redacts a summary's strings before it is cut to its budget (a cut secret would no longer match its
   * rule): the save pipeline's `redactText`, so that the configured secret values count too.
   */
  redact: (text: string) => string;
  /**
   * `SATCHEL_MAX_SESSION_BYTES`: a summary takes at most a quarter of it (and 16 KiB), so that a delivery
   * acknowledged with 202 always fits a session, whatever the payload's size.
   */
  maxSessionBytes?: number;
}

/** Receives the configured webhooks: verification before the response, storage after it. */
export class WebhookReceiver {
  private readonly now: () => number;
  /** Deliveries whose work is running (after their 202 on Node and Workers), for `abandon`. */
  private readonly running = new Set<VerifiedDelivery>();
  /** Deliveries whose id the marker holds for another payload, and why (`plannedSession` answers 422). */
  private readonly refused = new WeakSet<VerifiedDelivery>();
  private stopReason: string | undefined;

  constructor(private readonly options: WebhookOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks a request: 404 for an unknown hook, 401 without a signature header (both before the body is
   * read), then reads the body and checks its signature (401 when it does not match or is stale).
   */
  async verify(
    name: string,
    header: HeaderLookup,
    readBody: () => Promise<Uint8Array<ArrayBuffer>>,
  ): Promise<VerifiedDelivery> {
    const hook = this.options.hooks.get(name);
    if (!hook) throw notFound(`there is no webhook called ${JSON.stringify(name.slice(0, 64))}`);
    const signatures = {
      github: header('x-hub-signature-256'),
      satchel: header('x-satchel-signature'),
    };
    if (signatures.github === undefined && signatures.satchel === undefined)
      throw unauthorized('send X-Hub-Signature-256 or X-Satchel-Signature', HOOK_CHALLENGE);
    const body = await readBody();
    const checked = await verifySignature(hook.secret, signatures, body, this.now());
    if (!checked.ok) throw unauthorized(checked.reason, HOOK_CHALLENGE);
    const deliveryHeader =
      header('x-satchel-delivery') !== undefined ? 'X-Satchel-Delivery' : 'X-GitHub-Delivery';
    const sent = header(deliveryHeader.toLowerCase());
    if (sent !== undefined && !/^[\x21-\x7e]{1,255}$/.test(sent)) {
      throw badRequest(`${deliveryHeader} must be 1-255 visible ASCII characters`, [
        { path: deliveryHeader, message: 'invalid' },
      ]);
    }
    // GitHub's event names (`push`, `check_run`); anything else, which no signature covers, is left out of
    // the task (a token glued to `push` reached the task and the index: review s61b).
    const named = header('x-github-event');
    const event =
      named !== undefined && /^[a-z][a-z0-9_.-]{0,63}$/i.test(named) ? named : undefined;
    const contentType = header('content-type');
    return {
      name,
      hook,
      // Without a delivery header: the same signed request sent again is a redelivery; with the Satchel
      // scheme, a new signing (a new `t`) of the same body is another delivery, not one to drop.
      delivery: sent ?? `hmac:${await macHex(hook.secret, 'delivery', checked.signed)}`,
      ...(event ? { event } : {}),
      ...(contentType ? { contentType } : {}),
      body,
    };
  }

  /**
   * The session a delivery goes to, when that is known before the work runs: a fixed id, or `new`'s,
   * which its claim decides (`claimed`: the session `process` claimed, or found in the delivery's marker,
   * maybe another day's id; undefined when the work failed before that). Undefined for `latest`.
   */
  async plannedSession(
    d: VerifiedDelivery,
    claimed: Promise<string | undefined>,
  ): Promise<string | undefined> {
    const fixed = d.hook.session === 'latest' ? undefined : d.hook.session;
    const session = d.hook.session === 'new' ? await claimed : fixed;
    // Known here when the answer waited for the marker (a `new` hook's claim, or Lambda's whole work).
    if (this.refused.has(d))
      throw unprocessable(
        `delivery ${JSON.stringify(d.delivery)} of webhook ${d.name} ${REFUSED}, and nothing ` +
          'was stored: a redelivery must send the same body. Send this payload under a new delivery id.',
      );
    return session;
  }

  /**
   * Logs every delivery whose work is still running as failed, with `why`: for a process that stops
   * before that work ends (functions/node.ts), so that the operator knows what to redeliver.
   */
  /**
   * The server is stopping (functions/node.ts, as it cuts model turns off): a delivery that fails from now
   * on is logged with its id and `why`, as `abandon` logs one still running at the end.
   */
  stopping(why: string): void {
    this.stopReason = why;
  }

  abandon(why: string): void {
    for (const d of this.running)
      this.options.log.warn('webhook delivery failed', {
        hook: d.name,
        delivery: d.delivery,
        error: why,
      });
    this.running.clear();
  }

  /**
   * Stores one delivery, exactly once: a done marker makes a redelivery a no-op; a claimed one sends a
   * retry to the session first chosen; the append's idempotency key makes a retry after a crash a no-op
   * inside the session. A marker whose digest is not this body's is another payload under a reused id:
   * refused, logged (`webhook delivery refused`), nothing written. Never throws: a failure is logged (a
   * redelivery retries it) and gives a DeliveryFailure.
   * `onClaim` hears the session the delivery's marker names once it is read or claimed (undefined when
   * the work fails before), so that the 202 can name it.
   */
  async process(
    d: VerifiedDelivery,
    ctx: RequestContext = {},
    onClaim: (session: string | undefined) => void = () => undefined,
    /** Told once the delivery's message is stored (by this attempt or an earlier one), before its turn. */
    onStored: () => void = () => undefined,
  ): Promise<DeliveryOutcome | DeliveryFailure> {
    const markerKey = await markerKeyOf(d);
    this.running.add(d);
    const at: Progress = { stored: false, delivered: false };
    const heard = () => ((at.stored = true), onStored());
    try {
      const outcome = await this.store(d, markerKey, { ctx, at }, onClaim, heard);
      if (outcome.refused) {
        // Not a redelivery, and not stored: the sender's ids repeat (a counter reset, two senders).
        this.options.log.warn('webhook delivery refused', {
          hook: d.name,
          delivery: d.delivery,
          session: outcome.session,
          error: `the delivery ${REFUSED}; send it under a new id`,
        });
        return outcome;
      }
      this.options.log.info('webhook delivered', {
        hook: d.name,
        session: outcome.session,
        duplicate: outcome.duplicate,
      });
      return outcome;
    } catch (err) {
      const failure: DeliveryFailure = {
        failed: true,
        // The session write ended without storage's answer (lib/model/errors.ts `unconfirmed`).
        unknown: SatchelError.is(err) && err.extra.maybeStored === true,
        error: err,
        ...(at.session !== undefined ? { session: at.session } : {}),
        turnOwed: at.stored && !at.delivered,
        delivered: at.delivered,
      };
      // The delivery id the sender shows, to redeliver (until review s61b only the marker's key, a hash of
      // it); a stopping server that cut its turn off says so, as `abandon` does.
      const error = this.stopReason ?? failureLine(failure);
      this.options.log.warn('webhook delivery failed', {
        hook: d.name,
        delivery: d.delivery,
        marker: markerKey,
        error,
      });
      return failure;
    } finally {
      this.running.delete(d);
      onClaim(undefined); // no-op once the claim was heard
    }
  }

  private async store(
    d: VerifiedDelivery,
    markerKey: string,
    { ctx, at }: { ctx: RequestContext; at: Progress },
    onClaim: (session: string | undefined) => void,
    onStored: () => void,
  ): Promise<DeliveryOutcome> {
    const { sessions } = this.options;
    const ns = d.hook.namespace;
    const fresh = await hookSessionId(d.hook.secret, d.name, d.delivery, this.now());
    const legacy = await legacyHex(d.name, d.delivery);
    // Today's id or an earlier day's (the same hex), or one an earlier Satchel's claim names (`legacyHex`).
    const own = (id: string) => id.endsWith(fresh.slice(8)) || id.endsWith(legacy);
    const base: WriteContext = {
      device: `webhook:${d.name}`,
      ...(ctx.schedule ? { schedule: ctx.schedule } : {}),
    };
    const first = await this.claim(d, markerKey, fresh, ctx, onClaim);
    if ('outcome' in first) return first.outcome;
    let claim: Claim = { marker: first.marker, etag: first.etag };
    // The nonce the delivery's message was stored with, under an earlier secret; else this secret's.
    const nonce = first.nonce ?? (await wrapperNonce(d));
    const { summary, message } = await this.messageOf(d, nonce);
    const deliver = this.sender(d, message, nonce, {
      ...base,
      idempotencyKey: appendKey(d, claim.marker),
      op: 'continue',
      ...(summary.redactions ? { redacted: summary.redactions } : {}),
    });
    // A target `latest` chose is one that existed; when it answers 404 it was deleted since, and
    // re-creating it would bring a deleted session back. The delivery moves to its own session instead.
    const ownOrFixed = (id: string) => own(id) || id === d.hook.session;
    for (;;) {
      const id = claim.marker.session;
      at.session = id;
      const progress: DeliveryProgress = {
        stored: claim.marker.state === 'stored',
        onStored: async () => {
          onStored();
          // Best effort: without it, a redelivery within 24 h still finds the message by its key.
          claim = await markStored(sessions.objects, markerKey, claim, this.now()).catch((err) => {
            this.options.log.warn('webhook marker not marked stored', {
              hook: d.name,
              marker: markerKey,
              error: describeError(err),
            });
            return claim;
          });
        },
      };
      if (progress.stored) {
        onStored();
        // An earlier attempt stored the message: only its turn may be owed. A 404: the session was deleted.
        await deliver(id, progress).catch((err: unknown) => {
          if (!SatchelError.is(err, 'not_found')) throw err;
        });
        at.delivered = true;
        await finishMarker(sessions.objects, markerKey, claim, this.now());
        return { session: id, duplicate: false };
      }
      if (own(id)) await this.createIfMissing(ns, id, summary.title, base);
      const stored = await this.deliverOnce(ns, id, deliver, base, summary.title, {
        mayCreate: ownOrFixed(id),
        progress,
      });
      if (stored) {
        onStored();
        at.delivered = true;
        await finishMarker(sessions.objects, markerKey, claim, this.now());
        return { session: id, duplicate: false };
      }
      const moved: DeliveryMarker = { ...claim.marker, session: fresh, state: 'claimed' };
      claim = await claimMarker(sessions.objects, markerKey, moved, this.now(), claim.etag);
      if (claim.marker.state === 'done') return { session: claim.marker.session, duplicate: true };
    }
  }

  /**
   * The delivery's claim: its marker as read, else one this attempt writes (create-only) for the session
   * it chooses. The outcome instead when there is nothing to do: the delivery is done, or its id is held
   * for another payload (a marker's digest differs from this body's: not a redelivery, refused).
   */
  private async claim(
    d: VerifiedDelivery,
    markerKey: string,
    fresh: string,
    ctx: RequestContext,
    onClaim: (session: string | undefined) => void,
  ): Promise<(Claim & { nonce?: string }) | { outcome: DeliveryOutcome }> {
    const { objects } = this.options.sessions;
    const digest = await macHex(d.hook.secret, 'digest', d.body);
    let claim = await readMarker(objects, markerKey);
    if (!claim) {
      const session = await this.chooseSession(d.hook, fresh, ctx);
      const marker: DeliveryMarker = { session, state: 'claimed', digest };
      claim = await claimMarker(objects, markerKey, marker, this.now());
    }
    const { session, state, digest: held } = claim.marker;
    // A marker an earlier Satchel wrote has no digest: any body is taken for a redelivery, as then. One
    // written before 2026-12-06 holds a plain SHA-256 of the body.
    const other = !!held && held !== digest && held !== (await sha256Hex(d.body));
    // Another digest: another payload, or the same one under an earlier secret of the hook (rotated
    // since). The same payload is the one whose message, as stored, this body makes again (until review
    // s61b every redelivery after a rotation was refused as another payload, and a turn owed never ran).
    // No mark of the secret is stored to tell the two apart: it let a reader of the bucket test guesses
    // at the secret, and link hooks that share one (review s61g).
    const nonce = other ? await this.storedNonce(d, claim.marker) : undefined;
    const refusal = other && nonce === undefined;
    if (refusal) this.refused.add(d); // before the claim is heard: a `new` hook's answer then says 422
    onClaim(session || undefined);
    if (refusal) return { outcome: { session, duplicate: false, refused: true } };
    if (state === 'done') return { outcome: { session, duplicate: true } };
    return nonce === undefined ? claim : { ...claim, nonce };
  }

  /**
   * The wrapper nonce of the message a delivery stored, when its marker's digest was made under another
   * secret: the payload, summarized and redacted now and wrapped with a stored message's own nonce, must
   * make that message again (in its full or its shorter form), and the delivery's keyed append record,
   * while kept (24 h), must name that message. Nothing a reader of the bucket did not have is compared:
   * the message is stored as it is. Undefined when no message matches (or the session is gone).
   */
  private async storedNonce(
    d: VerifiedDelivery,
    marker: DeliveryMarker,
  ): Promise<string | undefined> {
    const { sessions, redact } = this.options;
    const ns = d.hook.namespace;
    if (!marker.session) return undefined;
    const session = await sessions.get(ns, marker.session).catch((err: unknown) => {
      if (SatchelError.is(err, 'not_found')) return undefined;
      throw err;
    });
    if (!session) return undefined;
    const key = appendKey(d, marker);
    const record = (await sessions.keyedRecord(ns, marker.session, session, key))?.g;
    const texts = [(await this.summaryOf(d)).text, (await this.summaryOf(d, 8)).text];
    const source = `webhook:${d.name}`;
    for (const m of session.messages.toReversed()) {
      const nonce = m.role === 'user' ? WRAPPER_NONCE.exec(m.content)?.[1] : undefined;
      if (nonce === undefined) continue;
      for (const sent of texts.map((t) => wrapUntrusted(t, source, nonce))) {
        if (m.content !== sent && m.content !== redact(sent)) continue;
        const request = ['append', { messages: [{ role: 'user', content: sent }] }];
        if (!record || record === (await fingerprintOf(key, request)).g) return nonce;
      }
    }
    return undefined;
  }

  /**
   * Appends (or continues with) a delivery's message. The summary's budget counts UTF-8 bytes of text, the
   * cap the stored JSON (where a control character takes 6 bytes) with the session's own fields: when the
   * cap still refuses the message, one made with an eighth of the budget goes instead, at worst the
   * truncation note alone (the same bytes on every attempt). Not when the message is stored and the cap
   * refused the model's reply: that failure is the delivery's, and a redelivery runs the turn again.
   */
  private sender(d: VerifiedDelivery, message: Message, nonce: string, ctx: WriteContext) {
    const ns = d.hook.namespace;
    return (id: string, progress: DeliveryProgress) => {
      let stored = progress.stored;
      const watched = { ...progress, onStored: () => ((stored = true), progress.onStored()) };
      return this.options.deliver(ns, id, message, ctx, watched).catch(async (err: unknown) => {
        if (stored || !SatchelError.is(err, 'too_large')) throw err;
        const { message: small } = await this.messageOf(d, nonce, 8);
        return this.options.deliver(ns, id, small, ctx, progress);
      });
    };
  }

  /**
   * The delivery's summary, and the untrusted user message that carries it (the same bytes every attempt
   * with the same `nonce`: `wrapperNonce`, or the one the delivery's message was stored with).
   */
  private async messageOf(d: VerifiedDelivery, nonce: string, part = 1) {
    const summary = await this.summaryOf(d, part);
    const message: Message = {
      role: 'user',
      content: wrapUntrusted(summary.text, `webhook:${d.name}`, nonce),
    };
    return { summary, message };
  }

  /** The delivery's summary, redacted, in `1/part` of its budget. */
  private async summaryOf(d: VerifiedDelivery, part = 1) {
    const { value, raw, restore } = parsePayload(d.body, d.contentType);
    const quarter = Math.floor((this.options.maxSessionBytes ?? Infinity) / 4);
    return summarize(
      { hook: d.name, event: d.event, value, raw, restore },
      this.options.redact,
      Math.floor(Math.min(SUMMARY_MAX_BYTES, quarter) / part),
    );
  }

  /** `new`: the delivery's own session; `latest`: the newest one (a new one in an empty namespace); else the id. */
  private async chooseSession(
    hook: HookConfig,
    fresh: string,
    ctx: RequestContext,
  ): Promise<string> {
    if (hook.session === 'new') return fresh;
    if (hook.session !== 'latest') return hook.session;
    try {
      return (await this.options.sessions.latest(hook.namespace, ctx)).id;
    } catch (err) {
      if (SatchelError.is(err, 'not_found')) return fresh;
      throw err;
    }
  }

  /**
   * Appends (or continues) once; a repeated key is already stored. A 404 creates the session first when
   * `mayCreate` (the delivery's own session, or a fixed id not created yet); otherwise it gives false:
   * the target was deleted and must stay so.
   */
  private async deliverOnce(
    ns: string,
    id: string,
    deliver: (id: string, progress: DeliveryProgress) => Promise<unknown>,
    ctx: WriteContext,
    title: string,
    { mayCreate, progress }: { mayCreate: boolean; progress: DeliveryProgress },
  ): Promise<boolean> {
    // The key is already recorded for another body: this delivery's message is stored, in the other form
    // (the shorter one, or the full one) or the one an earlier version of the summary gave it. No request
    // can send the key (`appendKey`), and another payload under this id was refused before. Its turn may
    // be owed (the `stored` PUT and the turn failed): it goes on as stored, the continue finding the message
    // by its tag (until 2026-12-06 it was marked done, the turn never run: review s55b, finding 4).
    // Whether this attempt stored the message: a 404 after that is a DELETE that came during the model
    // turn, not a session yet to create (until review s59j the delivery then created the session again, or
    // moved a `latest` delivery to its own, and stored the message and a second turn's reply: a DELETE
    // that answered 204 undone).
    let stored = progress.stored;
    const watched: DeliveryProgress = {
      ...progress,
      onStored: async () => ((stored = true), progress.onStored()),
    };
    const once = () =>
      deliver(id, watched).catch(async (err: unknown) => {
        if (!SatchelError.is(err, 'key_reused')) throw err;
        await watched.onStored();
        await deliver(id, { ...watched, stored: true }).catch((again: unknown) => {
          if (!SatchelError.is(again, 'not_found')) throw again; // deleted since: no turn is owed
        });
      });
    // Deleted, or the message removed (a pop, trim or replace), since this attempt stored it: done, also
    // on the attempt after a create (until review s59k that one's 404 failed the delivery, answered 404 on
    // Lambda, and a removed message's 409 too).
    const attempt = () =>
      once().then(
        () => true,
        (err: unknown) => {
          if (!stored || !noTurnOwed(err)) throw err;
          if (SatchelError.is(err, 'not_found')) return true;
          // "Removed while the model ran": the turn again as a redelivery runs it, finding the message
          // by its tag (a pop with Satchel-Secrets that redacted it changed its text, not removed it):
          // no turn when it is gone, else the turn owed (until review s59m it was marked done).
          return deliver(id, { ...watched, stored: true }).then(
            () => true,
            (again: unknown) => {
              if (SatchelError.is(again, 'not_found')) return true;
              throw again;
            },
          );
        },
      );
    try {
      return await attempt();
    } catch (err) {
      if (!SatchelError.is(err, 'not_found')) throw err;
      if (!mayCreate) return false;
      await this.createIfMissing(ns, id, title, ctx);
      return attempt();
    }
  }

  private async createIfMissing(
    ns: string,
    id: string,
    task: string,
    ctx: WriteContext,
  ): Promise<void> {
    try {
      await this.options.sessions.create(
        ns,
        { id, task },
        {
          ...(ctx.device ? { device: ctx.device } : {}),
          ...(ctx.schedule ? { schedule: ctx.schedule } : {}),
        },
      );
    } catch (err) {
      // 409: an earlier attempt of this delivery (or a concurrent one) created it.
      if (SatchelError.is(err, 'conflict')) return;
      // A create whose answer was lost holds no message: the delivery is not stored (yet).
      throw SatchelError.is(err) && err.extra.maybeStored
        ? unavailable('storage did not confirm the session the delivery goes to', 2)
        : err;
    }
  }
}

/**
 * What an answer that waits for a delivery's work (Lambda) says of its failure, to throw. Each says what
 * happened (review s59g; until then every failure before the message was stored was a 503 "storage is
 * unreachable", and one after it, its model turn failed, the 202 of a delivery done): a message the cap
 * refuses is 413 and a corrupt session the 500 its GET answers, both refused again on redelivery; an owed
 * turn is its own failure's status, saying the message is stored and a redelivery runs the turn; only
 * storage errors are 503 with `Retry-After`; a bug is the 500 of any route's.
 */
export function failureProblem(f: DeliveryFailure): unknown {
  const err = f.error;
  const at = f.session === undefined ? '' : ` in session ${f.session}`;
  if (f.turnOwed) return turnProblem(err, at);
  if (f.unknown)
    return unavailable(
      'the delivery may have been stored; send it again with the same delivery id, which stores it ' +
        'at most once',
      2,
    );
  if (StorageUnavailableError.is(err) || SatchelError.is(err, 'unavailable'))
    return new StorageUnavailableError('the webhook delivery could not be stored; send it again');
  if (SatchelError.is(err, 'too_large'))
    return payloadTooLarge(
      `the delivery's message cannot be stored${at}: ` +
        err.message.replace(/:? ?nothing was written\.?$/, '') +
        '; nothing was stored, and a redelivery is refused too',
    );
  if (SatchelError.is(err, 'corrupt'))
    return corrupt(
      `${f.session === undefined ? 'the session the delivery goes to' : `session ${f.session}`} ` +
        'cannot be read: an object of it is corrupt (a GET of the session answers this 500 too); ' +
        'nothing was stored, and a redelivery fails the same way until it is repaired or deleted',
    );
  if (SatchelError.is(err))
    return new SatchelError(err.kind, `${err.message}; the delivery was not stored`, err.extra);
  return err;
}

/**
 * A failure's `error` in its log line: the continue's detail, with its advice to retry under the same
 * Idempotency-Key (which no sender has) replaced by what runs the owed turn, a redelivery (review s61b).
 */
function failureLine(f: DeliveryFailure): string {
  const line = describeError(f.error);
  return f.turnOwed && KEY_ADVICE.test(line) ? line.replace(KEY_ADVICE, ` ${REDELIVER}`) : line;
}

/** A continue's advice to a client, at the end of its detail (lib/continue `retryAdvice`). */
const KEY_ADVICE = / *Retry with the same Idempotency-Key[\s\S]*$/;

const REDELIVER =
  'Send the same delivery again (the same delivery id) to run its model turn; nothing is stored twice.';

/**
 * A continue's failure after its message was stored that owes no turn: the session deleted (404), or the
 * message removed from it (a pop, trim or replace) while the model ran (the 409 marked `removed`).
 */
function noTurnOwed(err: unknown): boolean {
  return (
    SatchelError.is(err, 'not_found') ||
    (SatchelError.is(err, 'conflict') && err.extra.turn === 'removed')
  );
}

/** A failure after the message was stored, in its model turn: the detail says so, and how to run it. */
function turnProblem(err: unknown, at: string): SatchelError {
  const kind = SatchelError.is(err) ? err.kind : 'unavailable';
  // The message was removed (a pop, trim or replace) or its session deleted while the model ran: the
  // continue's detail says so, and no turn is owed (a redelivery stores nothing). `store` takes these as
  // done; this stays for a failure of the marker's own writes after them.
  if (noTurnOwed(err))
    return new SatchelError(
      kind,
      `${(err as Error).message}; no model turn is owed for the delivery`,
    );
  const again = 'send the same delivery again (the same delivery id) to';
  // A turn running on the session (maybe this delivery's own earlier attempt's: a sender that gave up on
  // its first request): "no reply was stored ... to run its model turn" was untrue then (review s59k).
  if (SatchelError.is(err, 'conflict') && err.extra.turn === 'busy')
    return new SatchelError(
      kind,
      `${err.message.split(';')[0]}, maybe this delivery's own earlier attempt's. The delivery's ` +
        `message is stored${at}: ${again} finish it after Retry-After, which runs its model turn once ` +
        'if no reply was stored for it.',
      err.extra.retryAfter !== undefined ? { retryAfter: err.extra.retryAfter } : {},
    );
  // The continue's detail, up to what it says of the message (and its Idempotency-Key, which no sender has).
  const why = SatchelError.is(err)
    ? err.message.replace(/[;:,.]? *your message was stored[\s\S]*$/, '')
    : 'storage is unreachable';
  const detail =
    kind === 'unavailable'
      ? `${why}. The delivery's message is stored${at}, and whether a reply was stored for it is ` +
        `unknown: ${again} finish its model turn; neither is stored twice.`
      : `${why}. The delivery's message is stored${at} and no reply was stored: ${again} run its ` +
        'model turn; the message is not stored again.';
  const retryAfter = SatchelError.is(err) ? err.extra.retryAfter : 2;
  return new SatchelError(kind, detail, retryAfter !== undefined ? { retryAfter } : {});
}

/**
 * The untrusted-content tag of a delivery's message: the same for every attempt, so a retry's keyed
 * append is a replay (and a continue then runs a turn that failed before), yet unguessable for whoever
 * wrote the payload, since it comes from the hook's secret.
 */
async function wrapperNonce(d: VerifiedDelivery): Promise<string> {
  return toHex(await hmacSha256(d.hook.secret, utf8(`wrapper\n${d.name}\n${d.delivery}`))).slice(
    0,
    16,
  );
}

/**
 * The id of the session a `new` hook creates for a delivery, in the form of every new session's id
 * (`YYYYMMDD-` and 32 hex): the date of `nowMs`, and hex from an HMAC of the hook and the delivery id
 * under the hook's secret, so that two attempts on one day agree (the claim settles one across
 * midnight, and later attempts follow it) while nobody without the secret can tell the id in advance
 * and create a session there for the delivery to land in.
 */
export async function hookSessionId(
  secret: string,
  name: string,
  delivery: string,
  nowMs: number,
): Promise<string> {
  const mac = await hmacSha256(secret, utf8(`session\n${name}\n${delivery}`));
  return `${idDay(new Date(nowMs))}-${toHex(mac).slice(0, 32)}`;
}

/**
 * The hex an earlier Satchel gave a delivery's own session (a plain hash of the hook and delivery ids:
 * `YYYYMMDD-<hex>` from 2026-12-04, `hook-<name>-<hex>` before), so that a claim one of them made is
 * still the delivery's own. New claims never use it: anyone could compute it.
 */
async function legacyHex(name: string, delivery: string): Promise<string> {
  return (await sha256Hex(`${name}\n${delivery}`)).slice(0, 32);
}

/**
 * HMAC-SHA256 (hex) of `data` under a key made from the hook's secret for one `use`, never the secret
 * itself: what it gives (kept in a marker, answered, logged) is no signature of anything.
 */
async function macHex(secret: string, use: string, data: Uint8Array<ArrayBuffer>): Promise<string> {
  return toHex(await hmacSha256(`${use}\n${secret}`, data));
}

/** What a refusal's log line and answer say of the delivery (after "the delivery" or its id). */
const REFUSED =
  'was already received with another payload, or under another secret of the hook and cannot be ' +
  'matched with the message it stored';

/** A stored wrapper's opening tag, its nonce captured. */
const WRAPPER_NONCE = /^<untrusted_content_([0-9a-f]{16}) source="/;

/** A hook's 401 challenge: it takes a signature of the body (webhooks.md), not a bearer token. */
const HOOK_CHALLENGE = 'Satchel-Signature realm="satchel-hooks"';

/** The key of a delivery's marker. */
async function markerKeyOf(d: VerifiedDelivery): Promise<string> {
  return keys.hookDelivery(d.hook.namespace, d.name, await sha256Hex(d.delivery));
}

/** Parses a marker body; anything unreadable counts as done, so that a delivery is never stored twice. */
export function parseMarker(body: string): DeliveryMarker {
  try {
    const m = JSON.parse(body) as Partial<DeliveryMarker>;
    if (typeof m.session === 'string' && ['claimed', 'stored', 'done'].includes(m.state!))
      return {
        session: m.session,
        state: m.state!,
        ...(typeof m.digest === 'string' ? { digest: m.digest } : {}),
      };
  } catch {
    // fall through
  }
  return { session: '', state: 'done' };
}

async function readMarker(objects: ObjectStore, key: string): Promise<Claim | null> {
  const found = await objects.get(key);
  return found ? { marker: parseMarker(text(found.body)), etag: found.etag } : null;
}

function markerBody({ session, state, digest }: DeliveryMarker, nowMs: number): Uint8Array {
  const at = new Date(nowMs).toISOString();
  const held = digest !== undefined ? { digest } : {};
  return utf8(JSON.stringify({ session, state, ...held, at }));
}

/**
 * The Idempotency-Key of a delivery's append (and, with ` turn` after it, of its model turn): with
 * spaces, which no client's key holds (visible ASCII), so that no request can take it first. Until
 * 2026-12-06 it was `webhook:{name}:{delivery}`, a key any client could send: an append under it made
 * the delivery's own append a 422 that was taken for "already stored". A delivery whose marker an earlier
 * Satchel wrote (no digest) keeps that key, under which its message may be stored already.
 */
function appendKey(d: VerifiedDelivery, marker: DeliveryMarker): string {
  return marker.digest === undefined
    ? `webhook:${d.name}:${d.delivery}`
    : `webhook ${d.name} ${d.delivery}`;
}

/**
 * Claims a delivery (`marker`, state `claimed`): create-only (`from` absent: the first attempt picks its
 * session), or moving a claim to another session (If-Match on `from`). When another attempt wrote the
 * marker first, its marker decides: done, or claimed for the session it chose.
 */
async function claimMarker(
  objects: ObjectStore,
  key: string,
  marker: DeliveryMarker,
  nowMs: number,
  from?: string,
): Promise<Claim> {
  try {
    const { etag } = await objects.put(key, markerBody(marker, nowMs), {
      ...(from === undefined ? { ifNoneMatch: '*' } : { ifMatch: from }),
      contentType: 'application/json',
    });
    return { marker, etag };
  } catch (err) {
    if (!PreconditionFailedError.is(err)) throw err;
    // The other claim may not have landed yet (S3 answers 409 to a conditional PUT that races one in
    // flight): read it again a few times, in about half a second at most.
    for (const wait of [0, 25, 100, 400]) {
      if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
      const winner = await readMarker(objects, key);
      if (winner) return winner;
    }
    throw unavailable('the delivery marker changed while claiming it; try again');
  }
}

/**
 * Marks the claim `stored` (If-Match on it). When that fails, another attempt changed the marker first:
 * its `stored` for the same session is taken as ours; a move or a `done` is kept, and our `done` then fails.
 */
async function markStored(
  objects: ObjectStore,
  key: string,
  claim: Claim,
  nowMs: number,
): Promise<Claim> {
  const marker: DeliveryMarker = { ...claim.marker, state: 'stored' };
  try {
    const { etag } = await objects.put(key, markerBody(marker, nowMs), {
      ifMatch: claim.etag,
      contentType: 'application/json',
    });
    return { marker, etag };
  } catch (err) {
    if (!PreconditionFailedError.is(err)) throw err;
    const now = await readMarker(objects, key);
    return now && sameStored(now.marker, marker.session) ? now : claim;
  }
}

function sameStored(marker: DeliveryMarker, session: string): boolean {
  return marker.state === 'stored' && marker.session === session;
}

/**
 * Marks the claim done for its session (If-Match on it). When that fails, another attempt changed the
 * marker: it finished or moved the delivery, or marked it `stored` for this session (two attempts stored
 * the message at once), which this `done` then replaces.
 */
async function finishMarker(
  objects: ObjectStore,
  key: string,
  claim: Claim,
  nowMs: number,
): Promise<void> {
  const marker: DeliveryMarker = { ...claim.marker, state: 'done' };
  let etag = claim.etag;
  for (let tries = 0; ; tries++) {
    try {
      await objects.put(key, markerBody(marker, nowMs), {
        ifMatch: etag,
        contentType: 'application/json',
      });
      return;
    } catch (err) {
      if (!PreconditionFailedError.is(err)) throw err;
      const now = tries === 0 ? await readMarker(objects, key) : null;
      if (!now || !sameStored(now.marker, marker.session)) return;
      etag = now.etag;
    }
  }
}
