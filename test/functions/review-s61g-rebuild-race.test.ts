// Review s61g. A delete that lands while another isolate reads a slice of a sliced rebuild (Workers, a
// namespace with no manifest root): the deleted session's task is written into m/s/rebuild.json after
// the DELETE answered and its background work drained (API.md v1.1 "Deleted means gone"). Now the purge
// rewrites the progress (or makes one), so A's save fails its condition and the rebuild reads again.
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { copiedId, copiedIn, gatedPut, holdersOf } from '../support/copied-sessions.js';
import { limitedWorker } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const idOf = copiedId;
const N = 700;
const VICTIM = 350; // in the second slice (s0300..s0599)

it('a delete during another isolate slice read leaves no object holding its text', async () => {
  const store = new LocalStore(tempDir('s61g-rebuild-race'));
  await copiedIn(store, N);
  const rebuildKey = keys.manifestRebuild('edge');
  // Isolate A's view of the bucket: its save of the progress is slow (it lands after B's delete).
  const gate = gatedPut(store, (key) => key === rebuildKey);
  gate.arm();
  const gated = gate.store;
  const a = limitedWorker(gated);
  const b = limitedWorker(store);
  expect((await b.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // slice 1, progress e1
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A reads e1 and slice 2 (s0300..s0599)
  await gate.reached;
  const gone = await b.call('DELETE', `/v1/sessions/${idOf(VICTIM)}`); // B: within its second
  expect(gone.status).toBe(204);
  gate.release();
  await listing;
  const holders = await holdersOf(store, `copied task ${VICTIM}"`);
  // The rebuild goes on to its end, and the lists after it.
  let ok: Awaited<ReturnType<typeof a.call>> | undefined;
  for (let k = 0; k < 10 && !ok; k++) {
    a.isolate();
    await new Promise((d) => setTimeout(d, 1000));
    const l = await a.call('GET', '/v1/sessions?limit=100');
    if (l.status === 200) ok = l;
  }
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    a.isolate();
    const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await a.call('GET', `/v1/sessions?limit=100${q}`);
    ids.push(...(page.json.sessions as { id: string }[]).map((s) => s.id));
    cursor = (page.json.next_cursor as string | null) ?? undefined;
  } while (cursor);
  expect(holders).toEqual([]);
  expect(ok?.status).toBe(200);
  expect(ids).toHaveLength(N - 1);
  expect(ids).not.toContain(idOf(VICTIM));
  expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
}, 180_000);
