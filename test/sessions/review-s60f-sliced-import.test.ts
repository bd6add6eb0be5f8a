// Review s60f: a sliced compaction folds an import (a create with an older updated_at) of an id whose
// delete record (its purge refused) it leaves out; the edge only remembers creates within 15 minutes of
// the boundary, so the live session drops out of every list for good.
import { cpSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SessionStoreOptions } from '../../lib/sessions/store.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { storeProcess } from '../support/store-process.js';
import { tempDir } from './unlogged-common.js';

const ns = 'ns';
let clock = Date.UTC(2026, 11, 7, 0, 0, 0);

class Files extends LocalStore {
  failPut: (key: string) => boolean = () => false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.failPut(key)) throw new Error(`refused PUT ${key}`);
    return super.put(key, body, options);
  }
}

function proc(objects: Files, opts: Partial<SessionStoreOptions> = {}) {
  const p = storeProcess(objects, { now: () => clock, ...opts });
  const listing = async () =>
    (await p.store.list(ns, { limit: 100 }, p.ctx)).sessions.map((s) => `${s.id}:${s.task}`).sort();
  return { ...p, listing };
}

const uncoveredLogs = async (objects: Files) => (await listAll(objects, `ns/${ns}/m/l/`)).sort();

describe('s60f sliced compaction and an import', () => {
  it('a slice that folds the import but not the delete loses the live session from the list', async () => {
    const base = tempDir('s60f-import');
    const W = proc(new Files(base));
    const dFiles = new Files(base);
    const D = proc(dFiles);
    await W.store.create(ns, { id: 'old', task: 'before the root' }, W.ctx);
    await W.drain();
    await W.store.manifest.compact(ns, true);
    clock += 60_000;
    await D.store.create(ns, { id: 'x', task: 'first incarnation' }, D.ctx);
    for (let i = 0; i < 5; i++) {
      clock += 60_000;
      await W.store.create(ns, { id: `f${i}`, task: `filler ${i}` }, W.ctx);
    }
    await W.drain();
    await D.drain();
    clock += 60 * 60_000;
    // D deletes x; its purge (root and pages) is refused: a Worker cut off, say. Its delete record stays.
    dFiles.failPut = (k) => k.includes('/m/r/') || k.includes('/m/g/');
    await D.store.delete(ns, 'x', D.ctx);
    await D.drain();
    clock += 60_000;
    // x imported again: `satchel import` of an older copy keeps its updated_at (30 minutes before the delete).
    const older = new Date(clock - 31 * 60_000).toISOString();
    await W.store.create(
      ns,
      { id: 'x', task: 'imported again', created_at: older, updated_at: older },
      W.ctx,
    );
    await W.drain();
    expect(await W.store.get(ns, 'x')).toMatchObject({ task: 'imported again' });

    const logs = await uncoveredLogs(new Files(base));
    console.log(logs.map((k) => k.slice(k.lastIndexOf('/') + 1)));
    // The delete record is the newest by key: a slice of everything before it.
    const k = logs.length - 1;

    const fullDir = tempDir('s60f-import-full');
    cpSync(base, fullDir, { recursive: true });
    await proc(new Files(fullDir)).store.manifest.compact(ns, true);
    const expected = await proc(new Files(fullDir)).listing();
    console.log('full compaction lists', expected);

    const slicedDir = tempDir('s60f-import-sliced');
    cpSync(base, slicedDir, { recursive: true });
    const sliced = new Files(slicedDir);
    await proc(sliced, { manifest: { maxSyncLogs: 1000, catchUpLogs: k } }).store.manifest.compact(
      ns,
    );
    const partial = await proc(sliced).listing();
    console.log('after the slice, a reader lists', partial);
    for (let i = 0; i < 3; i++) await proc(sliced).store.manifest.compact(ns, true);
    const after = await proc(sliced).listing();
    console.log(
      'after full compactions, lists',
      after,
      'GET x:',
      (await proc(sliced).store.get(ns, 'x')).task,
    );
    expect(expected).toContain('x:imported again');
    expect(partial).toEqual(expected);
    expect(after).toEqual(expected);
  });
});
