// Node entry: the local server. `npm start` runs it; SATCHEL_STORAGE=s3 points it at a bucket.
import { serve } from '@hono/node-server';
import { resolve } from 'node:path';
import { loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { createLogger } from '../lib/model/log.js';
import { LocalStore } from '../lib/storage/local.js';
import { S3Store } from '../lib/storage/s3.js';

const config = await loadConfig(process.env, 'local');
const objects =
  config.storage.kind === 'local'
    ? new LocalStore(resolve(config.storage.dir))
    : config.storage.kind === 's3'
      ? new S3Store(config.storage.s3)
      : (() => {
          throw new Error('SATCHEL_STORAGE=r2 works only on Workers');
        })();
const open = config.tokens === null;
// Without tokens, the API is open: only listen on loopback then.
const hostname = open ? '127.0.0.1' : process.env.HOST || '0.0.0.0';
const { app, log } = createApp({ config, objects, allowOpen: true, log: createLogger() });
const server = serve({ fetch: app.fetch, port: config.port, hostname }, (info) => {
  console.log(`satchel listening on http://${hostname}:${info.port}`);
  console.log(`storage: ${objects.name}`);
  console.log(
    open
      ? 'auth: none (SATCHEL_TOKENS is not set): namespace "default", loopback only'
      : `auth: ${config.tokens!.length} token(s)`,
  );
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
void log;
