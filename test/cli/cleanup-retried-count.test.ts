// Review s55d (2026-12-06), fixed: the client now sets `uncounted` after it retried a 5xx.
// A cleanup whose batch partly fails answers 503 "cleanup deleted 1 of 2 sessions; … could not be deleted
// …: try again" with Retry-After: the client (lib/client/client.ts request) retries that 503 by itself, and
// the retry's 200 {deleted} becomes the answer: the sessions the first attempt deleted are in no count, and
// `uncounted` is not set (only a 503 saying "may have been stored", or a lost answer, sets `lost`).
// `satchel session cleanup` then prints fewer deletions than happened, with no word that some are missing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, type ObjectStore } from '../../lib/storage/port.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

const TOKEN = 'tok_cli_batches_0123456';
let server: RunningServer;
let failNext = false;

/** A local store whose DELETE of session old-1's object fails once (storage refused it: nothing landed). */
function failingOnce(inner: LocalStore): ObjectStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'delete')
        return async (keys: string | string[]) => {
          if (failNext && keys === 'ns/batches/sessions/old-1.json') {
            failNext = false;
            throw new StorageUnavailableError('injected: DELETE refused');
          }
          return target.delete(keys);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as unknown as ObjectStore;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 's55d-cleanup-'));
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `batches/laptop=${TOKEN}` },
    objects: failingOnce(new LocalStore(dir)),
    dir,
    cleanupBatch: 2,
  });
});
afterAll(() => server.close());

it('the CLI counts every session a cleanup deleted, or says some are not counted', async () => {
  const client = new SatchelClient({ url: server.url, token: TOKEN });
  const env = { SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKEN };
  for (let i = 0; i < 5; i++) {
    await client.create({ id: `old-${i}`, task: `task ${i}` });
    await new Promise((r) => setTimeout(r, 5));
  }
  failNext = true;
  const out = await satchel(['session', 'cleanup', '0', '--json'], env);
  expect((await client.list()).sessions).toEqual([]); // all 5 went
  expect(out.code).toBe(0);
  const printed = JSON.parse(out.stdout) as { deleted: number; uncounted?: boolean };
  // The first call's 503 deleted old-0; the client's retry and the CLI's next calls deleted the other 4.
  expect(printed).toEqual({ deleted: 4, uncounted: true });
});
