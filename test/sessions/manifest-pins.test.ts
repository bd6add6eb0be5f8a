import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';

// A session deleted and created again under its id by a device whose clock is behind, while the first
// session's manifest log record is still on its way (its writer answered before storing it). Found by
// the manifest model check under load: the compaction that saw the delete and the new session dropped
// the delete, and the late record then listed the deleted session (its task, its time) in place of the
// live one.
const ns = 'pins';

/** The bucket as one process sees it, its manifest log records held until `release`. */
class HoldingLogs implements ObjectStore {
  readonly name = 'holding';
  private held: (() => void)[] = [];
  constructor(private readonly inner: ObjectStore) {}
  get(key: string) {
    return this.inner.get(key);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (key.includes('/m/l/')) await new Promise<void>((go) => this.held.push(go));
    return this.inner.put(key, body, options);
  }
  delete(k: string | string[]) {
    return this.inner.delete(k);
  }
  list(prefix: string, options?: { cursor?: string; limit?: number }) {
    return this.inner.list(prefix, options);
  }
  release() {
    for (const go of this.held.splice(0)) go();
  }
  get holding() {
    return this.held.length;
  }
}

describe('a late log record of a deleted session, its id created again', () => {
  it('never lists the deleted session, through compactions and a rebuild', async () => {
    let clock = 1_700_000_000_000;
    const objects = new MemoryStore();
    const at = (skew: number) => ({
      now: () => clock + skew,
      manifest: { compactAfter: 3, pageSize: 4 },
    });
    const late = new HoldingLogs(objects);
    const ahead = new SessionStore(late, at(45_000)); // its clock 45 s ahead
    const here = new SessionStore(objects, at(0));
    const behind = new SessionStore(objects, at(-60_000)); // a minute behind

    clock += 1000;
    await ahead.create(ns, { id: 's0', task: 'first' });
    await expect.poll(() => late.holding).toBeGreaterThan(0);
    clock += 1000;
    await here.delete(ns, 's0');
    clock += 1000;
    const again = await behind.create(ns, { id: 's0', task: 'created again' });
    for (let i = 0; i < 3; i++) {
      clock += 1000;
      await here.create(ns, { id: `s${i + 1}`, task: 'other' });
    }
    await here.manifest.compact(ns, true); // sees the delete and s0 again: a major compaction
    late.release(); // the first session's log record lands now
    await ahead.settled();

    const listed = async (store: SessionStore) =>
      (await store.list(ns, { limit: 10 })).sessions
        .filter((s) => s.id === 's0')
        .map((s) => ({ task: s.task, updated_at: s.updated_at }));
    const want = [{ task: 'created again', updated_at: again.session.updated_at }];
    expect(await listed(new SessionStore(objects, at(0)))).toEqual(want);
    for (let i = 0; i < 3; i++) {
      clock += 60_000;
      await here.manifest.compact(ns, true);
      expect(await listed(new SessionStore(objects, at(0)))).toEqual(want);
    }
    await here.manifest.rebuild(ns);
    expect(await listed(new SessionStore(objects, at(0)))).toEqual(want);
    // The session created again lives on: an append from the slow device shows, a delete hides it.
    clock += 1000;
    await behind.append(ns, 's0', { messages: [{ role: 'user', content: 'x' }] }, undefined);
    await behind.settled();
    expect(
      (await new SessionStore(objects, at(0)).list(ns, { limit: 10 })).sessions,
    ).toContainEqual(expect.objectContaining({ id: 's0', task: 'created again', turns: 1 }));
    await behind.delete(ns, 's0');
    await here.manifest.compact(ns, true);
    expect(await listed(new SessionStore(objects, at(0)))).toEqual([]);
  });
});
