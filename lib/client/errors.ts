import type { Problem } from './types.js';

/** The server answered with an error: its RFC 9457 problem document, as sent. */
export class SatchelApiError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors: NonNullable<Problem['errors']>;
  /** Seconds from the Retry-After header, when the server sent one (409 of a busy session, 429, 503). */
  readonly retryAfter: number | undefined;

  /**
   * @param afterLostAttempt an earlier attempt of the same call may have taken effect (it got no answer,
   * or a 503 saying the write may have been stored or the session is gone): a 409 of a create that named
   * its id may then be that attempt's session, a delete's 404 its own doing.
   * @param fromSatchel false when the answer was not Satchel's problem JSON (an HTML error page of a proxy,
   * a gateway or the platform): then the status is theirs, and a write may or may not have reached Satchel.
   * @param idempotencyKey the `Idempotency-Key` every attempt of a keyed call (append, continue, pop, trim,
   * replace) sent: pass it back as `idempotencyKey` to repeat the call without doing it twice (a continue's
   * 502 "your message was stored", a 503 "may have been stored").
   */
  constructor(
    readonly problem: Problem,
    retryAfter?: number,
    readonly afterLostAttempt = false,
    readonly fromSatchel = true,
    readonly idempotencyKey?: string,
  ) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`);
    this.name = 'SatchelApiError';
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfter;
  }

  /** True for a SatchelApiError, also one from another copy of this module (bundles, workers). */
  static is(err: unknown): err is SatchelApiError {
    return (
      err instanceof Error &&
      err.name === 'SatchelApiError' &&
      typeof (err as SatchelApiError).status === 'number'
    );
  }
}

/** No answer from the server (refused, reset, DNS, TLS), after the retries the request allowed. */
export class SatchelConnectionError extends Error {
  /**
   * @param mayHaveLanded false when no attempt can have reached the server (every one refused, or its
   * name not resolved): a write was then not stored.
   * @param idempotencyKey a keyed call's `Idempotency-Key`, as on SatchelApiError: pass it back as
   * `idempotencyKey` to repeat the call without doing it twice.
   */
  constructor(
    readonly url: string,
    override readonly cause: unknown,
    readonly mayHaveLanded = true,
    readonly idempotencyKey?: string,
  ) {
    super(`cannot reach ${url}: ${describeCause(cause)}`);
    this.name = 'SatchelConnectionError';
  }

  static is(err: unknown): err is SatchelConnectionError {
    return err instanceof Error && err.name === 'SatchelConnectionError';
  }
}

/**
 * The answer to a request was a success, but not Satchel's JSON: SATCHEL_URL names some other server
 * (a web server's page, a captive portal, a proxy).
 */
export class SatchelResponseError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`the answer from ${url} is not Satchel JSON`);
    this.name = 'SatchelResponseError';
  }

  static is(err: unknown): err is SatchelResponseError {
    return err instanceof Error && err.name === 'SatchelResponseError';
  }
}

/** A URL for messages: without a user name or password. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
}

/** Failures before a request could reach the server: nothing it asked for can have happened. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/**
 * True when fetch refused the URL's port before connecting: the fetch spec's "bad ports" (6000, 5060,
 * 6665-6669, 10080, ...), which undici refuses with TypeError('fetch failed') caused by Error('bad port').
 */
export function badPort(cause: unknown): boolean {
  // Through a fetch wrapper of the caller's too (a cause or two deeper), as neverSent reads codes.
  for (let d = 0; d < 4 && cause instanceof Error; d++, cause = cause.cause)
    if (cause.message === 'bad port') return true;
  return false;
}

/**
 * True when fetch refused the request's URL before sending it: a bad port, a scheme it does not speak
 * (undici's 'unknown scheme'), a URL that does not parse ('Invalid URL', ERR_INVALID_URL). Every attempt is
 * refused alike.
 */
export function refusedUrl(cause: unknown): boolean {
  for (let d = 0; d < 4 && cause instanceof Error; d++, cause = cause.cause)
    if (/^(bad port|unknown scheme|Invalid URL)$/.test(cause.message)) return true;
  return false;
}

/** True when a fetch failure says the request never reached the server (a browser's never does). */
export function neverSent(cause: unknown): boolean {
  if (refusedUrl(cause)) return true;
  let at: unknown = cause;
  for (let depth = 0; depth < 4 && at instanceof Error; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string') return NOT_SENT.has(code);
    at = at.cause;
  }
  return false;
}

/** The innermost useful reason of a fetch failure (undici hides ECONNREFUSED in `cause`). */
function describeCause(cause: unknown): string {
  let at: unknown = cause;
  for (let depth = 0; depth < 4 && at instanceof Error; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string')
      return `${code}${at.message && !at.message.includes(code) ? ` (${at.message})` : ''}`;
    if (!(at.cause instanceof Error)) return at.message;
    at = at.cause;
  }
  return String(at);
}

/** Builds the problem for an error answer; a body that is not problem JSON still yields status and text. */
export function problemFrom(status: number, statusText: string, body: string): Problem {
  try {
    const parsed = JSON.parse(body) as Partial<Problem>;
    if (parsed && typeof parsed === 'object' && typeof parsed.title === 'string') {
      return {
        type: typeof parsed.type === 'string' ? parsed.type : 'about:blank',
        title: parsed.title,
        status: typeof parsed.status === 'number' ? parsed.status : status,
        detail: typeof parsed.detail === 'string' ? parsed.detail : '',
        ...(Array.isArray(parsed.errors) ? { errors: parsed.errors } : {}),
        ...(parsed.deleted === true ? { deleted: true } : {}),
      };
    }
  } catch {
    // not JSON: fall through
  }
  return {
    type: 'about:blank',
    title: statusText || `HTTP ${status}`,
    status,
    // An error page's words, not its markup.
    detail: body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 500),
  };
}
