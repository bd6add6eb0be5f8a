/** When and how long the client waits before trying a request again. Pure: tested with tables. */

export interface RetryPolicy {
  /** Attempts after the first (default 4). */
  retries: number;
  /** The first backoff's ceiling in ms; doubled per attempt (default 250). */
  baseDelayMs: number;
  /** The largest backoff in ms (default 8000). */
  maxDelayMs: number;
  /** A Retry-After longer than this (ms) is not waited for: the error is thrown instead (default 60000). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  retries: 4,
  baseDelayMs: 250,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

/** Statuses that mean "the server is busy or briefly unable; the same request may succeed later". */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** Full-jitter exponential backoff: uniform in [0, min(max, base · 2^attempt)], attempt counted from 0. */
export function backoffDelay(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** Retry-After as ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  header: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its weekday and month; a bare "-1" would otherwise parse as a year.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before the next attempt after a retryable answer: what Retry-After asks plus a little jitter
 * (so clients told the same thing do not return in lockstep), else the backoff. Undefined: do not retry.
 */
export function delayAfterAnswer(
  attempt: number,
  retryAfterHeader: string | null,
  policy: RetryPolicy,
  random: () => number = Math.random,
  now: number = Date.now(),
): number | undefined {
  const asked = parseRetryAfter(retryAfterHeader, now);
  if (asked === undefined) return backoffDelay(attempt, policy, random);
  if (asked > policy.maxRetryAfterMs) return undefined;
  return asked + Math.round(random() * Math.min(policy.baseDelayMs, asked / 10 + 50));
}
