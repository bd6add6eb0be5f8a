// Review s62c, finding 2. Workers, a namespace with no manifest root (sessions copied in, rebuilt in slices):
// a session created and deleted meanwhile kept its task in its create's log record (m/l/) after its DELETE
// answered and drained, and after the rebuild ended: the sliced rebuild's root covers no log record, and
// readers compact only at 64 uncovered ones (API.md v1.1 "Deleted means gone"). Now a purge that finds no
// root erases the purged id's put records not newer than its delete (its delete record names only the id).
import { expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { copiedIn, holdersOf } from '../support/copied-sessions.js';
import { LIMIT, limitedWorker } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

it('a session created and deleted while the manifest is built in slices leaves no text', async () => {
  const store = new LocalStore(tempDir('s62c-delete-during-build'));
  await copiedIn(store, 400);
  const w = limitedWorker(store);
  expect((await w.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // slice 1 of 2
  w.isolate();
  const made = await w.call('POST', '/v1/sessions', {
    task: 'zqvictimword deploy plan',
    messages: [{ role: 'user', content: 'zqvictimword please remember the plan' }],
  });
  expect(made.status).toBe(201);
  const id = made.json.id as string;
  w.isolate();
  await new Promise((d) => setTimeout(d, 1100));
  const gone = await w.call('DELETE', `/v1/sessions/${id}`);
  expect(gone.status).toBe(204);
  expect(gone.used).toBeLessThanOrEqual(LIMIT);
  // The manifest holds none of its text once the DELETE drained (its delete record names only the id).
  const manifestHolders = async () =>
    (await holdersOf(store, 'zqvictimword')).filter((k) => k.startsWith('ns/edge/m/'));
  expect(await manifestHolders()).toEqual([]);
  let ok = 0;
  for (let k = 0; k < 6; k++) {
    w.isolate();
    await new Promise((d) => setTimeout(d, 1100));
    const l = await w.call('GET', '/v1/sessions?limit=5');
    expect(l.used).toBeLessThanOrEqual(LIMIT);
    if (l.status === 200) ok++;
  }
  expect(ok).toBeGreaterThan(0);
  const s = await w.call('POST', '/v1/session_search', { action: 'search', query: 'zqvictimword' });
  expect(JSON.stringify(s.json)).not.toContain(id);
  expect(await holdersOf(store, 'zqvictimword')).toEqual([]);
}, 180_000);
