import { newSessionId, randomHex } from '../model/ids.js';
import {
  problemFrom,
  SatchelApiError,
  SatchelConnectionError,
  neverSent,
  refusedUrl,
  SatchelResponseError,
  withoutCredentials,
} from './errors.js';
import {
  DEFAULT_RETRY,
  backoffDelay,
  delayAfterAnswer,
  isRetryableStatus,
  type RetryPolicy,
} from './retry.js';
import type {
  AppendInput,
  AuditRecord,
  CleanupResult,
  ContinueAnswer,
  ContinueInput,
  Created,
  CreateSessionInput,
  Health,
  ListQuery,
  PipelineCounts,
  PopResult,
  ReplaceInput,
  Session,
  SessionPage,
  SessionSearchAction,
  SessionSearchError,
  SessionSearchInput,
  SessionSearchResults,
  SessionSummary,
  Tagged,
  TrimResult,
  WriteReceipt,
} from './types.js';

/**
 * A typed client for Satchel's HTTP API, on `fetch` alone (Node 20, browsers, Workers).
 *
 * Retries: a 429 or 503 is retried after its Retry-After (or a jittered exponential backoff), and so is a
 * network failure; any other 4xx or 5xx is thrown at once as a `SatchelApiError`. Every request is made
 * safe to send twice: appends, continues, pops, trims and replaces carry an `Idempotency-Key` generated
 * once per call and sent with every attempt; a create carries an id (the caller's, or one the client
 * picks); a retried delete that finds nothing succeeds (after a lost answer, or a 503 saying the session
 * went); reads repeat without harm, and a cleanup retried after a lost answer says its count may be short
 * (`uncounted`). A keyed call's errors carry its `idempotencyKey`: give it back to repeat the call (after a
 * continue's 502, a 503 "may have been stored") without doing it twice.
 */
export interface ClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8787. */
  url: string;
  /** Bearer token (omit for a local server without SATCHEL_TOKENS). */
  token?: string | undefined;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** Extra headers on every request (a User-Agent, say). */
  headers?: Record<string, string>;
  /** For tests: how the client waits between attempts. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * How long one attempt may take, its answer's body read included (default 10000 ms). An attempt that
   * runs out is a network failure: retried as one. Every timeout must be a positive number of ms; one
   * above 2^31-1 (Infinity: no limit) is 2^31-1, about 24.8 days.
   */
  timeoutMs?: number;
  /** How long a call may take in all, attempts and waits between them included (default 25000 ms). */
  deadlineMs?: number;
  /**
   * How long one attempt of `continue` may take (default 390000 ms: the longest model turn a server
   * allows, 300 s, its longest wait for the session's turn, 60 s, and 30 s to store the turn); its call
   * `deadlineMs + continueTimeoutMs - min(timeoutMs, deadlineMs)`, never less than `deadlineMs`.
   */
  continueTimeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_DEADLINE_MS = 25_000;
// SATCHEL_MODEL_TIMEOUT_MS and SATCHEL_CONTINUE_WAIT_MS at their largest, and the lease's margin to store
// the turn: a shorter attempt gave up on a turn the server allows (180 s, against up to 300 s: review s64e).
export const DEFAULT_CONTINUE_TIMEOUT_MS = 300_000 + 60_000 + 30_000;

/** setTimeout's largest delay: a longer one (Infinity too) fires at once in Node and browsers. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Options of a single call. */
export interface CallOptions {
  /** Aborts the call, waits included; a keyed write's abort throws SatchelConnectionError with its key. */
  signal?: AbortSignal;
  /** Secret values to redact from what this write stores (sent as `Satchel-Secrets`, never stored). */
  secrets?: string[];
}

export interface WriteOptions extends CallOptions {
  /** The revision (or ETag) the change was based on; a mismatch is a 412. */
  ifMatch?: number | string;
  /**
   * Defaults to a fresh random UUID per call, reused by that call's retries. The call's errors carry it
   * (`idempotencyKey`): pass it here to repeat a failed call without doing it twice.
   */
  idempotencyKey?: string;
}

interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  call?: CallOptions | undefined;
  /** A model turn (continue): attempts get `continueTimeoutMs`. */
  turn?: boolean;
}

export class SatchelClient {
  readonly url: string;
  private readonly token: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly policy: RetryPolicy;
  private readonly headers: Record<string, string>;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly timeoutMs: number;
  private readonly deadlineMs: number;
  private readonly continueTimeoutMs: number;

  constructor(options: ClientOptions) {
    // fetch refuses such a URL, and error messages would show the password.
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(options.url))
      throw new TypeError('the Satchel URL must not hold a user name or password; use the token');
    // fetch sends nothing to another scheme (`localhost:8787` parses as the scheme `localhost:`), and every
    // call failed as a network failure that "may have landed". Not echoed: it may hold a password. A path
    // (`/satchel`) is a browser page's own origin (review s64h).
    if (!/^(https?:\/\/|\/)/i.test(options.url))
      throw new TypeError(
        'the Satchel URL must start with http(s)://, as in http://localhost:8787',
      );
    this.url = options.url.replace(/\/+$/, '');
    this.timeoutMs = timeoutOption(options, 'timeoutMs', DEFAULT_TIMEOUT_MS);
    this.deadlineMs = timeoutOption(options, 'deadlineMs', DEFAULT_DEADLINE_MS);
    this.continueTimeoutMs = timeoutOption(
      options,
      'continueTimeoutMs',
      DEFAULT_CONTINUE_TIMEOUT_MS,
    );
    this.token = options.token || undefined;
    // Bound so that `this` inside a platform fetch is never the client.
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.headers = { ...options.headers };
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** `GET /v1/health`: liveness, storage and embeddings state (no token needed). */
  async health(call?: CallOptions): Promise<Health> {
    return json(await this.request({ method: 'GET', path: '/v1/health', call }));
  }

  /**
   * `POST /v1/sessions`. Without `id`, the client picks one in the server's format (`YYYYMMDD-` + 32 hex),
   * so that a retry after a lost answer cannot create a second session: a 409 on a retry of an id this
   * call generated is its own first attempt, and the stored session is returned. `pipeline`: what the
   * save pipeline did (redactions, the size cap), from the answer's headers.
   */
  async create(body: CreateSessionInput, call?: CallOptions): Promise<Created> {
    const generated = body.id === undefined;
    const id = body.id ?? newSessionId();
    try {
      const answer = await this.request({
        method: 'POST',
        path: '/v1/sessions',
        body: { ...body, id },
        call,
        headers: secretsHeader(call),
      });
      const pipeline = pipelineCounts(answer.response.headers);
      return { ...tagged(answer), ...(pipeline ? { pipeline } : {}) };
    } catch (err) {
      // An id this client generated is nobody else's: the session is the lost attempt's.
      if (generated && isAfterLost(err, 409)) return this.get(id, call);
      throw err;
    }
  }

