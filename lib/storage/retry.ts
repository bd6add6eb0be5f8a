import { PreconditionFailedError, StorageUnavailableError, type StoragePing } from './port.js';

/** Bounded exponential backoff with full jitter, shared by the network adapters. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
  /**
   * Total time for all attempts and the waits between them. No attempt starts after it, and a running
   * attempt is abandoned (its signal aborted) when it passes. Unset: no total bound.
   */
  deadlineMs?: number;
  /** Time for one attempt; then its signal aborts and it counts as a transient failure. Unset: none. */
  attemptTimeoutMs?: number;
}

/**
 * The network adapters' default: up to 4 attempts, 3 s each, all within 8 s. With storage paused a call
 * fails with StorageUnavailableError after ~8 s, so an HTTP answer (503) comes within 10 s.
 */
export const defaultRetryPolicy: RetryPolicy = {
  attempts: 4,
  baseMs: 25,
  maxMs: 1000,
  deadlineMs: 8000,
  attemptTimeoutMs: 3000,
};

/** What one attempt gets from withRetry. */
export interface AttemptContext {
  /** Aborted when the attempt's time (or the call's deadline) is up; pass it to the request. */
  signal: AbortSignal;
  /** 0 for the first attempt. */
  attempt: number;
  /**
   * Gives this attempt, and the whole call's deadline, `ms` more: for a transfer whose size is known only
   * now (a GET's Content-Length) or is large (a big PUT), so slow-but-moving transfers are not cut off.
   */
  extend(ms: number): void;
  /**
   * Ends this attempt at once with `err` (its signal aborted with it), as a timeout would: for an answer
   * found unusable while it is still arriving (a body larger than any object). Retried only when transient.
   */
  fail(err: unknown): void;
}

export interface RetryOptions {
  /**
   * The call writes (put, delete). Failures are then annotated: a PreconditionFailedError on a retry after
   * an attempt that may have reached the backend gets `afterLostAnswer`, and the final
   * StorageUnavailableError gets `mayHaveLanded`; any other error that ends such a call (a 403 on the retry)
   * becomes a StorageUnavailableError with `mayHaveLanded` (its cause that error).
   */
  write?: boolean;
  /** Whether a failed attempt may have reached the backend (default: all but refused/unresolved connections). */
  mayHaveReached?: (err: unknown) => boolean;
}

/** Thrown into an attempt that ran out of time; transient by definition. */
export class AttemptTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${Math.round(ms)} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Runs `op`, retrying it while `isTransient(err)` says the failure was a 5xx, SlowDown or network error,
 * or the attempt ran out of time. Precondition failures are never retried. After the last attempt, or when
 * the deadline leaves no room for another, a StorageUnavailableError is thrown.
 */
export async function withRetry<T>(
  what: string,
  op: (ctx: AttemptContext) => Promise<T>,
  isTransient: (err: unknown) => boolean,
  policy: RetryPolicy = defaultRetryPolicy,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  options: RetryOptions = {},
): Promise<T> {
  const started = Date.now();
  let deadlineAt = policy.deadlineMs !== undefined ? started + policy.deadlineMs : Infinity;
  const reached = options.mayHaveReached ?? defaultMayHaveReached;
  let lastError: unknown;
  let uncertain = false;
  let unanswered = false;
  let attempt = 0;
  for (; attempt < policy.attempts; attempt++) {
    if (attempt > 0) {
      const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
      const remaining = deadlineAt - Date.now();
      // No room left for a useful attempt: stop now rather than start one that is cut off at once.
      if (remaining < MIN_ATTEMPT_MS) break;
      await sleep(Math.min(Math.random() * ceiling, Math.max(0, remaining - MIN_ATTEMPT_MS)));
    }
    try {
      return await runAttempt(
        what,
        op,
        attempt,
        policy.attemptTimeoutMs,
        () => deadlineAt,
        (ms) => (deadlineAt += ms),
      );
    } catch (err) {
      if (PreconditionFailedError.is(err)) {
        if (options.write && uncertain && !err.afterLostAnswer)
          throw new PreconditionFailedError(err.key, {
            afterLostAnswer: true,
            noAnswer: unanswered,
          });
        throw err;
      }
      const timedOut = err instanceof AttemptTimeoutError;
      if (!timedOut && !isTransient(err))
        throw settled(what, err, options.write && uncertain, unanswered);
      if (options.write && (timedOut || reached(err))) {
        uncertain = true;
        if (timedOut || !answered(err)) unanswered = true;
      }
      lastError = err;
    }
  }
  const elapsed = Date.now() - started;
  const reason = lastError instanceof Error ? `: ${lastError.message.slice(0, 200)}` : '';
  throw new StorageUnavailableError(
    `${what} failed after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${elapsed} ms${reason}`,
    lastError,
    {
      mayHaveLanded: options.write === true && uncertain,
      noAnswer: unanswered,
    },
  );
}

