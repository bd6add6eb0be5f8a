// Lambda entry (API Gateway HTTP API v2 and function URLs): S3 storage; background work is drained
// before the handler returns, since a frozen function would otherwise stall it, up to the invocation's
// deadline (lambda-time.ts). Events are checked before hono's adapter reads them (lambda-event.ts).
import { gzipSync } from 'node:zlib';
import { handle } from 'hono/aws-lambda';
import { ConfigError, createServerLogger, loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { configurationProblem, typeFor } from '../lib/http/problem.js';
import type { Logger } from '../lib/model/log.js';
import { S3Store } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';
import {
  asSent,
  headerOf,
  methodOf,
  prepared,
  withoutReadBody,
  withoutStage,
  type Refusal,
} from './lambda-event.js';
import { deadlineOf, drainBy, TURN_MARGIN_MS } from './lambda-time.js';

/**
 * A synchronous invocation answers at most 6 MB: the result's JSON, the body a JSON string in it, where a
 * body's `"` and `\` take 4 bytes for the 2 they take stored, so a session near 3 MiB of escaped JSON
 * can already be over (review s52c). An answer over it goes gzip-compressed (`fitted`): base64 of at most
 * the body's size plus a little, so every session under the 4 MiB default reaches a client that accepts
 * gzip. A cap over 5 MiB stops the function at init.
 */
const LAMBDA_SESSION_BYTES = 4 * 1024 * 1024;
const LAMBDA_MAX_SESSION_BYTES = 5 * 1024 * 1024;
/** AWS's limit on a synchronous invocation's result (its JSON), in bytes. */
const LAMBDA_ANSWER_BYTES = 6 * 1024 * 1024;

/**
 * The most sessions one cleanup deletes on Lambda; the rest are left for the next call (`remaining`), as
 * on Workers. About 19 storage requests each, 8 at a time: at 40 ms a request a batch takes 2-4 s, well
 * within API Gateway's 30 s (until 2026-12-06 a cleanup deleted them all in one call: a few hundred
 * passed it, and the function's timeout cut a delete between its object and its records, review s57a).
 */
const LAMBDA_CLEANUP_BATCH = 32;

const ready = (async () => {
  // An empty value means unset, as everywhere else: the Lambda default, not the Node server's 32 MiB.
  const env = { ...process.env };
  if (!env.SATCHEL_MAX_SESSION_BYTES) env.SATCHEL_MAX_SESSION_BYTES = String(LAMBDA_SESSION_BYTES);
  const config = await loadConfig(env, 's3');
  if (config.storage.kind !== 's3') throw new ConfigError('on Lambda, SATCHEL_STORAGE must be s3');
  if (config.maxSessionBytes > LAMBDA_MAX_SESSION_BYTES)
    throw new ConfigError(
      `on Lambda, SATCHEL_MAX_SESSION_BYTES must be at most ${LAMBDA_MAX_SESSION_BYTES} ` +
        '(a Lambda answers at most 6 MB: a larger session could be stored but not read back)',
    );
  const log = createServerLogger(config);
  const built = createApp({
    config,
    objects: new S3Store({ ...config.storage.s3, wire: nodeWire }),
    log,
    shortLived: true,
    answersAfterBackground: true,
    cleanupBatch: LAMBDA_CLEANUP_BATCH,
  });
  // The app as the adapter calls it: a method a Request cannot carry (TRACE) is put back (`asSent`).
  const app = {
    fetch: (request: Request, env: { event?: object }) =>
      built.app.fetch(asSent(request, env.event && sentMethods.get(env.event)), env),
  } as unknown as typeof built.app;
  return { handler: handle(app), background: built.background, continuer: built.continuer, log };
})();
// A configuration error is logged once, at init, and answers every request (below); it must not end the
// init as an unhandled rejection, which fails each invocation with no word of the cause.
ready.catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(`satchel: ${err.message}`);
});

/** The methods of events sent on as GET because a Request cannot carry them (lambda-event.ts). */
const sentMethods = new WeakMap<object, string>();

