// A server that deletes a batch per cleanup (a Worker: 32 per call, the R2 binding's budget per
// invocation) answers `remaining`; the client passes it on and the CLI calls again until none is left.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

const TOKEN = 'tok_cli_batches_0123456';
let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `batches/laptop=${TOKEN}` },
    cleanupBatch: 2,
  });
});
afterAll(() => server.close());

it('a cleanup in batches: oldest first, `remaining` in the answer, and the CLI goes on until none is left', async () => {
  const client = new SatchelClient({ url: server.url, token: TOKEN });
  const env = { SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKEN };
  for (let i = 0; i < 5; i++) await client.create({ id: `old-${i}`, task: `task ${i}` });
  expect(await client.cleanup(0)).toEqual({ deleted: 2, remaining: 3 });
  const left = (await client.list()).sessions.map((s) => s.id).sort();
  expect(left).toEqual(['old-2', 'old-3', 'old-4']);

  expect(await satchel(['session', 'cleanup', '0'], env)).toEqual({
    code: 0,
    stdout: 'Deleted 3 sessions\n',
    stderr: '',
  });
  expect((await client.list()).sessions).toEqual([]);
  for (let i = 0; i < 3; i++) await client.create({ id: `again-${i}`, task: `task ${i}` });
  const json = await satchel(['session', 'cleanup', '0', '--json'], env);
  expect(JSON.parse(json.stdout)).toEqual({ deleted: 3 });
});
