// `npm run reindex [-- <namespace> ...]`: rebuilds the manifest and the search indexes of each namespace
// from the session objects alone, with the same configuration as the server (SATCHEL_STORAGE, S3_*,
// SATCHEL_EMBEDDINGS_*). Without arguments it rebuilds every namespace found in the store.
import { resolve } from 'node:path';
import { loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { createLogger, describeError } from '../lib/model/log.js';
import { listAll } from '../lib/storage/prefix.js';
import { LocalStore } from '../lib/storage/local.js';
import type { ObjectStore } from '../lib/storage/port.js';
import { S3Store } from '../lib/storage/s3.js';
import { reindex } from '../lib/search/reindex.js';

const config = await loadConfig(process.env, 'local');
const objects: ObjectStore =
  config.storage.kind === 'local'
    ? new LocalStore(resolve(config.storage.dir))
    : config.storage.kind === 's3'
      ? new S3Store(config.storage.s3)
      : (() => {
          throw new Error(
            'SATCHEL_STORAGE=r2 is reachable only from a Worker; reindex through S3 credentials for the R2 bucket',
          );
        })();
const { search, background } = createApp({ config, objects, log: createLogger({ quiet: true }) });

let namespaces = process.argv.slice(2).filter((a) => !a.startsWith('-'));
if (namespaces.length === 0) {
  // Every namespace that has session objects: `ns/<ns>/sessions/…`.
  const found = new Set<string>();
  for (const key of await listAll(objects, 'ns/')) {
    const m = /^ns\/([^/]+)\/sessions\//.exec(key);
    if (m) found.add(m[1]!);
  }
  namespaces = [...found].sort();
}
for (const ns of namespaces) {
  const t0 = performance.now();
  const { sessions, vectors, vectorsError } = await reindex(search, ns);
  const lag =
    vectors !== 'lagging'
      ? ''
      : `; vectors lag (embeddings service unavailable${
          vectorsError ? `: ${describeError(vectorsError)}` : ''
        }): a search's compaction builds them`;
  console.log(
    `${ns}: ${sessions} sessions reindexed in ${((performance.now() - t0) / 1000).toFixed(1)} s${lag}`,
  );
}
await background.drain();
if (namespaces.length === 0) console.log('no namespaces with sessions found');
