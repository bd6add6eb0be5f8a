// Sliced compaction (review s60b, finding 1): on a short-lived runtime (`maxSyncLogs`), a reader that finds
// more uncovered log records than it may read folds the oldest first, one slice per request, and answers 503
// while more than the bound are left. A slice's root must say what one full compaction's would once the rest
// is folded: with deletes, ids created again, and a delete left out of the slice whose create (by a device
// whose clock is behind the deleting one's) the slice folded. On real files (LocalStore).
import { cpSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SessionStoreOptions } from '../../lib/sessions/store.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { SatchelError } from '../../lib/model/errors.js';
import { storeProcess } from '../support/store-process.js';
import { tempDir } from './unlogged-common.js';

const ns = 'ns';

/** Real files; PUTs refused by key on demand, and GETs counted by kind (log records, session objects). */
class Files extends LocalStore {
  failPut: (key: string) => boolean = () => false;
  gets = { logs: 0, sessions: 0 };
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.failPut(key)) throw new Error(`refused PUT ${key}`);
    return super.put(key, body, options);
  }
  override async get(key: string) {
    if (key.includes('/m/l/')) this.gets.logs++;
    if (key.includes('/sessions/')) this.gets.sessions++;
    return super.get(key);
  }
}

function proc(objects: Files, opts: Partial<SessionStoreOptions> = {}) {
  const p = storeProcess(objects, opts);
  const listing = async () =>
    (await p.store.list(ns, { limit: 100 }, p.ctx)).sessions.map((s) => ({
      id: s.id,
      task: s.task,
      turns: s.turns,
      updated_at: s.updated_at,
    }));
  return { ...p, listing };
}

const logs = async (objects: Files) => (await listAll(objects, `ns/${ns}/m/l/`)).length;

/**
 * A namespace with a root, then a backlog of log records: creates, appends, deletes, an id created again,
 * and `x1`: created and compacted by a device a minute ahead, deleted by it with its purge refused (its
 * delete record stays uncovered, and is the newest record by time), then created again by a device with
 * the right clock (a create that seems to predate the delete).
 */
async function backlog(dir: string): Promise<void> {
  const objects = new Files(dir);
  const A = proc(objects);
  // The device ahead's own view of the files: its purge's pages and roots are refused for good (a Worker
  // isolate that went away), so its retries later cannot change the namespace under the test.
  const aheadFiles = new Files(dir);
  const ahead = proc(aheadFiles, { now: () => Date.now() + 60_000 });
  await ahead.store.create(ns, { id: 'x1', task: 'deleted incarnation' }, ahead.ctx);
  await A.store.create(ns, { id: 'old', task: 'before the root' }, A.ctx);
  await ahead.drain();
  await A.drain();
  await A.store.manifest.compact(ns, true);
  for (let i = 0; i < 30; i++) {
    const id = `s${String(i).padStart(2, '0')}`;
    await A.store.create(ns, { id, task: `task ${i}` }, A.ctx);
    if (i % 5 === 0)
      await A.store.append(
        ns,
        id,
        { messages: [{ role: 'user', content: 'more' }] },
        undefined,
        A.ctx,
      );
  }
  await A.store.delete(ns, 's03', A.ctx);
  await A.store.delete(ns, 's07', A.ctx);
  await A.store.create(ns, { id: 's03', task: 'created again' }, A.ctx);
  await A.store.delete(ns, 'old', A.ctx);
  await A.drain();
  aheadFiles.failPut = (k) => k.includes('/m/r/') || k.includes('/m/g/');
  await ahead.store.delete(ns, 'x1', ahead.ctx);
  await ahead.drain();
  await A.store.create(ns, { id: 'x1', task: 'new incarnation' }, A.ctx);
  for (let i = 30; i < 40; i++) await A.store.create(ns, { id: `s${i}`, task: `task ${i}` }, A.ctx);
  await A.drain();
}

