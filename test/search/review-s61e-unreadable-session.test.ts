// Review s61e, finding 1 (fixed 2026-12-07; these tests failed on the code before the fix).
// A live session whose version has no index record (its record PUT failed, a Worker's waitUntil work was
// cut off) is built from its session object. When that object does not parse (a torn copy), the build threw
// `corrupt` out of every search and compaction of the namespace: Workers answered 500 to every search, Node
// read every session object (DeepSearch) on every search, and no compaction wrote a root again. Now such a
// version is left out of the index, as it is of results, and is not read again for a while.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { LocalEmbedder } from '../../lib/search/embed.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { searchDevice } from '../support/search-device.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';
import { limitedWorker, LIMIT } from '../support/worker-limit.js';

const BAD = 's0007';
const idOf = (i: number) => `s${String(i).padStart(4, '0')}`;

/** The real store, with the keys of every GET kept (to tell an index answer from a DeepSearch). */
class Watched extends PassThrough {
  gets: string[] = [];
  override get(key: string) {
    this.gets.push(key);
    return this.inner.get(key);
  }
  head(key: string) {
    return this.inner.head!(key);
  }
  /** The session objects read since the last call. */
  sessionReads(): string[] {
    const out = this.gets.filter((k) => k.includes('/sessions/'));
    this.gets = [];
    return out;
  }
}

/** A process with both indexes (the local embedder, weighted). */
const device = (objects: ObjectStore, onError?: (what: string, err: unknown) => void) =>
  searchDevice(
    objects,
    { localVectorWeight: 1, ...(onError ? { onError } : {}) },
    new LocalEmbedder(),
  );

/**
 * The process that made the sessions, gone since: it kept no standing pending markers (which a cold
 * reader checks against the session objects), so that the reads counted are the search's own.
 */
const writer = (objects: ObjectStore) =>
  searchDevice(objects, { localVectorWeight: 1 }, new LocalEmbedder(), {
    pipeline: defaultPipeline({ maxSessionBytes: 1 << 20 }),
    markerIdleMs: 0,
  });

/**
 * `n` sessions in namespace `ns`, indexed and compacted; then BAD's append whose index records never
 * landed, and BAD's object torn. Returns BAD's object as it was, to mend it with.
 */
async function withTornSession(objects: ObjectStore, ns: string, n: number): Promise<Uint8Array> {
  const a = writer(objects);
  for (let i = 0; i < n; i += 16) {
    const ids = Array.from({ length: Math.min(16, n - i) }, (_, k) => idOf(i + k));
    await Promise.all(
      ids.map((id) =>
        a.sessions.create(
          ns,
          { id, task: `task ${id}`, messages: [{ role: 'user', content: `common words zq${id}` }] },
          a.ctx,
        ),
      ),
    );
  }
  await a.drainAll();
  await a.sessions.list(ns, { limit: 1 }, a.ctx); // the manifest's log folded, as a listing does
  await a.drainAll();
  await a.engine.lexical.compact(ns);
  await (await a.engine.vectors(ns))!.compact(ns);
  const msg = { role: 'user' as const, content: 'zqappended later words' };
  await a.sessions.append(ns, BAD, { messages: [msg] }, undefined, a.ctx);
  await a.drainAll();
  // Its record PUTs failed (lexical and vector): the version is left for a build from the object.
  const records = (await listAll(objects, `ns/${ns}/x/`)).filter((k) => k.includes(`/d/${BAD}/`));
  expect(records.length).toBeGreaterThan(0);
  await objects.delete(records);
  const key = `ns/${ns}/sessions/${BAD}.json`;
  const whole = (await objects.get(key))!.body;
  await objects.put(key, whole.slice(0, 40));
  return whole;
}

