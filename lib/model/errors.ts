/**
 * Domain errors: one named kind per failure, with data, and no HTTP in them. Everything below HTTP throws
 * these; `lib/http/problem.ts` is the one place that maps a kind to a status and a problem response.
 */
export interface FieldError {
  path: string;
  message: string;
}

/** What went wrong, in the domain's words. */
export type ErrorKind =
  | 'invalid' // the input is malformed or fails validation
  | 'unauthenticated' // no caller could be identified
  | 'forbidden' // the caller may not do this (a read-only token writing)
  | 'not_found' // the session (or route) does not exist
  | 'conflict' // the id is taken, or another operation holds the session
  | 'stale' // the caller's revision (If-Match) is not the stored one
  | 'too_large' // the input is over a configured limit
  | 'unsupported_media_type' // the body is not JSON
  | 'key_reused' // an Idempotency-Key was used for a different request
  | 'revision_required' // a replace without the revision it replaces
  | 'unavailable' // storage or contention: waiting helps
  | 'upstream_failed' // a service the request depends on (the continue model) failed
  | 'corrupt' // a stored object cannot be read as what it should be
  | 'method_not_allowed'; // a known operation path asked with a method it does not serve

export class SatchelError extends Error {
  constructor(
    readonly kind: ErrorKind,
    detail: string,
    readonly extra: {
      errors?: FieldError[];
      retryAfter?: number;
      allow?: string;
      /** `WWW-Authenticate` of a 401: how to authenticate (RFC 9110 §11.6.1). */
      challenge?: string;
      /** A write whose storage answer was lost: it may have been stored (`unconfirmed`). */
      maybeStored?: boolean;
      /**
       * A delete's 503 after the session object went (its leftovers were not all erased): the problem says
       * `"deleted": true`, so a client's retry that then meets a 404 knows the session is gone by its doing.
       */
      deleted?: boolean;
      /**
       * A continue's 409 after its message was stored: another request holds the session's model turn
       * (`busy`), or the message the turn answers is no longer in the session (`removed`: a pop, trim or
       * replace). A webhook delivery tells them apart by this, not by the detail's words.
       */
      turn?: 'busy' | 'removed';
      /** A continue's answer after its message was stored: the revision that write made (its `ETag`). */
      revision?: number;
    } = {},
  ) {
    super(detail);
    this.name = 'SatchelError';
  }

  /** True when `err` is a SatchelError (of `kind`, when given); works across module copies. */
  static is(err: unknown, kind?: ErrorKind): err is SatchelError {
    const e = err as SatchelError | null;
    return (
      typeof e === 'object' &&
      e !== null &&
      e.name === 'SatchelError' &&
      (kind === undefined || e.kind === kind)
    );
  }
}

/** The input is malformed or fails validation; `errors` names the fields. */
export const badRequest = (detail: string, errors?: FieldError[]) =>
  new SatchelError('invalid', detail, errors ? { errors } : {});
/** No caller could be identified; `challenge` is the 401's `WWW-Authenticate` (a bearer token's by default). */
export const unauthorized = (detail: string, challenge = 'Bearer realm="satchel"') =>
  new SatchelError('unauthenticated', detail, { challenge });
/** The caller may not do this. */
export const forbidden = (detail: string) => new SatchelError('forbidden', detail);
/** The session (or route) does not exist. */
export const notFound = (detail: string) => new SatchelError('not_found', detail);
/** The id is taken, or another operation holds the session; `retryAfter` (seconds) when waiting helps. */
export const conflict = (detail: string, retryAfter?: number) =>
  new SatchelError('conflict', detail, retryAfter !== undefined ? { retryAfter } : {});
/** The caller's revision is not the stored one. */
export const preconditionFailed = (detail: string) => new SatchelError('stale', detail);
/** The input is over a configured limit. */
export const payloadTooLarge = (detail: string) => new SatchelError('too_large', detail);
/** The body is not JSON. */
export const unsupportedMediaType = (detail: string) =>
  new SatchelError('unsupported_media_type', detail);
/** An Idempotency-Key was used for a different request. */
export const unprocessable = (detail: string) => new SatchelError('key_reused', detail);
/** A replace without the revision it replaces. */
export const preconditionRequired = (detail: string) =>
  new SatchelError('revision_required', detail);
/** Storage is unreachable or too contended: try again after `retryAfter` seconds. */
export const unavailable = (detail: string, retryAfter = 1) =>
  new SatchelError('unavailable', detail, { retryAfter });
/** A write whose storage answer was lost, which may have been stored (a 503 that says so). */
export const unconfirmed = (detail: string) =>
  new SatchelError('unavailable', detail, { retryAfter: 2, maybeStored: true });
/** An upstream the request depends on (the continue model) failed or timed out. */
export const badGateway = (detail: string) => new SatchelError('upstream_failed', detail);
/** A known path asked with a method it does not serve. */
export const methodNotAllowed = (detail: string, allow: string) =>
  new SatchelError('method_not_allowed', detail, { allow });
/** A stored object cannot be read as what it should be. */
export const corrupt = (detail: string) => new SatchelError('corrupt', detail);

/**
 * Internal, never an answer: a write on a partial copy of a session (one that holds only the messages after
 * its stored parts, `CachedSession.held`) needs the whole session; the write loop reads it and tries again.
 */
export class NeedsWholeSession extends Error {
  /** `why`: what needed it (for a debugger; never shown). */
  constructor(why: string) {
    super(why);
    this.name = 'NeedsWholeSession';
  }

  static is(err: unknown): err is NeedsWholeSession {
    return (err as Error | null)?.name === 'NeedsWholeSession';
  }
}