/**
 * A write's final, permanent error (a 403, say). When an earlier attempt may have landed (its answer lost),
 * that must not be lost with it: the error then becomes a StorageUnavailableError with `mayHaveLanded`,
 * its cause the permanent error, so that the caller looks for its own write as after any lost answer.
 */
function settled(
  what: string,
  err: unknown,
  uncertain: boolean | undefined,
  unanswered: boolean,
): unknown {
  if (!uncertain) return err;
  const reason = err instanceof Error ? `: ${err.message.slice(0, 200)}` : '';
  return new StorageUnavailableError(
    `${what} failed after an attempt whose answer was lost${reason}`,
    StorageUnavailableError.is(err) ? (err.cause ?? err) : err,
    { mayHaveLanded: true, noAnswer: unanswered },
  );
}

/** An attempt is not started with less time than this before the deadline. */
const MIN_ATTEMPT_MS = 50;

async function runAttempt<T>(
  what: string,
  op: (ctx: AttemptContext) => Promise<T>,
  attempt: number,
  attemptTimeoutMs: number | undefined,
  deadline: () => number,
  extendDeadline: (ms: number) => void,
): Promise<T> {
  const controller = new AbortController();
  const begun = Date.now();
  let budget = Math.min(attemptTimeoutMs ?? Infinity, deadline() - begun);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let end!: (err: unknown) => void;
  const expired = new Promise<never>((_, reject) => (end = reject));
  expired.catch(() => undefined);
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    if (!Number.isFinite(budget)) return;
    const left = Math.max(0, begun + budget - Date.now());
    timer = setTimeout(() => {
      const err = new AttemptTimeoutError(what, budget);
      end(err);
      controller.abort(err);
    }, left);
  };
  arm();
  const ctx: AttemptContext = {
    signal: controller.signal,
    attempt,
    extend(ms) {
      if (!(ms > 0)) return;
      extendDeadline(ms);
      budget += ms;
      arm();
    },
    fail(err) {
      if (controller.signal.aborted) return;
      end(err);
      controller.abort(err);
    },
  };
  const running = op(ctx);
  // An abandoned attempt may still reject later; that is expected and must not become unhandled.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, expired]);
  } catch (err) {
    // Whatever the op threw after its signal was aborted (an AbortError), the cause is the timeout or the
    // failure given to ctx.fail.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw err;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * True when the failure is an answer from the backend (an HTTP status), not a silence; a gateway's 502 or
 * 504 is a silence of the backend behind it.
 */
function answered(err: unknown): boolean {
  const status = (err as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata
    ?.httpStatusCode;
  return typeof status === 'number' && status !== 502 && status !== 504;
}

/** A refused or unresolvable connection never reached the backend; anything else (timeouts, resets, 5xx) may have. */
function defaultMayHaveReached(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code ?? '';
  return !/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN)$/.test(code);
}

/**
 * Runs one probe request for `ObjectStore.ping`: a single attempt, abandoned (its signal aborted) at the
 * deadline. Never throws: a failure becomes `{ ok: false, reason, error }` through `describe`.
 */
export async function probe(
  deadlineMs: number,
  op: (signal: AbortSignal) => Promise<unknown>,
  describe: (err: unknown) => Pick<StoragePing, 'reason' | 'error'>,
): Promise<StoragePing> {
  const started = Date.now();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new AttemptTimeoutError('ping', deadlineMs));
      resolve('timeout');
    }, deadlineMs);
  });
  const timeout = (): StoragePing => ({
    ok: false,
    latencyMs: Date.now() - started,
    reason: 'timeout',
    error: `no answer within ${deadlineMs} ms`,
  });
  try {
    const running = Promise.resolve().then(() => op(controller.signal));
    running.catch(() => undefined);
    const outcome = await Promise.race([running.then(() => 'ok' as const), expired]);
    return outcome === 'ok' ? { ok: true, latencyMs: Date.now() - started } : timeout();
  } catch (err) {
    if (controller.signal.aborted) return timeout();
    let described: Pick<StoragePing, 'reason' | 'error'>;
    try {
      described = describe(err);
    } catch {
      described = { reason: 'error', error: 'error' };
    }
    return { ok: false, latencyMs: Date.now() - started, ...described };
  } finally {
    clearTimeout(timer);
  }
}
