import type { Context } from 'hono';
import { SatchelError, type FieldError } from '../model/errors.js';
import { describeError, type Logger } from '../model/log.js';
import { StorageUnavailableError } from '../storage/port.js';

/** An RFC 9457 problem document. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

/** The one place errors become HTTP responses. Unknown errors are a 500 with no internals in the body. */
export function problemResponse(c: Context, err: unknown, log: Logger): Response {
  let problem: Problem;
  let retryAfter: number | undefined;
  if (err instanceof SatchelError) {
    problem = { type: typeFor(err.status), title: err.title, status: err.status, detail: err.message };
    if (err.extra.errors) problem.errors = err.extra.errors;
    retryAfter = err.extra.retryAfter;
  } else if (StorageUnavailableError.is(err)) {
    log.error('storage unavailable', { path: c.req.path, error: describeError(err.cause ?? err) });
    problem = { type: typeFor(503), title: 'Service Unavailable', status: 503, detail: 'storage is unreachable; try again shortly' };
    retryAfter = 2;
  } else {
    log.error('unhandled error', { method: c.req.method, path: c.req.path, error: describeError(err) });
    problem = { type: typeFor(500), title: 'Internal Server Error', status: 500, detail: 'the server failed to handle this request' };
  }
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}

function typeFor(status: number): string {
  return `https://satchel.dev/problems/${status}`;
}