  /** `GET /v1/sessions`: one page of metadata, newest first; `metadata` keeps sessions with those pairs. */
  async list(query: ListQuery = {}, call?: CallOptions): Promise<SessionPage> {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor) params.set('cursor', query.cursor);
    for (const [key, value] of Object.entries(query.metadata ?? {}))
      params.set(`metadata.${key}`, value);
    if (query.updated_after !== undefined) {
      params.set(
        'updated_after',
        query.updated_after instanceof Date
          ? query.updated_after.toISOString()
          : query.updated_after,
      );
    }
    const qs = params.toString();
    return json(
      await this.request({ method: 'GET', path: `/v1/sessions${qs ? `?${qs}` : ''}`, call }),
      (v) => Array.isArray(v.sessions) && v.sessions.every(isSummary),
    );
  }

  /** Every session's metadata, newest first, following `next_cursor` page by page (100 a page). */
  async *listAll(
    query: Omit<ListQuery, 'cursor' | 'limit'> = {},
    call?: CallOptions,
  ): AsyncGenerator<SessionSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...query, limit: 100, ...(cursor ? { cursor } : {}) }, call);
      yield* page.sessions;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /**
   * `GET /v1/sessions/latest`: the most recently updated session. No `ifNoneMatch` here: a revision does
   * not name a session, so revalidate with `get(session.id, { ifNoneMatch })`.
   */
  async latest(call?: CallOptions): Promise<Tagged> {
    return this.read('/v1/sessions/latest', call) as Promise<Tagged>;
  }

  /** `GET /v1/sessions/{id}`; with `ifNoneMatch` (an ETag) an unchanged session is `null` (304). */
  get(id: string, call?: CallOptions): Promise<Tagged>;
  get(id: string, call: CallOptions & { ifNoneMatch: string }): Promise<Tagged | null>;
  async get(id: string, call?: CallOptions & { ifNoneMatch?: string }): Promise<Tagged | null> {
    return this.read(`/v1/sessions/${seg(id)}`, call);
  }

  /** `PUT /v1/sessions/{id}`: replace, based on the revision (or ETag) read; a stale one is a 412. */
  async replace(
    id: string,
    body: ReplaceInput,
    options: WriteOptions & { ifMatch: number | string },
  ): Promise<Tagged> {
    // Keyed: the key turns a retry whose first attempt landed into a replay instead of a 412.
    const spec = this.keyed(`/v1/sessions/${seg(id)}`, body, options);
    return tagged(await this.request({ ...spec, method: 'PUT' }));
  }

  /**
   * `DELETE /v1/sessions/{id}`. A 404 on a retry means the first attempt deleted it: success (after a lost
   * answer, or a 503 whose problem says `deleted`: the session went, its leftovers not all erased). With
   * `ifMatch`, a session changed since that revision is kept (412).
   */
  async delete(id: string, call?: CallOptions & { ifMatch?: number | string }): Promise<void> {
    try {
      await this.request({
        method: 'DELETE',
        path: `/v1/sessions/${seg(id)}`,
        call,
        ...(call?.ifMatch !== undefined
          ? { headers: { 'if-match': ifMatchValue(call.ifMatch) } }
          : {}),
      });
    } catch (err) {
      if (!isAfterLost(err, 404)) throw err;
    }
  }

  /**
   * `POST /v1/sessions/{id}/messages`, with an `Idempotency-Key` that makes every retry a no-op.
   * `replayed: true`: the key had stored its messages already (a lost answer's attempt, or an earlier call
   * given that key), and this answer stored nothing; they may have been removed since.
   */
  async append(
    id: string,
    body: AppendInput,
    options: WriteOptions = {},
  ): Promise<WriteReceipt & { replayed?: true }> {
    const answer = await this.request(
      this.keyed(`/v1/sessions/${seg(id)}/messages`, body, options),
    );
    return withReplayed(answer, json<WriteReceipt>(answer, isReceipt));
  }

  /**
   * `POST /v1/sessions/{id}/pop`: remove the newest `count` messages (1-100, default 1), answering the
   * receipt and the removed messages, oldest first. Keyed like an append, so a retry pops nothing twice.
   */
  async pop(id: string, count = 1, options: WriteOptions = {}): Promise<PopResult> {
    const answer = await this.request(
      this.keyed(`/v1/sessions/${seg(id)}/pop`, { count }, options),
    );
    // A retry after a lost answer is a replay: the messages that pop removed are kept nowhere (removed
    // text leaves every object), so `popped` is empty, and `replayed` says why.
    return withReplayed(
      answer,
      json<PopResult>(answer, (v) => isReceipt(v) && Array.isArray(v.popped)),
    );
  }

  /**
   * Empties a session, keeping its task and metadata: a read, then a `PUT` of no messages based on the
   * revision read, read again after a 412 (a write landed in between), at most 5 times.
   */
  async clear(id: string, call?: CallOptions): Promise<Tagged> {
    for (let attempt = 0; ; attempt++) {
      const { session, etag } = await this.get(id, call);
      try {
        return await this.replace(
          id,
          { task: session.task, messages: [] },
          { ...call, ifMatch: etag },
        );
      } catch (err) {
        if (!(SatchelApiError.is(err) && err.status === 412) || attempt >= 4) throw err;
      }
    }
  }

  /** `POST /v1/sessions/{id}/continue` (`latest` for the newest session): store the message, run a model turn. */
  async continue(
    id: string,
    body: ContinueInput,
    options: WriteOptions = {},
  ): Promise<ContinueAnswer> {
    const spec = this.keyed(`/v1/sessions/${seg(id)}/continue`, body, options);
    return json(
      await this.request({ ...spec, turn: true }),
      (v) => isReceipt(v) && typeof v.model_turn === 'boolean',
    );
  }

  /**
   * `POST /v1/sessions/{id}/trim`: keep `keep` messages (the system message counts). Keyed like an
   * append, so a retry whose first attempt landed answers that attempt's counts.
   */
  async trim(id: string, keep: number, options: WriteOptions = {}): Promise<TrimResult> {
    return json(
      await this.request(this.keyed(`/v1/sessions/${seg(id)}/trim`, { keep }, options)),
      (v) => typeof v.before === 'number' && typeof v.after === 'number',
    );
  }

  /**
   * `POST /v1/sessions/cleanup`: delete sessions not updated for `olderThanDays` days (0: all).
   * `deleted` counts the answered attempt's deletions; `uncounted: true` says an earlier attempt got no
   * answer or a 5xx (a cleanup that deleted some and failed for others), so sessions it deleted are not
   * in that count. `remaining`: the server deleted a batch (a
   * Worker deletes at most 32 per call) and left that many for the next call.
   */
  async cleanup(
    olderThanDays: number,
    call?: CallOptions,
  ): Promise<CleanupResult & { uncounted?: true }> {
    const answer = await this.request({
      method: 'POST',
      path: '/v1/sessions/cleanup',
      body: { older_than_days: olderThanDays },
      call,
    });
    const out = json<CleanupResult>(answer, (v) => typeof v.deleted === 'number');
    // An attempt before it that got no answer or a 503 may have deleted some (review s55d).
    return answer.lost || answer.redone ? { ...out, uncounted: true } : out;
  }

  /** `GET /v1/sessions/{id}/audit`: the session's audit records, oldest first. */
  async audit(id: string, call?: CallOptions): Promise<AuditRecord[]> {
    const out = json<{ records: AuditRecord[] }>(
      await this.request({ method: 'GET', path: `/v1/sessions/${seg(id)}/audit`, call }),
      (v) =>
        Array.isArray(v.records) && v.records.every((r) => isObject(r) && isRevision(r.revision)),
    );
    return out.records;
  }

  /** `POST /v1/session_search`: the agent tool. Tool-level problems come back as `{error}`, not thrown. */
  async sessionSearch<A extends SessionSearchAction>(
    input: SessionSearchInput & { action: A },
    call?: CallOptions,
  ): Promise<SessionSearchResults[A] | SessionSearchError> {
    return json(
      await this.request({ method: 'POST', path: '/v1/session_search', body: input, call }),
      (v) =>
        typeof v.error === 'string' ||
        Array.isArray(v[input.action === 'search' ? 'results' : 'sessions']) ||
        (input.action === 'get' && typeof v.count === 'number'),
    );
  }

  // ---- plumbing ----

  private keyed(path: string, body: unknown, options: WriteOptions): RequestSpec {
    const headers: Record<string, string> = {
      'idempotency-key': options.idempotencyKey ?? newKey(),
      ...secretsHeader(options),
    };
    if (options.ifMatch !== undefined) headers['if-match'] = ifMatchValue(options.ifMatch);
    return { method: 'POST', path, body, headers, call: options };
  }

  private async read(
    path: string,
    call?: CallOptions & { ifNoneMatch?: string },
  ): Promise<Tagged | null> {
    const headers: Record<string, string> = call?.ifNoneMatch
      ? { 'if-none-match': call.ifNoneMatch }
      : {};
    const answer = await this.request({ method: 'GET', path, headers, call });
    return answer.response.status === 304 ? null : tagged(answer);
  }

  /** A wait between attempts, cut short by the caller's abort, which it then throws (its reason). */
  private pause(
    ms: number,
    signal: AbortSignal | undefined,
    stopped: (reason: unknown) => unknown,
  ): Promise<void> {
    if (!signal) return this.sleep(ms);
    // Not throwIfAborted(): older browsers the client serves lack it.
    if (signal.aborted) return Promise.reject(stopped(signal.reason));
    return new Promise<void>((resolve, reject) => {
      const abort = () => reject(stopped(signal.reason));
      signal.addEventListener('abort', abort, { once: true });
      void this.sleep(ms).then(() => {
        signal.removeEventListener('abort', abort);
        resolve();
      }, reject);
    });
  }

  /** A keyed call the caller aborted may have landed: its error carries the key to repeat it once. */
  private stopper(key: string | undefined, signal: AbortSignal | undefined) {
    return (reason: unknown, sent: boolean) =>
      key
        ? new SatchelConnectionError(withoutCredentials(this.url), signal!.reason, sent, key)
        : reason;
  }

  /**
   * One logical request: attempts, waits and the error mapping. A success's body is read in the attempt:
   * a connection that drops while it is read is retried like one that drops before the answer (every
   * request the client sends may be repeated: reads, keyed writes, creates with the id it chose). Each
   * attempt has `timeoutMs`, body read included; the call, waits included, has `deadlineMs`.
   */
  private async request(spec: RequestSpec): Promise<Answer> {
    const url = this.url + spec.path;
    const init = this.init(spec);
    const signal = spec.call?.signal;
    const upload = uploadAllowanceMs(init.body);
    const perAttempt = (spec.turn ? this.continueTimeoutMs : this.timeoutMs) + upload;
    // A continue trades one ordinary attempt (which the deadline bounds too) for a turn's. Never less than
    // deadlineMs: a timeoutMs above the other two left a continue no time at all (review s64e).
    const ordinary = Math.min(this.timeoutMs, spec.turn ? this.deadlineMs : Infinity);
    const began = Date.now();
    const deadline = began + this.deadlineMs + Math.max(0, perAttempt - ordinary);
    // A keyed call's key, on its errors: the caller may repeat the call with it.
    const key = spec.headers?.['idempotency-key'];
    const stopped = this.stopper(key, signal);
    // An attempt failed without an answer: it may have taken effect, so a later 404/409 may be its doing.
    let lost = false;
    let redone = false;
    // Failures counted against `policy.retries` (a turn-busy 409 after a lost attempt is not one: below).
    let tries = 0;
    let attempts = 0;
    for (;;) {
      const limit = new AttemptLimit(signal, Math.min(perAttempt, deadline - Date.now()));
      attempts++;
      try {
        let response: Response;
        let bytes: ArrayBuffer | undefined;
        try {
          response = await this.fetchImpl(url, { ...init, signal: limit.signal });
          // A body that keeps coming is read whole: each chunk gives the attempt `timeoutMs` more.
          if (response.ok || response.status === 304)
            bytes = await readAll(response, () => limit.extend(this.timeoutMs));
        } catch (err) {
          if (signal?.aborted) throw stopped(err, true);
          // A refused connection, a name that did not resolve, or a URL fetch refuses, sent nothing.
          lost ||= limit.timedOut || !neverSent(err);
          redone ||= lost;
          const left = deadline - Date.now();
          const wait = backoffDelay(tries, this.policy);
          const cause = limit.timedOut ? noAnswer(limit, left, attempts, began) : err;
          // fetch refuses a bad port or scheme every time: no use waiting to try again.
          if (tries++ >= this.policy.retries || wait >= left || refusedUrl(err))
            throw new SatchelConnectionError(withoutCredentials(this.url), cause, lost, key);
          await this.pause(wait, signal, (r) => stopped(r, lost));
          continue;
        }
        if (bytes) return { response, bytes, url: withoutCredentials(url), lost, redone };
        const satchels = /problem\+json/i.test(response.headers.get('content-type') ?? '');
        const retry = retryOf(response, spec.turn === true, lost, tries, this.policy);
        if (retry) {
          if (retry.counted) tries++;
          redone ||= response.status >= 500;
          // A gateway's 503 (not Satchel's problem) may come while Satchel still works on the write.
          lost ||= !satchels;
          const { wait } = retry;
          if (wait !== undefined && wait < deadline - Date.now()) {
            // Satchel's own 503 for a write storage did not confirm, or for a delete whose session went
            // (`deleted`; its words on servers before it): the retry may meet what it did.
            if (satchels && response.status === 503)
              lost ||= tookEffect(await response.text().catch(() => ''));
            else await response.body?.cancel().catch(() => undefined);
            await this.pause(wait, signal, (r) => stopped(r, lost));
            continue;
          }
        }
        const error = new SatchelApiError(
          // The status tells what happened even when the problem's body cannot be read to its end.
          problemFrom(response.status, response.statusText, await response.text().catch(() => '')),
          headerNumber(response.headers, 'retry-after'),
          // An answer that may be an earlier, unanswered attempt's doing is for the caller to judge.
          lost,
          satchels,
          key,
        );
        throw error;
      } finally {
        limit.done();
      }
    }
  }

  /**
   * The request's headers and body, checked once: a header value fetch refuses (a token with a line
   * break) fails at once, without its value in the message, instead of passing for a network failure.
   */
  private init(spec: RequestSpec): RequestInit {
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.headers,
      ...spec.headers,
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    for (const [name, value] of Object.entries(headers)) {
      try {
        new Headers([[name, value]]);
      } catch {
        throw new TypeError(`the ${name} header is not a valid HTTP header value (a line break?)`);
      }
    }
    if (spec.body === undefined) return { method: spec.method, headers };
    headers['content-type'] = 'application/json';
    return { method: spec.method, headers, body: JSON.stringify(spec.body) };
  }
}