export const handler = async (
  event: Parameters<ReturnType<typeof handle>>[0],
  context: Parameters<ReturnType<typeof handle>>[1],
) => {
  const app = await ready.catch((err: unknown) => {
    if (err instanceof ConfigError) return err;
    throw err;
  });
  if (app instanceof ConfigError)
    return {
      statusCode: 500,
      headers: { 'content-type': 'application/problem+json' },
      body: JSON.stringify(configurationProblem(app.message)),
      isBase64Encoded: false,
    };
  const { handler: inner, background, continuer, log } = app;
  const started = performance.now();
  const checked = prepared(withoutReadBody(event));
  if ('status' in checked) return refused(checked, event, log, started) as never;
  const { event: routed, stage } = withoutStage(checked.event);
  if (checked.method !== undefined) sentMethods.set(routed, checked.method);
  // Answered by the invocation's deadline: a model turn ends in time for its 502, the drain at it.
  const deadline = deadlineOf(context);
  continuer.turnsEndBy = deadline === undefined ? undefined : deadline - TURN_MARGIN_MS;
  const adapted = await unlogged(() => inner(routed, context));
  if ('failed' in adapted)
    return refused(unread(adapted.failed, log), event, log, started) as never;
  const result = singleValued(adapted.result as LambdaResult);
  const method = methodOf(event).toUpperCase();
  await drainBy(background, deadline, log, { method, status: result.statusCode });
  // A (Content-)Location the API answers is a path from the root it routes on: under a named stage's.
  const headers = result.headers ?? {};
  for (const name of ['location', 'content-location'])
    if (stage && headers[name]?.startsWith('/')) headers[name] = stage + headers[name];
  return fitted(result, routed, log) as Awaited<ReturnType<typeof inner>>;
};

/**
 * The adapter's answer, or what it failed on when it could make no Request of the event: it answers that
 * itself (a text/plain 400 "Invalid request") after `console.error` of undici's error, which quotes the
 * header value it refused (a bearer token reached the log, review s57a). That call comes in the
 * synchronous part of the adapter's, during which console.error is held here and that line kept out.
 */
async function unlogged<T>(call: () => Promise<T>): Promise<{ result: T } | { failed: unknown }> {
  let failed: { error: unknown } | undefined;
  const print = console.error;
  console.error = (...args: unknown[]) => {
    if (args[0] === 'Error processing request:') failed = { error: args[1] };
    else print(...args);
  };
  let pending: Promise<T>;
  try {
    pending = call();
  } finally {
    console.error = print;
  }
  const result = await pending;
  return failed ? { failed: failed.error } : { result };
}

/** The refusal of an event the checks passed but the adapter still could not read (no message kept). */
function unread(error: unknown, log: Logger): Refusal | { status: 500; detail: string } {
  log.warn('the adapter could make no request of the event', {
    error: error instanceof Error ? error.name : typeof error,
  });
  return error instanceof TypeError
    ? {
        status: 400,
        detail: 'the request could not be read: a header, the method or the URL is malformed',
      }
    : { status: 500, detail: 'the request could not be read' };
}

/** A request answered before the app, as problem+json, with its access-log line (route `-`). */
function refused(
  refusal: { status: 400 | 500; detail: string },
  event: object,
  log: Logger,
  started: number,
): LambdaResult {
  const { status, detail } = refusal;
  const sent = methodOf(event);
  const method = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/.test(sent) ? sent : '-';
  log.info('request', {
    method,
    route: '-',
    status,
    ms: Math.round((performance.now() - started) * 10) / 10,
  });
  const title = status === 400 ? 'Bad Request' : 'Internal Server Error';
  return {
    statusCode: status,
    headers: { 'content-type': 'application/problem+json' },
    body: JSON.stringify({ type: typeFor(status), title, status, detail }),
    isBase64Encoded: false,
  };
}

interface LambdaResult {
  statusCode: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body?: string;
  isBase64Encoded?: boolean;
}

/**
 * The result with its headers in `headers` (API Gateway takes either form for payload 1.0): Hono answers a
 * payload 1.0 event in `multiValueHeaders`, which the 6 MB handling below and the stage prefix did not see
 * (review s53g: a gzip answer kept the uncompressed Content-Length, a 406 lost the write's ETag).
 * `Set-Cookie` stays multi-valued (its values cannot be joined).
 */
