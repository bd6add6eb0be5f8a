/**
 * `npx tsx bench/local-list.ts [keys]`: a listing of every key under one prefix of the local folder store
 * (listAll, pages of 1,000), the way a manifest rebuild, a DeepSearch or an index compaction lists. Prints
 * the keys listed and the milliseconds, best of three. Not part of `npm run bench`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from '../lib/storage/local.js';
import { listAll } from '../lib/storage/prefix.js';
import { utf8 } from '../lib/storage/port.js';

const N = Number(process.argv[2] ?? 20000);
const dir = mkdtempSync(join(tmpdir(), 'satchel-local-list-'));
const store = new LocalStore(dir);
for (let i = 0; i < N; i += 200)
  await Promise.all(
    Array.from({ length: Math.min(200, N - i) }, (_, j) =>
      store.put(`ns/a/x/k${String(i + j).padStart(7, '0')}.json`, utf8('{}')),
    ),
  );
let best = Infinity;
let listed = 0;
for (let run = 0; run < 3; run++) {
  const t = performance.now();
  listed = (await listAll(store, 'ns/a/x/')).length;
  best = Math.min(best, performance.now() - t);
}
console.log(`${listed} of ${N} keys listed in ${best.toFixed(0)} ms (best of 3)`);
rmSync(dir, { recursive: true, force: true });
