// Lambda entry (API Gateway HTTP API v2 and function URLs): S3 storage; background work is drained
// before the handler returns, since a frozen function would otherwise stall it.
import { handle } from 'hono/aws-lambda';
import { ConfigError, createServerLogger, loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { configurationProblem } from '../lib/http/problem.js';
import { S3Store } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';

/**
 * A synchronous invocation answers at most 6 MB (the response's JSON, the body escaped in it): a session
 * over that could be stored in appends but never read back. The default cap on Lambda leaves room for the
 * escaping and the envelope; a larger one stops the function at init.
 */
const LAMBDA_SESSION_BYTES = 4 * 1024 * 1024;
const LAMBDA_MAX_SESSION_BYTES = 5 * 1024 * 1024;

const ready = (async () => {
  const env = { SATCHEL_MAX_SESSION_BYTES: String(LAMBDA_SESSION_BYTES), ...process.env };
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
  });
  return { handler: handle(built.app), background: built.background };
})();
// A configuration error is logged once, at init, and answers every request (below); it must not end the
// init as an unhandled rejection, which fails each invocation with no word of the cause.
ready.catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(`satchel: ${err.message}`);
});

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
  const { handler: inner, background } = app;
  const { event: routed, stage } = withoutStage(withoutReadBody(event));
  const result = await inner(routed, context);
  await background.drain();
  // A (Content-)Location the API answers is a path from the root it routes on: under a named stage's.
  const headers = (result as { headers?: Record<string, string> }).headers ?? {};
  for (const name of ['location', 'content-location'])
    if (stage && headers[name]?.startsWith('/')) headers[name] = stage + headers[name];
  return result;
};

/**
 * An HTTP API (payload 2.0) event through a named stage of the API's own endpoint
 * (`<api>.execute-api.<region>.amazonaws.com`) carries the stage in its path (`/prod/v1/health`,
 * `requestContext.stage: "prod"`); the API routes on the path without it, as through the `$default`
 * stage, a custom domain and function URLs. Answers the event to route and the prefix taken off ('' for none).
 */
function withoutStage<E extends object>(event: E): { event: E; stage: string } {
  const e = event as {
    rawPath?: string;
    requestContext?: { stage?: string; domainName?: string; http?: { path?: string } };
  };
  const name = e.requestContext?.stage;
  // Only the API's own endpoint puts the stage in the path: through a custom domain's API mapping the
  // path has none, whatever the stage is named (one named `v1` is not the API's `/v1`).
  const own = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com$/.test(e.requestContext?.domainName ?? '');
  const stage = own && name && name !== '$default' ? `/${name}` : '';
  if (!stage || !e.rawPath?.startsWith(stage + '/')) return { event, stage: '' };
  const http = e.requestContext!.http;
  const path = (p?: string) => (p?.startsWith(stage + '/') ? p.slice(stage.length) : p);
  return {
    event: {
      ...event,
      rawPath: path(e.rawPath),
      requestContext: {
        ...e.requestContext,
        ...(http ? { http: { ...http, path: path(http.path) } } : {}),
      },
    },
    stage,
  };
}

/** A GET or HEAD with a body (which Node serves, ignoring it) without it: Hono cannot build that request. */
function withoutReadBody<E extends object>(event: E): E {
  const e = event as {
    body?: unknown;
    httpMethod?: string;
    requestContext?: { http?: { method?: string } };
  };
  const method = (e.requestContext?.http?.method ?? e.httpMethod ?? '').toUpperCase();
  if ((method === 'GET' || method === 'HEAD') && e.body != null)
    return { ...event, body: undefined };
  return event;
}