/**
 * Whether an answer is retried, and after what wait (undefined: not waited for, so thrown): a 429 or 503
 * within the retry limit, or a continue that meets a model turn under way (409 with Retry-After), asked to
 * come back after Retry-After with the same key to get that turn. After a lost attempt that turn is most
 * likely the call's own: its 409s are not counted against the limit, which is for transient failures, so
 * only the call's deadline bounds the wait for it (review s62e).
 */
function retryOf(
  response: Response,
  turn: boolean,
  lost: boolean,
  tries: number,
  policy: RetryPolicy,
): { wait: number | undefined; counted: boolean } | undefined {
  const turnBusy = turn && response.status === 409 && response.headers.has('retry-after');
  if (!isRetryableStatus(response.status) && !turnBusy) return undefined;
  const wait = delayAfterAnswer(tries, response.headers.get('retry-after'), policy);
  // Satchel's own answer only (a proxy's 409 is not a turn). At least a second between uncounted
  // retries (the server asks 1-5 s): never a busy loop.
  if (turnBusy && lost && /problem\+json/i.test(response.headers.get('content-type') ?? ''))
    return { wait: wait === undefined ? wait : Math.max(wait, 1000), counted: false };
  return tries < policy.retries ? { wait, counted: true } : undefined;
}

/** An attempt ran out of time. */
class TimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * What a call whose last attempt ran out says: the attempt's own limit, unless the deadline cut it short
 * (`left` about 0; that share of it named no real timeout: review s66d), then the attempts and the whole wait.
 */
