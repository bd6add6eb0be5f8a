// The Workers fetch handler both Worker entries share: R2 binding BUCKET by default, S3 when
// SATCHEL_STORAGE=s3 and the entry brings the S3 adapter. The app is built once per isolate.
import type { ExecutionContext } from 'hono';
import {
  ConfigError,
  createServerLogger,
  configFrom,
  type Env as VarEnv,
  type S3Config,
} from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { configurationProblem } from '../lib/http/problem.js';
import { R2Store, type R2BucketLike } from '../lib/storage/r2.js';
import type { ObjectStore } from '../lib/storage/port.js';

type WorkerEnv = VarEnv & { BUCKET?: R2BucketLike };

/**
 * The most sessions one cleanup deletes in a Worker: a delete costs about 19 storage operations with its
 * background work, and an invocation may make 1,000 R2 binding operations (docs/deploy.md).
 */
const CLEANUP_BATCH = 32;

/**
 * The handler; `s3` (reading the S3 settings and opening the store) is absent in the R2-only bundle, which
 * then refuses SATCHEL_STORAGE=s3.
 */
export function workerHandler(s3?: {
  config: (env: VarEnv) => S3Config;
  open: (config: S3Config) => ObjectStore | Promise<ObjectStore>;
}) {
  let built: Promise<ReturnType<typeof createApp>['app']> | undefined;

  async function build(env: WorkerEnv) {
    const vars: VarEnv = {};
    for (const [name, v] of Object.entries(env)) {
      const text = varText(v);
      if (text !== undefined) vars[name] = text;
    }
    const config = await configFrom(vars, 'r2', s3?.config);
    if (config.storage.kind === 'local')
      throw new ConfigError(
        "SATCHEL_STORAGE=local is the Node server's folder: on Workers use r2 or s3",
      );
    let objects: ObjectStore;
    if (config.storage.kind === 's3') objects = await s3!.open(config.storage.s3);
    else if (config.storage.kind === 'r2' && isBucket(env.BUCKET))
      objects = new R2Store(env.BUCKET);
    else if (env.BUCKET !== undefined)
      throw new ConfigError(
        `BUCKET is ${varText(env.BUCKET) === undefined ? 'a binding' : 'a var'}, not an R2 binding: bind ` +
          'the bucket under [[r2_buckets]] with binding = "BUCKET" (and no BUCKET under [vars]), ' +
          'or set SATCHEL_STORAGE=s3',
      );
    else throw new ConfigError('bind an R2 bucket as BUCKET, or set SATCHEL_STORAGE=s3');
    // An isolate has 128 MB: keep the session cache small there. No open mode: without SATCHEL_TOKENS
    // every request is 401 saying so (wrangler dev without .dev.vars).
    const log = createServerLogger(config);
    return createApp({
      config,
      objects,
      log,
      cacheBytes: 24 * 1024 * 1024,
      shortLived: true,
      operationBudget: true,
      cleanupBatch: CLEANUP_BATCH,
    }).app;
  }

  return {
    async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
      built ??= build(env);
      let app: Awaited<typeof built>;
      try {
        app = await built;
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        // A configuration error answers every request with the one line that names it (no secret in it).
        console.error(`satchel: ${err.message}`);
        return new Response(JSON.stringify(configurationProblem(err.message)), {
          status: 500,
          headers: { 'content-type': 'application/problem+json' },
        });
      }
      return app.fetch(request, env, ctx);
    },
  };
}

/**
 * An R2 binding: an object with the bucket's methods. A var named BUCKET (the bucket's name under [vars],
 * or a JSON table) is truthy too, but wrapping it would fail every request on `get is not a function`.
 */
function isBucket(v: unknown): v is R2BucketLike {
  if (typeof v !== 'object' || v === null) return false;
  const b = v as Record<string, unknown>;
  return ['get', 'head', 'put', 'list', 'delete'].every((m) => typeof b[m] === 'function');
}

/**
 * A var's text. Wrangler passes a var written without quotes as a number or boolean, and a TOML or JSON
 * table or array as an object (a JSON binding): their text is what the config reads. Bindings (R2
 * buckets, KV, services) are objects of their own classes, not plain ones: they have no text.
 */
function varText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v !== 'object' || v === null) return undefined;
  const proto = Object.getPrototypeOf(v) as unknown;
  return Array.isArray(v) || proto === Object.prototype || proto === null
    ? JSON.stringify(v)
    : undefined;
}
