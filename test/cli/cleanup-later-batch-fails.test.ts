// Review s55d (2026-12-06), fixed: the CLI prints what earlier calls deleted, then the error.
// satchel session cleanup on a batching server (a Worker): the first call deletes a batch and answers
// {deleted: 2, remaining: 3}; a later call fails (storage refuses every DELETE: 503, retried by the client,
// then thrown). The CLI (lib/cli/commands/session.ts cleanup) then prints only the error: the two sessions
// it did delete are reported nowhere, on stdout or stderr, --json or not.
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
let sessionDeletes = 0;
let failFrom = Infinity;

/** A local store that refuses session objects' DELETEs from the `failFrom`th on (nothing lands). */
function failingLater(inner: LocalStore): ObjectStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'delete')
        return async (keys: string | string[]) => {
          if (typeof keys === 'string' && /\/sessions\/old-\w+\.json$/.test(keys)) {
            if (++sessionDeletes > failFrom)
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
    objects: failingLater(new LocalStore(dir)),
    dir,
    cleanupBatch: 2,
  });
});
afterAll(() => server.close());

for (const json of [false, true])
  it(`reports the sessions earlier batches deleted when a later one fails${json ? ' (--json)' : ''}`, async () => {
    const client = new SatchelClient({ url: server.url, token: TOKEN });
    const env = { SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKEN };
    while ((await client.cleanup(0)).remaining); // a clean namespace
    for (let i = 0; i < 5; i++) {
      await client.create({ id: `old-${json ? 'j' : 'p'}${i}`, task: `task ${i}` });
      await new Promise((r) => setTimeout(r, 5));
    }
    sessionDeletes = 0;
    failFrom = 2; // the first batch goes, every later DELETE is refused
    const out = await satchel(['session', 'cleanup', '0', ...(json ? ['--json'] : [])], env);
    failFrom = Infinity;
    expect((await client.list()).sessions.map((s) => s.id).sort()).toEqual(
      [2, 3, 4].map((i) => `old-${json ? 'j' : 'p'}${i}`),
    );
    expect(out.code).not.toBe(0);
    // Two sessions were deleted: stdout says so, the error follows on stderr.
    if (json) expect(JSON.parse(out.stdout)).toEqual({ deleted: 2, remaining: 3, uncounted: true });
    else
      expect(out.stdout).toBe(
        'Deleted 2 sessions, then a call failed (sessions it deleted are not counted); up to 3 more are ' +
          'left: run it again\n',
      );
    expect(out.stderr).toMatch(/Service Unavailable|503/);
  }, 90_000);