function noAnswer(limit: AttemptLimit, left: number, attempts: number, began: number): Error {
  const said = left > 9 ? (limit.signal.reason as Error).message : 'no answer';
  const took = ((Date.now() - began) / 1000).toFixed(1);
  return Error(`${said} (${attempts} attempt${attempts > 1 ? 's' : ''} in ${took} s)`);
}

/**
 * One attempt's signal: aborted by the caller's signal or when `ms` run out (AbortSignal.any and
 * AbortSignal.timeout are missing from older browsers the client serves).
 */
class AttemptLimit {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly forward: () => void;
  timedOut = false;

  constructor(
    private readonly caller: AbortSignal | undefined,
    ms: number,
  ) {
    this.forward = () => this.controller.abort(caller?.reason);
    if (caller?.aborted) this.forward();
    else caller?.addEventListener('abort', this.forward, { once: true });
    this.extend(ms);
  }

  /** Runs out `ms` from now (a body that keeps coming is not cut off: each chunk extends it). */
  extend(ms: number): void {
    if (this.timedOut) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timedOut = true;
        this.controller.abort(new TimeoutError(ms));
      },
      Math.min(MAX_TIMER_MS, Math.max(0, ms)),
    );
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  done(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.forward);
  }
}

/** A body read whole, `onChunk` told of every piece that arrives. */
async function readAll(response: Response, onChunk: () => void): Promise<ArrayBuffer> {
  if (!response.body) return response.arrayBuffer();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.byteLength;
    onChunk();
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) (out.set(chunk, at), (at += chunk.byteLength));
  return out.buffer;
}

