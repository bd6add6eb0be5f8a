// Review s56a, finding 3 (fixed 2026-12-06; this test failed on the code before the fix).
// lib/sessions/existence.ts: the check a process makes after its background index record lands (a delete in
// another process may have listed the records before it landed) asked storage once; when that one request
// failed, every waiter failed, `erase` never ran and nothing asked again. The late lexical record
// x/d/<id>/… of the deleted session stayed for good: the index's compactions collect only records a
// segment covers (lsm.ts `collect`), and no purge of the id runs again. `eraseUnlessLive` now runs the
// check and its erasing again after 1 s, 2 s, 4 s … when they fail.
import { expect, it } from 'vitest';
import type { ListOptions, ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { eventually } from '../support/eventually.js';
import { kb, PassThrough, searchProcess } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'dr';

/** Delays index record PUTs while armed, and fails the existence checks of session `x` it is told to. */
class Flaky extends PassThrough {
  private releaseRecords: (() => void) | undefined;
  private recordsHeld: Promise<void> | undefined;
  failSessionChecks = 0;
  /** Index record PUTs wait until `release` is called. */
  holdRecords(): void {
    this.recordsHeld = new Promise((r) => (this.releaseRecords = r));
  }
  release(): void {
    this.releaseRecords?.();
    this.recordsHeld = undefined;
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.recordsHeld && key.includes('/x/d/')) await this.recordsHeld;
    return this.inner.put(key, body, options);
  }
  override list(prefix: string, options?: ListOptions) {
    // The check of a store without `head` is a LIST of the session object's key.
    if (this.failSessionChecks > 0 && prefix === `ns/${ns}/sessions/x.json`) {
      this.failSessionChecks--;
      return Promise.reject(new StorageUnavailableError('list: no answer'));
    }
    return this.inner.list(prefix, options);
  }
}

/** The keys of every object that holds the session's word. */
async function holders(objects: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(objects, '')) {
    const got = await objects.get(k);
    if (got && new TextDecoder().decode(got.body).includes('zeppelin')) out.push(k);
  }
  return out;
}

it('a late index record whose existence check fails once is still erased', async () => {
  const objects = new Flaky(tempLocalStore('s56a-exist'));
  const a = searchProcess(objects, { existenceLingerMs: 0 });
  await a.sessions.create(ns, { id: 'x', task: 'zeppelin audit', messages: [kb('h0', true)] });
  await a.settle(5);
  objects.holdRecords(); // A's next index record lands only after B's delete
  await a.sessions.append(ns, 'x', { messages: [kb('h1', true)] }, undefined, {
    schedule: a.schedule,
  });
  const flushing = a.sessions.settled().then(() => a.engine.flushRecords());
  const b = searchProcess(objects);
  await b.sessions.delete(ns, 'x', { schedule: b.schedule }); // lists x/d/x/ before A's record lands
  await b.settle(5);
  objects.failSessionChecks = 1; // A's one check after its record landed: storage blips
  objects.release();
  await flushing;
  await a.settle(5);
  expect(objects.failSessionChecks).toBe(0);
  // Storage answers again; the namespace goes on (compactions of the index in both processes).
  await a.engine.lexical.compact(ns);
  await b.engine.lexical.compact(ns);
  await a.engine.lexical.compact(ns, true);
  await a.settle(2);
  await b.settle(2);
  // Before the fix the record x/d/x/… stayed for good.
  await eventually(async () => (await holders(objects.inner)).length === 0, 10_000);
}, 30_000);
