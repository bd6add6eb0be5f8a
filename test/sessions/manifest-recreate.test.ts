// The manifest's answers when an id is deleted and created again by a device whose clock is behind, when a
// GET asks for an id that does not exist, and after the whole m/ prefix is deleted (docs/design.md, "The
// manifest", "Ordering, deletes and clocks", "How each crash point heals"). Found by a review helper.
import { describe, expect, it } from 'vitest';
import type { SessionStoreOptions } from '../../lib/sessions/store.js';
import { storeProcess } from '../support/store-process.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text, type ListOptions, type PutOptions } from '../../lib/storage/port.js';

const ns = 'ns';

/** A memory store whose PUTs can be refused by key, and which counts LISTs and manifest page GETs. */
class Faulty extends MemoryStore {
  failPut: (key: string) => boolean = () => false;
  lists = 0;
  pageGets = 0;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.failPut(key)) throw new Error(`refused PUT ${key}`);
    return super.put(key, body, options);
  }
  override async list(prefix: string, options?: ListOptions) {
    this.lists++;
    return super.list(prefix, options);
  }
  override async get(key: string) {
    if (key.includes('/m/g/')) this.pageGets++;
    return super.get(key);
  }
}

/** A process (`storeProcess`) that lists the namespace's tasks. */
function proc(objects: Faulty, opts: Partial<SessionStoreOptions> = {}) {
  const p = storeProcess(objects, opts);
  const tasks = async () =>
    (await p.store.list(ns, { limit: 20 }, p.ctx)).sessions.map((s) => s.task);
  return { ...p, tasks };
}

/** A device a minute ahead creates x1, lists (a root with a page holding it), and deletes it. */
async function deletedAhead(objects: Faulty, purged: boolean) {
  const A = proc(objects, { now: () => Date.now() + 60_000 });
  await A.store.create(ns, { id: 'x1', task: 'deleted incarnation secret' }, A.ctx);
  await A.tasks();
  await A.drain();
  // Its purge's root refused (or the process stopped after the delete's log record).
  if (!purged) objects.failPut = (k) => k.includes('/m/r/');
  await A.store.delete(ns, 'x1', A.ctx);
  await A.drain();
  objects.failPut = () => false;
}

async function holding(objects: MemoryStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await listAll(objects, `ns/${ns}/m/`))
    if (text((await objects.get(key))!.body).includes(needle)) out.push(key);
  return out;
}

describe('an id created again by a device whose clock is behind', () => {
  it('is listed while the delete record is uncovered, after a compaction, and by latest', async () => {
    const objects = new Faulty();
    await deletedAhead(objects, false);
    const B = proc(objects); // the correct clock, a minute behind
    await B.store.create(ns, { id: 'x1', task: 'new incarnation' }, B.ctx);
    await B.drain();
    const C = proc(objects);
    expect(await C.tasks()).toEqual(['new incarnation']);
    await C.store.manifest.compact(ns, true);
    const D = proc(objects);
    expect(await D.tasks()).toEqual(['new incarnation']);
    expect((await D.store.latest(ns, D.ctx)).task).toBe('new incarnation');
  });

  it("never lists the deleted incarnation's task, and a compaction erases it from the manifest", async () => {
    const objects = new Faulty();
    await deletedAhead(objects, false);
    await proc(objects).store.manifest.compact(ns, true); // minor: the delete becomes a tombstone
    const B = proc(objects);
    await B.store.create(ns, { id: 'x1', task: 'new incarnation' }, B.ctx);
    await B.drain();
    const D = proc(objects);
    expect(await D.tasks()).toEqual(['new incarnation']);
    await D.store.manifest.compact(ns, true);
    expect(await proc(objects).tasks()).toEqual(['new incarnation']);
    expect(await holding(objects, 'deleted incarnation secret')).toEqual([]);
  });
});

describe('a GET of an id that does not exist', () => {
  it('reads no manifest: no LIST, no page', async () => {
    const objects = new Faulty();
    const W = proc(objects, { manifest: { pageSize: 8 } });
    for (let i = 0; i < 40; i++) await W.store.create(ns, { task: `task ${i}` }, W.ctx);
    await W.drain();
    await W.store.manifest.rebuild(ns);
    const R = proc(objects, { manifest: { pageSize: 8 } }); // a fresh process
    objects.lists = objects.pageGets = 0;
    await expect(R.store.get(ns, 'never-existed', R.ctx)).rejects.toThrow(/does not exist/);
    await R.drain();
    expect({ lists: objects.lists, pageGets: objects.pageGets }).toEqual({ lists: 0, pageGets: 0 });
  });
});

describe('the whole m/ prefix deleted', () => {
  it('another process answers from the rebuilt root, not the one it read before', async () => {
    const objects = new Faulty();
    const A = proc(objects);
    const B = proc(objects);
    await A.store.create(ns, { task: 'one', id: 's1' }, A.ctx);
    await A.store.create(ns, { task: 'two', id: 's2' }, A.ctx);
    await A.drain();
    expect((await A.tasks()).sort()).toEqual(['one', 'two']);
    await B.store.delete(ns, 's1', B.ctx);
    await B.drain();
    await objects.delete(await listAll(objects, `ns/${ns}/m/`));
    expect(await B.tasks()).toEqual(['two']);
    await B.drain();
    expect(await A.tasks()).toEqual(['two']);
  });
});