/** A success (or 304) and its body, read whole. */
interface Answer {
  response: Response;
  bytes: ArrayBuffer;
  /** The request's URL, without credentials: for error messages. */
  url: string;
  /** An earlier attempt got no answer: it may have taken effect too. */
  lost: boolean;
  /** An earlier attempt got no answer or a 5xx, and may have done part of its work (a cleanup's deletes). */
  redone: boolean;
}

/**
 * The time an upload gets beyond `timeoutMs` (fetch does not tell how it progresses): a second per
 * 256 KiB, counted in the UTF-8 bytes sent, not in characters.
 */
export function uploadAllowanceMs(body: unknown): number {
  const sent = typeof body === 'string' ? new TextEncoder().encode(body).byteLength : 0;
  return Math.floor(sent / 262_144) * 1000;
}

/**
 * A success's JSON object. `shape` checks the few fields callers rely on, so that another JSON service at
 * the URL (a health endpoint answering `{"status":"ok"}` to every path) is a SatchelResponseError, not an
 * `undefined` further on. Not a validation of every field: the server's schemas are not bundled here.
 */
function json<T>(answer: Answer, shape?: (value: Record<string, unknown>) => boolean): T {
  let value: unknown;
  try {
    value = JSON.parse(decodeBody(new Uint8Array(answer.bytes)));
  } catch {
    // Not JSON: as a JSON answer that is not an object.
  }
  if (!isObject(value) || (shape && !shape(value)))
    throw new SatchelResponseError(answer.url, answer.response.status);
  return value as T;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isRevision(value: unknown): boolean {
  // Number.isInteger is false for anything but a number.
  return Number.isInteger(value) && (value as number) >= 0;
}

/** A session's summary, as a list page holds them. */
function isSummary(value: unknown): boolean {
  return isObject(value) && typeof value.id === 'string' && typeof value.task === 'string';
}

/** A write receipt: the session's id and its new revision. */
function isReceipt(value: Record<string, unknown>): boolean {
  return typeof value.id === 'string' && isRevision(value.revision);
}

/** A session as the API answers it: its id, revision and messages. */
function isSession(value: Record<string, unknown>): boolean {
  return isReceipt(value) && Array.isArray(value.messages);
}

/** `out` with `replayed: true` when the server answered a keyed write as a replay (`Idempotent-Replayed`). */
function withReplayed<T extends object>(answer: Answer, out: T): T & { replayed?: true } {
  return answer.response.headers.get('idempotent-replayed') === 'true'
    ? { ...out, replayed: true }
    : out;
}

function tagged(answer: Answer): Tagged {
  const session = json<Session>(answer, isSession);
  return { session, etag: answer.response.headers.get('etag') ?? `"${session.revision}"` };
}

/** A create's pipeline counts from its headers; undefined when they are missing or malformed. */
function pipelineCounts(headers: Headers): PipelineCounts | undefined {
  const redactions = headerNumber(headers, 'satchel-redactions');
  const dropped = headerNumber(headers, 'satchel-dropped-groups');
  if (redactions === undefined || dropped === undefined) return undefined;
  const first = headers.get('satchel-dropped-first-user-message')?.trim().toLowerCase() === 'true';
  return { redactions, dropped_groups: dropped, dropped_first_user_message: first };
}

/**
 * Whether a Satchel 503's body says its write took effect, or may have: a delete whose session went
 * (`"deleted": true`; not its words, which a server before that field also answered for an id that never
 * held a session, review s58g), a write storage did not confirm.
 */
function tookEffect(body: string): boolean {
  return problemFrom(503, '', body).deleted === true || /may have been stored/.test(body);
}

/** The server answered `status` after an attempt that got no answer: maybe that attempt's doing. */
function isAfterLost(err: unknown, status: number): boolean {
  return SatchelApiError.is(err) && err.status === status && err.afterLostAttempt;
}

/**
 * A timeout option: its default when absent, at most MAX_TIMER_MS (so Infinity is no limit), and a
 * TypeError unless a positive number (0, a negative or NaN ended every call at once as "no answer").
 */
function timeoutOption(
  options: ClientOptions,
  name: 'timeoutMs' | 'deadlineMs' | 'continueTimeoutMs',
  fallback: number,
): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0))
    throw new TypeError(`${name} must be above 0 (ms)`);
  return Math.min(value, MAX_TIMER_MS);
}

