import type { Context } from 'hono';
import { SatchelError, type ErrorKind, type FieldError } from '../model/errors.js';
import { describeError, withoutIds, type Logger } from '../model/log.js';
import { isPlatformLimit, StorageUnavailableError } from '../storage/port.js';
import { requestSecrets, type Env } from './context.js';

/** An RFC 9457 problem document. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  /** A delete's 503: the session is gone, but its leftovers were not all erased (delete it again). */
  deleted?: true;
}

/**
 * The answer of a runtime whose configuration is wrong (Workers, Lambda: they cannot refuse to start), to
 * every request: a 500 naming the error in one line, which holds no secret.
 */
export function configurationProblem(message: string): Problem {
  return {
    type: typeFor(500),
    title: 'Configuration Error',
    status: 500,
    detail: `the server is not configured: ${message}`,
  };
}

/** The one place errors become HTTP responses. Unknown errors are a 500 with no internals in the body. */
export function problemResponse(c: Context, err: unknown, log: Logger): Response {
  let problem: Problem;
  // In the headers the Response is made with: a header set on it afterwards can be lost on the way out
  // (@hono/node-server's HEAD answers).
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (SatchelError.is(err)) {
    const [status, title] = statusOf[err.kind];
    if (status >= 500)
      log.error('request failed', {
        method: c.req.method,
        route: c.req.routePath,
        kind: err.kind,
        error: withoutIds(err.message),
      });
    problem = { type: typeFor(status), title, status, detail: err.message };
    if (err.extra.errors) problem.errors = err.extra.errors;
    if (err.extra.deleted) problem.deleted = true;
    if (status < 500) redactQuoted(c as Context<Env>, problem);
    const { retryAfter, allow, challenge } = err.extra;
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    if (allow) headers.allow = allow;
    if (challenge) headers['www-authenticate'] = challenge;
    // A continue whose message was stored before its turn failed: the revision that write made.
    if (err.extra.revision !== undefined) headers.etag = `"${err.extra.revision}"`;
  } else if (StorageUnavailableError.is(err)) {
    log.error('storage unavailable', { route: c.req.routePath, error: storageFailure(err) });
    const limited = isPlatformLimit(err);
    problem = {
      type: typeFor(503),
      title: 'Service Unavailable',
      status: 503,
      // Storage answered; the Worker may not ask it more in this request (review s53e): "try again" is
      // not the answer (docs/deploy.md, "Cloudflare's request limits per invocation").
      detail: limited
        ? "this request reached Cloudflare's limit on requests per Worker invocation (50 fetches on the " +
          'Free plan, 1,000 R2 binding operations): see docs/deploy.md'
        : 'storage is unreachable; try again shortly',
    };
    if (!limited) headers['retry-after'] = '2';
  } else {
    log.error('unhandled error', {
      method: c.req.method,
      route: c.req.routePath,
      error: describeError(err),
    });
    problem = {
      type: typeFor(500),
      title: 'Internal Server Error',
      status: 500,
      detail: 'the server failed to handle this request',
    };
  }
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}

/**
 * A storage failure as the log holds it: the error's own words without object keys, and of its cause
 * (a file system or S3 error, whose text names the folder's path or a key) only the code or name.
 */
function storageFailure(err: StorageUnavailableError): string {
  const cause = err.cause as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  let text = err.message;
  // The retry's words end with its last error's (`…failed after 3 attempts in 8012 ms: <its message>`).
  const said = typeof cause?.message === 'string' ? text.indexOf(cause.message.slice(0, 200)) : -1;
  if (said > 0) text = text.slice(0, said).replace(/:\s*$/, '');
  text = withoutIds(text);
  const code =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.name === 'string' && cause.name !== 'Error'
        ? cause.name
        : undefined;
  return code && !text.includes(code) ? `${text} (${code})` : text;
}

/**
 * A 4xx may quote the request: a key in a field's path or in zod's "Unrecognized key" message. Its
 * secrets are redacted there as in stored text, with the request's own `Satchel-Secrets` values: an
 * answer is read where a log keeps it (a CI job's output, a proxy).
 */
function redactQuoted(c: Context<Env>, problem: Problem): void {
  const redact = c.var.services?.redact;
  if (!redact) return;
  let known: string[] | undefined;
  try {
    known = requestSecrets(c.req.header('satchel-secrets'));
  } catch {
    // A malformed header: its own 400 quotes none of it.
  }
  const quoted = (s: string) => redact(s, known);
  problem.detail = quoted(problem.detail);
  problem.errors &&= problem.errors.map((e) => ({
    path: quoted(e.path),
    message: quoted(e.message),
  }));
}

/** Each domain error kind as an HTTP status and its title: the one place HTTP meets the domain. */
const statusOf: Record<ErrorKind, [number, string]> = {
  invalid: [400, 'Bad Request'],
  unauthenticated: [401, 'Unauthorized'],
  forbidden: [403, 'Forbidden'],
  not_found: [404, 'Not Found'],
  conflict: [409, 'Conflict'],
  stale: [412, 'Precondition Failed'],
  too_large: [413, 'Content Too Large'],
  unsupported_media_type: [415, 'Unsupported Media Type'],
  key_reused: [422, 'Unprocessable Content'],
  revision_required: [428, 'Precondition Required'],
  unavailable: [503, 'Service Unavailable'],
  upstream_failed: [502, 'Bad Gateway'],
  corrupt: [500, 'Corrupt Stored Object'],
  method_not_allowed: [405, 'Method Not Allowed'],
};

/** The HTTP status of a domain error kind. */
export function httpStatus(kind: ErrorKind): number {
  return statusOf[kind][0];
}

export function typeFor(status: number): string {
  return `https://satchel.dev/problems/${status}`;
}
