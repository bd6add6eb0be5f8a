// The Workers fetch handler both Worker entries share: R2 binding BUCKET by default, S3 when
// SATCHEL_STORAGE=s3 and the entry brings the S3 adapter. The app is built once per isolate.
import type { ExecutionContext } from 'hono';
import { loadConfig, type Env as VarEnv, type S3Config } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { R2Store, type R2BucketLike } from '../lib/storage/r2.js';
import type { ObjectStore } from '../lib/storage/port.js';

type WorkerEnv = VarEnv & { BUCKET?: R2BucketLike };

/** The handler; `openS3` is absent in the R2-only bundle, which then refuses SATCHEL_STORAGE=s3. */
export function workerHandler(openS3?: (config: S3Config) => ObjectStore | Promise<ObjectStore>) {
  let built: Promise<ReturnType<typeof createApp>['app']> | undefined;

  async function build(env: WorkerEnv) {
    const vars = Object.fromEntries(
      Object.entries(env).filter(([, v]) => typeof v === 'string'),
    ) as VarEnv;
    const config = await loadConfig(vars, 'r2');
    let objects: ObjectStore;
    if (config.storage.kind === 's3') {
      if (!openS3)
        throw new Error(
          'SATCHEL_STORAGE=s3 needs the R2+S3 bundle (dist/worker.js); this one is R2-only',
        );
      objects = await openS3(config.storage.s3);
    } else if (config.storage.kind === 'r2' && env.BUCKET) objects = new R2Store(env.BUCKET);
    else throw new Error('bind an R2 bucket as BUCKET, or set SATCHEL_STORAGE=s3');
    // An isolate has 128 MB: keep the session cache small there.
    return createApp({ config, objects, cacheBytes: 24 * 1024 * 1024 }).app;
  }

  return {
    async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
      built ??= build(env);
      const app = await built;
      return app.fetch(request, env, ctx);
    },
  };
}