/**
 * A session id as a path segment. An empty one would name the session list, and `.` or `..` (which
 * encodeURIComponent leaves as they are) are resolved by fetch as the path's own segments: another route.
 */
function seg(id: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError('a session id must not be empty');
  if (id === '.' || id === '..') throw new TypeError('a session id must not be "." or ".."');
  return encodeURIComponent(id);
}

/**
 * A fresh Idempotency-Key, a v4 UUID from getRandomValues: crypto.randomUUID needs a secure context (an
 * https page), getRandomValues does not. The adapters use it too.
 */
export function newKey(): string {
  const h = randomHex(16);
  const variant = '89ab'[parseInt(h[16]!, 16) & 3]!;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20)}`;
}

function ifMatchValue(value: number | string): string {
  return typeof value === 'number' ? `"${value}"` : value;
}

/** A header's value when it is a whole number (Retry-After's seconds, a pipeline count); else undefined. */
function headerNumber(headers: Headers, name: string): number | undefined {
  const value = headers.get(name)?.trim();
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** `Satchel-Secrets`: base64 of the JSON array, UTF-8 safe without Node's Buffer. */
function secretsHeader(call: CallOptions | undefined): Record<string, string> {
  if (!call?.secrets?.length) return {};
  const bytes = new TextEncoder().encode(JSON.stringify(call.secrets));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return { 'satchel-secrets': btoa(binary) };
}

/**
 * A response body as text. On Node (and Bun, Deno), a body that is all ASCII, as most sessions are, is
 * copied as latin1, which is then the same string (its UTF-8 length is its length): Node 20's UTF-8
 * decoding of a 10 MB session takes about 33 ms, the copy and the check a few. Browsers and Workers
 * decode with TextDecoder, which is fast there.
 */
export function decodeBody(bytes: Uint8Array): string {
  const B = (globalThis as { Buffer?: typeof import('node:buffer').Buffer }).Buffer;
  if (B && bytes.byteLength >= 4096) {
    const text = B.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    if (B.byteLength(text, 'utf8') === text.length) return text;
  }
  return new TextDecoder().decode(bytes);
}
