// Before 2026-12-05 an index compaction in another process that had read a session's record before the
// session was deleted wrote its segment and root after the delete's purge; when no segment held the session
// yet, that purge wrote no root, so the compactor's root won its sequence number and referenced a segment
// holding the deleted text. Now a purge always writes a root (the compactor's loses), and a compactor whose
// root loses deletes the segments it wrote for it.
import { describe, expect, it } from 'vitest';
import { PassThrough, searchProcess } from '../support/search-process.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { LocalStore } from '../../lib/storage/local.js';
import { holders } from '../support/holders.js';
import { tempDir } from '../sessions/unlogged-common.js';

const ns = 'cr';

class Gated extends PassThrough {
  gate: Promise<void> | null = null;
  reached: (() => void) | null = null;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.gate && key.includes('/x/g/')) {
      this.reached?.();
      await this.gate;
    }
    return this.inner.put(key, body, options);
  }
}

describe('an index compaction in another process racing a delete (review s51b)', () => {
  it('leaves no segment holding the deleted text, whichever root wins', async () => {
    const dir = tempDir('cmprace');
    const a = searchProcess(new LocalStore(dir));
    const bStore = new Gated(new LocalStore(dir));
    const b = searchProcess(bStore);
    await a.sessions.create(ns, {
      id: 'kept',
      task: 'kept task',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    await a.sessions.create(ns, {
      id: 'doomed',
      task: 'doomed task',
      messages: [{ role: 'user', content: 'the zqcompactracex plan' }],
    });
    await a.settle(3);
    expect(holders(dir, ['zqcompactracex']).some((h) => h.includes('/x/d/'))).toBe(true);

    // B compacts its index; it has read the records and stops before its segment PUT.
    let release!: () => void;
    bStore.gate = new Promise<void>((r) => (release = r));
    const reached = new Promise<void>((r) => (bStore.reached = r));
    const compaction = b.engine.lexical.compact(ns);
    await reached;

    // A deletes the session; its background work (remove, purge) drains.
    await a.sessions.delete(ns, 'doomed');
    await a.settle(3);
    expect(holders(dir, ['zqcompactracex'])).toEqual([]);

    // B's compaction goes on.
    bStore.gate = null;
    release();
    await compaction;
    await b.settle(3);
    await a.settle(3);
    expect(holders(dir, ['zqcompactracex'])).toEqual([]);
  });
});
