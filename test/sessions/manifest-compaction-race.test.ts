// Before 2026-12-05 a manifest compaction in another process that had read a session's log record before
// the session was deleted, and wrote its page after the delete's purge, lost its root's sequence number and
// returned, leaving that page (holding the deleted task) in the bucket until a later compaction of the
// namespace, which a quiet one may never run. Now a compactor whose root loses deletes the pages it wrote.
import { describe, expect, it } from 'vitest';
import { PassThrough, searchProcess } from '../support/search-process.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { LocalStore } from '../../lib/storage/local.js';
import { holders } from '../support/holders.js';
import { tempDir } from './unlogged-common.js';

const ns = 'mcr';

class Gated extends PassThrough {
  gate: Promise<void> | null = null;
  reached: (() => void) | null = null;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.gate && key.includes('/m/g/')) {
      this.reached?.();
      await this.gate;
    }
    return this.inner.put(key, body, options);
  }
}

describe('a manifest compaction in another process racing a delete (review s51b)', () => {
  it('leaves no page holding the deleted task', async () => {
    const dir = tempDir('mcmprace');
    const a = searchProcess(new LocalStore(dir));
    const bStore = new Gated(new LocalStore(dir));
    const b = searchProcess(bStore);
    await a.sessions.create(ns, { id: 'kept', task: 'kept task' });
    await a.sessions.create(ns, { id: 'doomed', task: 'the zqmanifestracex task' });
    await a.settle(3);
    await a.sessions.list(ns, { limit: 10 }); // a root exists
    await a.sessions.manifest.compact(ns, true);
    await a.settle(3);
    // A newer version whose log record no root covers yet.
    await a.sessions.append(
      ns,
      'doomed',
      { messages: [{ role: 'user', content: 'more' }] },
      undefined,
    );
    await a.settle(3);

    let release!: () => void;
    bStore.gate = new Promise<void>((r) => (release = r));
    const reached = new Promise<void>((r) => (bStore.reached = r));
    const compaction = b.sessions.manifest.compact(ns, true);
    await reached;

    await a.sessions.delete(ns, 'doomed');
    await a.settle(3);
    expect(holders(dir, ['zqmanifestracex'])).toEqual([]);

    bStore.gate = null;
    release();
    await compaction.catch(() => undefined);
    await b.settle(3);
    await a.settle(3);
    expect(holders(dir, ['zqmanifestracex'])).toEqual([]);
  });
});
