// Review s62c, finding 1. Workers, a namespace with no manifest root rebuilt in slices: the last slice
// checked the progress object and only then listed m/ and wrote its pages and root. A DELETE by another
// isolate between that check and the root was not seen: root 1's page held the deleted session's task after
// the DELETE answered and drained, and still after eight lists (API.md v1.1 "Deleted means gone"). Now the
// purge that found no root records the ids it dropped in the progress and lists m/ again after it; the
// progress stays with the root, and the next request to find both purges what was dropped meanwhile (until
// review s62h the last slice did, in its own request).
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { copiedId, copiedIn, gatedPut, holdersOf } from '../support/copied-sessions.js';
import { workerHandler } from '../../functions/worker-handler.js';
import { LIMIT, limited, limitedWorker, r2Over } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const N = 400; // slice 1: s0000..s0299; slice 2 (the last): s0300..s0399
const VICTIM = 350;

it('a delete between the last slice check and its root leaves no object holding its text', async () => {
  const store = new LocalStore(tempDir('s62c-rebuild-root'));
  await copiedIn(store, N);
  const gateA = gatedPut(store, (key) => key.startsWith('ns/edge/m/g/'));
  const a = limitedWorker(gateA.store);
  const b = limitedWorker(store);
  expect((await a.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // slice 1, progress saved
  await new Promise((d) => setTimeout(d, 1100)); // a process reads one slice a second
  a.isolate();
  gateA.arm();
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A: slice 2, its check passes, then its pages
  await gateA.reached;
  const gone = await b.call('DELETE', `/v1/sessions/${copiedId(VICTIM)}`);
  expect(gone.status).toBe(204);
  expect(gone.used).toBeLessThanOrEqual(LIMIT);
  gateA.release();
  const got = await listing;
  expect(got.used).toBeLessThanOrEqual(LIMIT);
  // What was dropped after its claim stays listed in the progress, for the next request.
  expect(await store.get(keys.manifestRebuild('edge'))).not.toBeNull();
  let ok = false;
  for (let k = 0; k < 8 && !ok; k++) {
    a.isolate();
    await new Promise((d) => setTimeout(d, 1100));
    const l = await a.call('GET', '/v1/sessions?limit=100');
    expect(l.used).toBeLessThanOrEqual(LIMIT);
    if (l.status !== 200) continue;
    ok = true;
    expect(JSON.stringify(l.json)).not.toContain(copiedId(VICTIM));
    expect((l.json.sessions as unknown[]).length).toBe(100);
    // Once that request drained (its purge of what was dropped meanwhile), no object holds the task.
    expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
  }
  expect(ok).toBe(true);
  expect((await a.call('GET', `/v1/sessions/${copiedId(VICTIM)}`)).status).toBe(404);
  expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
  expect(await store.get(keys.manifestRebuild('edge'))).toBeNull();
}, 180_000);

it('a purge that finds no root, and whose progress write lands after the root, purges that root', async () => {
  const store = new LocalStore(tempDir('s62c-rebuild-root-late'));
  await copiedIn(store, N);
  const progress = (key: string) => key === keys.manifestRebuild('edge');
  const gateA = gatedPut(store, progress); // A's claim of the last slice
  const gateB = gatedPut(store, progress); // B's purge, rewriting the progress
  const a = limitedWorker(gateA.store);
  const b = limitedWorker(gateB.store);
  expect((await a.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // slice 1, progress saved
  await new Promise((d) => setTimeout(d, 1100));
  a.isolate();
  gateA.arm();
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A has read slice 2 (the victim among it)
  await gateA.reached;
  gateB.arm();
  const gone = b.call('DELETE', `/v1/sessions/${copiedId(VICTIM)}`); // its purge lists m/: no root
  await gateB.reached;
  gateA.release(); // A claims, writes its root, finds the progress as it claimed it, deletes it
  expect((await listing).used).toBeLessThanOrEqual(LIMIT);
  expect(await listAll(store, 'ns/edge/m/r/')).toHaveLength(1);
  gateB.release(); // B's write fails (gone), makes one, lists m/ again: a root, which it purges
  const done = await gone;
  expect(done.status).toBe(204);
  expect(done.used).toBeLessThanOrEqual(LIMIT);
  expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
  expect(await store.get(keys.manifestRebuild('edge'))).toBeNull(); // no progress left over
  a.isolate();
  await new Promise((d) => setTimeout(d, 1100));
  const l = await a.call('GET', '/v1/sessions?limit=100');
  expect(l.status).toBe(200);
  expect(JSON.stringify(l.json)).not.toContain(copiedId(VICTIM));
}, 180_000);

/** One call to a new Worker isolate over `store`, with headers of its own (an If-Match); waitUntil drained. */
async function callWith(
  store: ObjectStore,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const { bucket, state } = limited(r2Over(store));
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {} };
  const token = 'tok_worker_limit_0123';
  const res = await workerHandler().fetch(
    new Request(`https://w.example${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    { SATCHEL_TOKENS: `edge/w=${token}`, SATCHEL_LOG: 'off', BUCKET: bucket } as never,
    { ...ctx, props: {} } as never,
  );
  const answer = await res.text();
  while (pending.length) await Promise.allSettled(pending.splice(0));
  const json = (answer ? JSON.parse(answer) : {}) as Record<string, unknown>;
  return { status: res.status, json, etag: res.headers.get('etag'), used: state.used };
}

it('a task replaced between the last slice check and its root leaves no page holding the old one', async () => {
  const store = new LocalStore(tempDir('s62c-rebuild-root-scrub'));
  await copiedIn(store, N);
  const gateA = gatedPut(store, (key) => key.startsWith('ns/edge/m/g/'));
  const a = limitedWorker(gateA.store);
  const path = `/v1/sessions/${copiedId(VICTIM)}`;
  // A copied session is at revision 0, and a first version removes no text (no scrub): append once.
  const more = { messages: [{ role: 'user', content: 'one more' }] };
  expect((await callWith(store, 'POST', `${path}/messages`, more)).status).toBe(200);
  expect((await a.call('GET', '/v1/sessions?limit=5')).status).toBe(503);
  await new Promise((d) => setTimeout(d, 1100));
  a.isolate();
  gateA.arm();
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A has read the victim with its old task
  await gateA.reached;
  const read = await callWith(store, 'GET', path);
  expect(read.status).toBe(200);
  const put = await callWith(
    store,
    'PUT',
    path,
    { ...read.json, task: 'renamed plan' },
    {
      'if-match': read.etag!,
    },
  );
  expect(put.status, JSON.stringify(put.json)).toBe(200);
  expect(put.used).toBeLessThanOrEqual(LIMIT);
  gateA.release();
  expect((await listing).used).toBeLessThanOrEqual(LIMIT);
  a.isolate();
  await new Promise((d) => setTimeout(d, 1100));
  const l = await a.call('GET', '/v1/sessions?limit=100');
  expect(l.status).toBe(200);
  const listed = (l.json.sessions as { id: string; task: string }[]).find(
    (s) => s.id === copiedId(VICTIM),
  );
  expect(listed?.task).toBe('renamed plan');
  // The request that found the root and the progress purged the scrub dropped after the claim.
  expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
  expect(await store.get(keys.manifestRebuild('edge'))).toBeNull();
}, 180_000);
