// Review s61a, finding 1 (fixed 2026-12-07; these tests failed on the code before the fix).
// A delete's purge erases the session's index records (x/d/<id>/…, its words and their counts; vectors
// x/v/<hash>/d/<id>/…). When the deleting process stopped before its purge ran (a crash, a Worker whose
// background work ended), nothing erased them: a compaction collected only records a segment covers, and a
// deleted id has no indexed version, not even after a rebuild (`npm run reindex`). Now a compaction erases
// the records of ids the manifest does not list once their session object is absent (after a grace on the
// record's incarnation; a rebuild at once), and keeps those of a session whose log record has not landed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../lib/search/embed.js';
import { reindex } from '../../lib/search/reindex.js';
import { CountingStore } from '../../lib/storage/counting.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { eventually } from '../support/eventually.js';
import { searchDevice } from '../support/search-device.js';
import { Stoppable } from '../support/stoppable-store.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'ns';
const WORD = 'zqsecretwordx';

/** A process with vectors (the local embedder, weighted), so that both indexes store records. */
const device = (objects: ObjectStore, operationBudget = false) =>
  searchDevice(objects, { localVectorWeight: 1, operationBudget }, new LocalEmbedder());

/** The index records (lexical and vector) of session `id`. */
const recordsOf = async (objects: ObjectStore, id: string) =>
  (await listAll(objects, `ns/${ns}/x/`)).filter((k) => k.includes(`/d/${id}/`));

/** Every object that holds `needle`. */
async function holders(objects: ObjectStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(objects, '')) {
    const got = await objects.get(k);
    if (got && Buffer.from(got.body).toString('latin1').includes(needle)) out.push(k);
  }
  return out;
}

/**
 * Sessions created (one holds WORD) and indexed by a process that then deletes `deleted` of them and stops
 * before its purges: from the delete on, its index writes never land. Returns the ids.
 */
async function deletedWithoutPurge(objects: ObjectStore, n = 1, deleted = n): Promise<string[]> {
  const stoppable = new Stoppable(objects, (k) => k.startsWith(`ns/${ns}/x/`));
  const a = device(stoppable);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const content = i === 0 ? `the ${WORD} deployment` : `plain session ${i}`;
    const made = await a.sessions.create(
      ns,
      { task: `task ${i}`, messages: [{ role: 'user', content }] },
      a.ctx,
    );
    ids.push(made.session.id);
  }
  await a.drainAll();
  for (const id of ids) expect((await recordsOf(objects, id)).length).toBe(2); // lexical and vector
  stoppable.stopped = true;
  for (const id of ids.slice(0, deleted)) await a.sessions.delete(ns, id, a.ctx);
  await new Promise((r) => setTimeout(r, 200)); // its background work goes as far as it can
  return ids;
}

beforeEach(() => {
  // Only the clock is faked (it runs on, and a test moves it past the grace); timers stay real.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('index records of a deleted session whose purge never ran (review s61a)', () => {
  it('a later compaction, once past the grace, erases them', async () => {
    const objects = tempLocalStore('s61a-later');
    const [id] = await deletedWithoutPurge(objects);
    expect(await recordsOf(objects, id!)).toHaveLength(2);

    const c = device(objects);
    // Within the grace a session this new may only lack its log record: kept, with no check.
    await c.engine.lexical.compact(ns);
    expect(await recordsOf(objects, id!)).toHaveLength(2);
    vi.setSystemTime(Date.now() + 60_000);
    await c.engine.lexical.compact(ns);
    await (await c.engine.storedVectors(ns))!.compact(ns);
    await c.drainAll();
    expect(await recordsOf(objects, id!)).toEqual([]);
    expect(await holders(objects, WORD)).toEqual([]);
  });

  it('a reindex erases them at once', async () => {
    const objects = tempLocalStore('s61a-reindex');
    const [id] = await deletedWithoutPurge(objects);
    const c = device(objects);
    expect(await reindex(c.engine, ns)).toMatchObject({ sessions: 0, vectors: 'rebuilt' });
    await c.drainAll();
    expect(await recordsOf(objects, id!)).toEqual([]);
    expect(await holders(objects, WORD)).toEqual([]);
  });

  it('keeps the records of a new session whose manifest log record has not landed', async () => {
    const objects = tempLocalStore('s61a-new');
    const [gone] = await deletedWithoutPurge(objects);
    // Another process creates a session; its manifest log record never lands (it stopped there).
    const logs = new Stoppable(objects, (k) => k.startsWith(`ns/${ns}/m/l/`));
    logs.stopped = true;
    const b = device(logs);
    const fresh = (
      await b.sessions.create(
        ns,
        { task: 'brand new', messages: [{ role: 'user', content: 'zqfreshword here' }] },
        b.ctx,
      )
    ).session.id;
    await b.engine.flushRecords();
    await eventually(async () => (await recordsOf(objects, fresh)).length === 2);

    const c = device(objects);
    expect((await c.sessions.manifest.view(ns, undefined, { settled: true })).entries).toEqual([]);
    vi.setSystemTime(Date.now() + 60_000);
    await c.engine.lexical.compact(ns);
    await (await c.engine.storedVectors(ns))!.compact(ns);
    // A rebuild of the index alone (no manifest rebuild) checks without the grace: still kept.
    await c.engine.lexical.compact(ns, true);
    await (await c.engine.storedVectors(ns))!.compact(ns, true);
    await c.drainAll();
    expect(await recordsOf(objects, gone!)).toEqual([]);
    expect(await recordsOf(objects, fresh)).toHaveLength(2);
  });

  it('a short-lived runtime checks at most 32 sessions per compaction, and the next goes on', async () => {
    const inner = tempLocalStore('s61a-slices');
    const ids = await deletedWithoutPurge(inner, 40);
    const counted = new CountingStore(inner);
    const c = device(counted, true);
    vi.setSystemTime(Date.now() + 60_000);
    const left = async () =>
      (await listAll(inner, `ns/${ns}/x/d/`)).filter((k) => ids.some((id) => k.includes(id)));
    expect(await left()).toHaveLength(40);
    counted.reset();
    await c.engine.lexical.compact(ns);
    expect(counted.reset().head).toBeLessThanOrEqual(32);
    expect(await left()).toHaveLength(8);
    await c.engine.lexical.compact(ns);
    expect(await left()).toEqual([]);
  });
});
