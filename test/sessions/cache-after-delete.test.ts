// The session cache forgets a deleted session, and a read that began before the delete does not cache
// what it read (`putRead` with the epoch). A write's commit does not: its `cache.put` after the PUT's
// answer has no epoch check, so a commit that landed just before a delete in this process, whose answer
// arrived after the delete forgot the copy, puts the deleted session back in the cache, where `getAt`
// (the search engine's read) answers it whole after the delete.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'cd';

/** The answer of the session object's next conditional PUT comes only after `hook` ran (it has landed). */
class SlowCommitAnswer extends PassThrough {
  hook: (() => Promise<void>) | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    const out = await this.inner.put(key, body, options);
    if (this.hook && key === keys.session(ns, 'x') && options?.ifMatch) {
      const h = this.hook;
      this.hook = undefined;
      await h();
    }
    return out;
  }
}

describe('session cache after a delete', () => {
  it('holds no copy of the deleted session when a commit raced the delete', async () => {
    const objects = new SlowCommitAnswer(tempLocalStore('cache-del'));
    const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
    const sessions = new SessionStore(objects, {
      pipeline,
      audit: new AuditLog(objects, pipeline.redactText),
    });
    await sessions.create(ns, { id: 'x', task: 'private', messages: [] });
    await sessions.settled();
    let deleted: Promise<void> | undefined;
    objects.hook = async () => {
      deleted = sessions.delete(ns, 'x');
      await deleted;
    };
    const r = await sessions.append(
      ns,
      'x',
      { messages: [{ role: 'user', content: 'private words' }] },
      undefined,
    );
    await deleted;
    await sessions.settled();
    expect(await objects.inner.get(keys.session(ns, 'x'))).toBeNull();
    const s = await sessions.getAt(ns, 'x', r.receipt.revision, Date.parse(r.session.created_at));
    expect(s).toBeNull();
  });
});
