// Lambda entry (API Gateway HTTP API v2 and function URLs): S3 storage; background work is drained
// before the handler returns, since a frozen function would otherwise stall it.
import { handle } from 'hono/aws-lambda';
import { ConfigError, createServerLogger, loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { configurationProblem } from '../lib/http/problem.js';
import { S3Store } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';

const ready = (async () => {
  const config = await loadConfig(process.env, 's3');
  if (config.storage.kind !== 's3') throw new ConfigError('on Lambda, SATCHEL_STORAGE must be s3');
  const log = createServerLogger(config);
  const built = createApp({
    config,
    objects: new S3Store({ ...config.storage.s3, wire: nodeWire }),
    log,
    shortLived: true,
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
  const result = await inner(event, context);
  await background.drain();
  return result;
};
