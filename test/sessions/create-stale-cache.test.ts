// A create drops whatever copy the cache holds under its id: a session deleted by another process (a
// re-import of an edited file keeping created_at and revision 1) must not be served by getAt (found by
// review, 2026-12-04: the create cached its copy only when no delete of this process ran during its PUT,
// and then kept the old one).
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'cs';
const store = (o: ObjectStore) =>
  new SessionStore(o, { pipeline: defaultPipeline({ maxSessionBytes: 1 << 20 }) });

class DuringPut extends PassThrough {
  hook: (() => Promise<void>) | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.hook && key === keys.session(ns, 'x')) {
      const h = this.hook;
      this.hook = undefined;
      await h();
    }
    return this.inner.put(key, body, options);
  }
}

describe('create and the cache', () => {
  for (const race of [false, true])
    it(`a create replaces the cached copy of a session deleted elsewhere under its id (${race ? 'a delete of another session during its PUT' : 'alone'})`, async () => {
      const inner = tempLocalStore('create-stale-cache');
      const wrapped = new DuringPut(inner);
      const p = store(wrapped);
      const q = store(inner);
      const created_at = new Date(Date.now() - 86_400_000).toISOString();
      await p.create(ns, {
        id: 'x',
        task: 'first',
        created_at,
        messages: [{ role: 'user', content: 'deleted text' }],
      });
      await p.create(ns, { id: 'y', task: 'other', messages: [] });
      await p.settled();
      await q.delete(ns, 'x'); // another process
      await q.settled();
      // This process deletes another session while its create's PUT is on its way.
      if (race)
        wrapped.hook = async () => {
          await p.delete(ns, 'y');
        };
      await p.create(ns, {
        id: 'x',
        task: 'second',
        created_at,
        messages: [{ role: 'user', content: 'new text' }],
      });
      const s = await p.getAt(ns, 'x', 1, Date.parse(created_at));
      expect(s?.task).toBe('second');
      expect(JSON.stringify(s?.messages)).not.toContain('deleted text');
    });
});