function singleValued(result: LambdaResult): LambdaResult {
  const { multiValueHeaders: multi, ...rest } = result;
  if (!multi) return result;
  const headers: Record<string, string> = { ...result.headers };
  const cookies: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(multi)) {
    const key = name.toLowerCase();
    if (key === 'set-cookie') cookies[key] = values;
    else headers[key] = values.join(', ');
  }
  return {
    ...rest,
    headers,
    ...(Object.keys(cookies).length ? { multiValueHeaders: cookies } : {}),
  };
}

/**
 * The result, within the 6 MB AWS answers (else AWS answers a bare 502 and the function's work is lost to
 * the caller): as it is when it fits; gzip-compressed when it does not and the request accepts gzip (the
 * ETag stays the session's revision); otherwise a problem that says so, and that a write was carried out.
 */
function fitted(result: LambdaResult, event: object, log: Logger): LambdaResult {
  const body = result.body ?? '';
  // A UTF-16 unit takes at most 6 bytes in JSON (`\u0001`): a body well under the limit fits unmeasured.
  if (body.length * 6 + 64 * 1024 <= LAMBDA_ANSWER_BYTES) return result;
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size <= LAMBDA_ANSWER_BYTES) return result;
  const headers = result.headers ?? {};
  const gzip = acceptsGzip(headerOf(event, 'accept-encoding')) && !headers['content-encoding'];
  let zippedSize: number | undefined;
  if (gzip) {
    const raw = Buffer.from(body, result.isBase64Encoded ? 'base64' : 'utf8');
    const { 'content-length': _length, ...kept } = headers;
    const vary = kept.vary ? `${kept.vary}, Accept-Encoding` : 'Accept-Encoding';
    const zipped: LambdaResult = {
      ...result,
      headers: { ...kept, 'content-encoding': 'gzip', vary },
      body: gzipSync(raw).toString('base64'),
      isBase64Encoded: true,
    };
    zippedSize = Buffer.byteLength(JSON.stringify(zipped));
    if (zippedSize <= LAMBDA_ANSWER_BYTES) return zipped;
  }
  const method = methodOf(event).toUpperCase();
  log.warn('answer too large for Lambda', {
    method,
    status: result.statusCode,
    bytes: size,
    gzip: zippedSize,
  });
  return tooLarge(result, method, size, zippedSize, gzip);
}

/** The problem answered instead of a result over Lambda's limit (a write's ETag and Location kept). */
function tooLarge(
  result: LambdaResult,
  method: string,
  size: number,
  zippedSize: number | undefined,
  gzip: boolean,
): LambdaResult {
  const status = gzip ? 500 : 406;
  const done =
    method !== 'GET' && method !== 'HEAD' && result.statusCode < 300
      ? `the ${method} was carried out (${result.statusCode}), but its answer `
      : 'this answer ';
  const detail = gzip
    ? `${done}takes ${size} bytes in Lambda's response (${zippedSize} gzip-compressed), over the ` +
      `${LAMBDA_ANSWER_BYTES} a Lambda can answer: read it through the Node server or a Worker`
    : `${done}takes ${size} bytes in Lambda's response, over the ${LAMBDA_ANSWER_BYTES} a Lambda can ` +
      'answer: ask for it gzip-compressed (Accept-Encoding: gzip; curl --compressed)';
  const {
    'content-length': _length,
    'content-encoding': _coding,
    etag,
    ...kept
  } = result.headers ?? {};
  // The revision a write made stays named; a read's is not this answer's.
  if (etag && !done.startsWith('this')) kept.etag = etag;
  kept.vary = kept.vary ? `${kept.vary}, Accept-Encoding` : 'Accept-Encoding';
  const problem = {
    type: typeFor(status),
    title: gzip ? 'Answer Too Large' : 'Not Acceptable',
    status,
    detail,
  };
  return {
    statusCode: status,
    headers: { ...kept, 'content-type': 'application/problem+json' },
    body: JSON.stringify(problem),
    isBase64Encoded: false,
  };
}

/**
 * Whether a content coding of gzip is acceptable (RFC 9110 12.5.3): with no Accept-Encoding any coding is;
 * else `gzip` (or `x-gzip`), or `*` when gzip is not named, with a q above 0.
 */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return true;
  let star = false;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name === 'gzip' || name === 'x-gzip') return weight > 0;
    if (name === '*') star = weight > 0;
  }
  return star;
}
