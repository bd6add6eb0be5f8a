// Review s55d (2026-12-06): a cleanup on a server that deletes a batch per call (`cleanupBatch`, as a
// Worker does), with storage refusing some session DELETEs (nothing lands):
// - a batch that partly fails answers 503 "cleanup deleted 1 of 2 …", which the client retries by itself:
//   the retry's 200 was the answer, the first attempt's deletions in no count and `uncounted` unset;
// - a later call that fails made the CLI print only the error: what the earlier calls deleted (and the
//   server acknowledged) was said nowhere.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

const TOKEN = 'tok_cli_batches_0123456';
let server: RunningServer;
/** Refuses a session object's DELETE when it says so. */
let refuse: ((key: string) => boolean) | undefined;

class Refusing extends PassThrough {
  override async delete(keys: string | string[]) {
    if (typeof keys === 'string' && /\/sessions\/[^/]+\.json$/.test(keys) && refuse?.(keys))
      throw new StorageUnavailableError('injected: DELETE refused');
    return this.inner.delete(keys);
  }
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 's55d-cleanup-'));
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `batches/laptop=${TOKEN}` },
    objects: new Refusing(new LocalStore(dir)),
    dir,
    cleanupBatch: 2,
  });
});
afterAll(() => server.close());

const client = () => new SatchelClient({ url: server.url, token: TOKEN });
const env = () => ({ SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKEN });

/** Five sessions, oldest first, in an otherwise empty namespace. */
async function fiveSessions(prefix: string): Promise<void> {
  while ((await client().cleanup(0)).remaining);
  for (let i = 0; i < 5; i++) {
    await client().create({ id: `${prefix}-${i}`, task: `task ${i}` });
    await new Promise((r) => setTimeout(r, 5));
  }
}

it('a batch that partly failed and was retried by the client is counted as uncounted', async () => {
  await fiveSessions('once');
  let refused = false;
  refuse = (key) => !refused && key.endsWith('/once-1.json') && (refused = true);
  const out = await satchel(['session', 'cleanup', '0', '--json'], env());
  refuse = undefined;
  expect((await client().list()).sessions).toEqual([]); // all 5 went
  expect(out.code).toBe(0);
  // The first call's 503 deleted once-0; the client's retry and the CLI's next calls deleted the other 4.
  expect(JSON.parse(out.stdout)).toEqual({ deleted: 4, uncounted: true });
});

for (const json of [false, true])
  it(`reports the sessions earlier batches deleted when a later one fails${json ? ' (--json)' : ''}`, async () => {
    const prefix = json ? 'later-j' : 'later-p';
    await fiveSessions(prefix);
    let seen = 0;
    refuse = () => ++seen > 2; // the first batch goes, every later DELETE is refused
    const out = await satchel(['session', 'cleanup', '0', ...(json ? ['--json'] : [])], env());
    refuse = undefined;
    expect((await client().list()).sessions.map((s) => s.id).sort()).toEqual(
      [2, 3, 4].map((i) => `${prefix}-${i}`),
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
