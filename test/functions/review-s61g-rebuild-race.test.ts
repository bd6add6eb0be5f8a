// Review s61g. A delete that lands while another isolate reads a slice of a sliced rebuild (Workers, a
// namespace with no manifest root): the deleted session's task is written into m/s/rebuild.json after
// the DELETE answered and its background work drained (API.md v1.1 "Deleted means gone"). Now the purge
// rewrites the progress (or makes one), so A's save fails its condition and the rebuild reads again.
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { text, type ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { copiedId, copiedIn } from '../support/copied-sessions.js';
import { limitedWorker } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const idOf = copiedId;
const N = 700;
const VICTIM = 350; // in the second slice (s0300..s0599)

async function holdersOf(store: LocalStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await listAll(store, 'ns/edge/')) {
    const found = await store.get(key);
    if (found && text(found.body).includes(needle)) out.push(key);
  }
  return out;
}

it('a delete during another isolate slice read leaves no object holding its text', async () => {
  const store = new LocalStore(tempDir('s61g-rebuild-race'));
  await copiedIn(store, N);
  const rebuildKey = keys.manifestRebuild('edge');
  let reached!: () => void;
  const atPut = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let gating = true;
  // Isolate A's view of the bucket: its write of the progress is slow (it lands after B's delete).
  const gated = new Proxy(store, {
    get(target, prop, recv) {
      if (prop === 'put')
        return async (key: string, body: Uint8Array, opts?: unknown) => {
          if (key === rebuildKey && gating) {
            gating = false;
            reached();
            await gate;
          }
          return (target.put as (...a: unknown[]) => unknown).call(target, key, body, opts);
        };
      const v = Reflect.get(target, prop, recv);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as ObjectStore;
  const a = limitedWorker(gated);
  const b = limitedWorker(store);
  expect((await b.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // slice 1, progress e1
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A reads e1 and slice 2 (s0300..s0599)
  await atPut;
  const gone = await b.call('DELETE', `/v1/sessions/${idOf(VICTIM)}`); // B: within its second
  expect(gone.status).toBe(204);
  release();
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