beforeEach(() => {
  // Only the clock is faked (it runs on, and a test moves it past the grace); timers stay real.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a session version the index cannot build (review s61e)', () => {
  it('on Node, a search answers from the index without it, and reads no session object again', async () => {
    const local = tempLocalStore('s61e-node');
    await withTornSession(local, 'ns', 40);
    const objects = new Watched(local);
    const errors: string[] = [];
    const b = device(objects, (what) => errors.push(what));
    await b.sessions.list('ns', { limit: 1 }, b.ctx); // the manifest is read: its own reads are not counted
    await b.drainAll();
    objects.sessionReads();
    expect((await b.search('ns', 'zqs0003', 5)).map((h) => h.id)).toEqual(['s0003']);
    // The result, and the torn version's build: not a DeepSearch of all 40.
    expect(new Set(objects.sessionReads())).toEqual(
      new Set(['ns/ns/sessions/s0003.json', `ns/ns/sessions/${BAD}.json`]),
    );
    await b.drainAll();
    objects.sessionReads();
    for (let k = 0; k < 3; k++) {
      expect((await b.search('ns', 'zqs0004', 5)).map((h) => h.id)).toEqual(['s0004']);
      expect(await b.search('ns', 'zqappended', 5)).toEqual([]); // left out, as DeepSearch does
      await b.drainAll();
      // At most the result's (the session cache may hold it): never the torn one's.
      expect(objects.sessionReads().filter((key) => !key.endsWith('/s0004.json'))).toEqual([]);
    }
    // Told once per index (lexical and vectors), not on every search.
    const told = errors.filter((w) => w.includes('left out of the search index'));
    expect(told.length).toBeGreaterThan(0);
    expect(told.length).toBeLessThanOrEqual(2);
  });

  it('compactions go on without it, and do not read it on every compaction', async () => {
    const local = tempLocalStore('s61e-compact');
    await withTornSession(local, 'ns', 20);
    const objects = new Watched(local);
    const c = device(objects);
    for (let i = 100; i < 110; i++)
      await c.sessions.create(
        'ns',
        { id: idOf(i), task: 'new', messages: [{ role: 'user', content: `fresh zq${idOf(i)}` }] },
        c.ctx,
      );
    await c.drainAll();
    expect((await listAll(local, 'ns/ns/x/d/')).length).toBe(10);
    vi.setSystemTime(Date.now() + 60_000); // past the record grace: the torn version is built
    objects.sessionReads();
    await c.engine.lexical.compact('ns');
    await (await c.engine.vectors('ns'))!.compact('ns');
    expect(objects.sessionReads()).toEqual([
      `ns/ns/sessions/${BAD}.json`,
      `ns/ns/sessions/${BAD}.json`,
    ]);
    // Both indexes wrote a root, which folded the new sessions' records.
    expect(await listAll(local, 'ns/ns/x/d/')).toEqual([]);
    const vectors = (await listAll(local, 'ns/ns/x/v/')).filter((k) => k.includes('/d/'));
    expect(vectors).toEqual([]);

    // The next compactions leave it out without reading it.
    await c.sessions.create(
      'ns',
      { id: idOf(200), task: 'newer', messages: [{ role: 'user', content: 'zqnewest words' }] },
      c.ctx,
    );
    await c.drainAll();
    objects.sessionReads();
    await c.engine.lexical.compact('ns');
    await (await c.engine.vectors('ns'))!.compact('ns');
    expect(objects.sessionReads()).toEqual([]);
    expect(await listAll(local, 'ns/ns/x/d/')).toEqual([]);
    const cold = device(local);
    expect((await cold.search('ns', 'zqnewest', 5)).map((h) => h.id)).toEqual([idOf(200)]);
  });

  it('is read again after a while: a mended object is found again', async () => {
    const local = tempLocalStore('s61e-mended');
    const whole = await withTornSession(local, 'ns', 10);
    const b = device(local);
    expect(await b.search('ns', 'zqappended', 5)).toEqual([]);
    await b.drainAll();
    await local.put(`ns/ns/sessions/${BAD}.json`, whole); // the torn copy completed
    expect(await b.search('ns', 'zqappended', 5)).toEqual([]); // still left out for now
    vi.setSystemTime(Date.now() + 11 * 60_000);
    expect((await b.search('ns', 'zqappended', 5)).map((h) => h.id)).toEqual([BAD]);
  });

  it('on Workers, searches answer 200 (not 500) and the index keeps compacting', async () => {
    const local = tempLocalStore('s61e-worker');
    // More sessions than a Worker's search may read (256), so no DeepSearch could stand in.
    await withTornSession(local, 'edge', 270);
    const { call, isolate } = limitedWorker(local);
    const search = { action: 'search', query: 'zqs0042', limit: 5 };
    for (let k = 0; k < 3; k++) {
      isolate();
      const r = await call('POST', '/v1/session_search', search);
      expect(r.status).toBe(200);
      expect((r.json['results'] as { id: string }[]).map((h) => h.id)).toEqual(['s0042']);
      expect(r.used).toBeLessThan(LIMIT);
    }
    // Past the record grace, saves pile up records until a save's compaction folds them.
    vi.setSystemTime(Date.now() + 60_000);
    for (let i = 300; i < 370; i++) {
      if (i % 20 === 0) isolate();
      const body = {
        id: idOf(i),
        task: 'later',
        messages: [{ role: 'user', content: `zq${idOf(i)}` }],
      };
      expect((await call('POST', '/v1/sessions', body)).status).toBe(201);
    }
    expect((await listAll(local, 'ns/edge/x/d/')).length).toBeLessThan(64);
    isolate();
    const r = await call('POST', '/v1/session_search', { ...search, query: 'zqs0350' });
    expect(r.status).toBe(200);
    expect((r.json['results'] as { id: string }[]).map((h) => h.id)).toEqual(['s0350']);
  });
});