describe('a sliced compaction', () => {
  it('then a full one lists what one full compaction lists, with deletes and ids created again', async () => {
    const base = tempDir('sliced');
    await backlog(base);
    const slicedDir = tempDir('sliced-a');
    const fullDir = tempDir('sliced-b');
    cpSync(base, slicedDir, { recursive: true });
    cpSync(base, fullDir, { recursive: true });

    const full = new Files(fullDir);
    await proc(full).store.manifest.compact(ns, true);
    expect(await logs(full)).toBe(0);
    const expected = await proc(full).listing();
    expect(expected.map((e) => e.id).sort()).toEqual(
      ['x1', ...Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`)]
        .filter((id) => id !== 's07')
        .sort(),
    );
    expect(expected.find((e) => e.id === 'x1')!.task).toBe('new incarnation');
    expect(expected.find((e) => e.id === 's03')!.task).toBe('created again');

    // Bounded: a compaction folds at most 20 records (the oldest), leaving the rest, x1's delete among them.
    const sliced = new Files(slicedDir);
    const before = await logs(sliced);
    expect(before).toBeGreaterThan(40);
    const S = proc(sliced, { manifest: { maxSyncLogs: 1000, catchUpLogs: 20 } });
    await S.store.manifest.compact(ns);
    expect(await logs(sliced)).toBe(before - 20);
    // The partial state already lists the right sessions (readers apply the rest), then a full compaction.
    expect(await proc(sliced).listing()).toEqual(expected);
    for (let i = 0; i < 5 && (await logs(sliced)) > 0; i++)
      await S.store.manifest.compact(ns, true);
    expect(await logs(sliced)).toBe(0);
    expect(await proc(sliced).listing()).toEqual(expected);
    expect(await proc(sliced, { manifest: { compactAfter: 1 } }).listing()).toEqual(expected);
  });

  it('in every place of its edge, then a full one, lists what one full compaction lists', async () => {
    const base = tempDir('sliced-edges');
    await backlog(base);
    const fullDir = tempDir('sliced-edges-full');
    cpSync(base, fullDir, { recursive: true });
    const full = new Files(fullDir);
    await proc(full).store.manifest.compact(ns, true);
    const expected = await proc(full).listing();
    const total = await logs(new Files(base));
    for (const k of [1, total - 3, total - 2, total - 1]) {
      const dir = tempDir(`sliced-edge-${k}`);
      cpSync(base, dir, { recursive: true });
      const objects = new Files(dir);
      await proc(objects, {
        manifest: { maxSyncLogs: 1000, catchUpLogs: k },
      }).store.manifest.compact(ns);
      expect(await logs(objects), `slice of ${k}`).toBe(total - k);
      await proc(objects).store.manifest.compact(ns, true);
      expect(await proc(objects).listing(), `slice of ${k}`).toEqual(expected);
    }
  });
});

describe('a bounded reader', () => {
  it('folds a slice per call, answers 503 with Retry-After while over the bound, then lists', async () => {
    const dir = tempDir('bounded-reader');
    const objects = new Files(dir);
    const W = proc(objects);
    expect(await W.listing()).toEqual([]); // a root
    for (let i = 0; i < 45; i++)
      await W.store.create(ns, { id: `b${i}`, task: `task ${i}` }, W.ctx);
    await W.drain();

    const R = proc(objects, { manifest: { maxSyncLogs: 10, catchUpLogs: 20 } });
    objects.gets.logs = 0;
    const first = await R.listing().catch((err: unknown) => err);
    expect(SatchelError.is(first, 'unavailable')).toBe(true);
    expect((first as SatchelError).extra.retryAfter).toBe(1);
    expect((first as Error).message).toMatch(/catching up on 25 writes; try again/);
    expect(objects.gets.logs).toBe(20);
    // The next call folds 20 more and reads the 5 left (under the bound): every session.
    objects.gets.logs = 0;
    const listed = await R.listing();
    expect(objects.gets.logs).toBe(25);
    expect(listed.map((e) => e.id).sort()).toEqual(
      Array.from({ length: 45 }, (_, i) => `b${i}`).sort(),
    );
  });

  it('reads no session object for records a slice left out, when they are older than half a day', async () => {
    const dir = tempDir('bounded-old');
    const objects = new Files(dir);
    const twoDaysAgo = () => Date.now() - 2 * 86_400_000;
    const W = proc(objects, { now: twoDaysAgo });
    expect(await W.listing()).toEqual([]); // a root built two days ago
    for (let i = 0; i < 30; i++)
      await W.store.create(ns, { id: `o${i}`, task: `task ${i}` }, W.ctx);
    await W.drain();

    const R = proc(objects, { manifest: { maxSyncLogs: 10, catchUpLogs: 20 } });
    objects.gets.sessions = 0;
    const listed = await R.listing();
    expect(listed).toHaveLength(30);
    // Until the slice's root took the time of its edge, every record left out (10) was older than its
    // built_at by more than half the tombstones' lifetime, and read its session object on every listing.
    expect(objects.gets.sessions).toBe(0);
  });
});
