// Workers entry: R2 binding BUCKET by default, S3 when SATCHEL_STORAGE=s3. The app is built once per isolate.
import type { ExecutionContext } from 'hono';
import { loadConfig, type Env as VarEnv } from '../lib/config.js';
import { createApp } from '../lib/http/app.js';
import { R2Store, type R2BucketLike } from '../lib/storage/r2.js';
import { S3Store } from '../lib/storage/s3.js';

type WorkerEnv = VarEnv & { BUCKET?: R2BucketLike };

let built: Promise<ReturnType<typeof createApp>['app']> | undefined;

async function build(env: WorkerEnv) {
  const vars = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string')) as VarEnv;
  const config = await loadConfig(vars, 'r2');
  let objects;
  if (config.storage.kind === 's3') objects = new S3Store(config.storage.s3);
  else if (config.storage.kind === 'r2' && env.BUCKET) objects = new R2Store(env.BUCKET);
  else throw new Error('bind an R2 bucket as BUCKET, or set SATCHEL_STORAGE=s3');
  // An isolate has 128 MB: keep the session cache small there.
  return createApp({ config, objects, cacheBytes: 24 * 1024 * 1024 }).app;
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    built ??= build(env);
    const app = await built;
    return app.fetch(request, env, ctx);
  },
};
