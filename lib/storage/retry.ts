import { PreconditionFailedError, StorageUnavailableError } from './port.js';

/** Bounded exponential backoff with full jitter, shared by the network adapters. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 4, baseMs: 25, maxMs: 1000 };

/**
 * Runs `op`, retrying it while `isTransient(err)` says the failure was a 5xx, SlowDown or network error.
 * Precondition failures are never retried. After the last attempt a StorageUnavailableError is thrown.
 */
export async function withRetry<T>(
  what: string,
  op: () => Promise<T>,
  isTransient: (err: unknown) => boolean,
  policy: RetryPolicy = defaultRetryPolicy,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < policy.attempts; attempt++) {
    if (attempt > 0) {
      const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
      await sleep(Math.random() * ceiling);
    }
    try {
      return await op();
    } catch (err) {
      if (PreconditionFailedError.is(err) || !isTransient(err)) throw err;
      lastError = err;
    }
  }
  throw new StorageUnavailableError(`${what} failed after ${policy.attempts} attempts`, lastError);
}
