// The compactor restores audit records for a stale marker (`restoreAudit`): it reads the session, then
// PUTs the records, and never checks afterwards that the session still exists. A delete (another
// process) that lists audit/<id>/ between the read and the PUT leaves the restored record in the bucket
// for good: "deleted means gone" fails for the audit log.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'ar';

function proc(objects: ObjectStore, now: () => number = Date.now) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const tasks: Promise<unknown>[] = [];
  const sessions = new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    now,
  });
  const ctx = { schedule: (p: Promise<unknown>) => void tasks.push(p) };
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await sessions.settled();
      await Promise.allSettled(tasks.splice(0));
    }
  };
  return { sessions, ctx, settle };
}

class BeforeAuditPut extends PassThrough {
  hook: (() => Promise<void>) | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.hook && key.includes('/audit/')) {
      const h = this.hook;
      this.hook = undefined;
      await h();
    }
    return this.inner.put(key, body, options);
  }
}

describe('audit records restored by the compactor', () => {
  it('leave nothing of a session deleted while they were restored', async () => {
    const inner = tempLocalStore('audit-restore');
    const writer = proc(inner);
    await writer.sessions.create(ns, { id: 'gone', task: 'to delete', messages: [] }, writer.ctx);
    await writer.sessions.append(
      ns,
      'gone',
      { messages: [{ role: 'user', content: 'hello' }] },
      undefined,
      writer.ctx,
    );
    await writer.settle();
    await writer.sessions.retireMarkers();
    // A writer that crashed under a marker: a marker with no log record, 20 minutes old.
    const at = Date.now() - 20 * 60_000;
    await inner.put(
      keys.pending(ns, 'gone', `${String(at).padStart(13, '0')}-sdead0`),
      new Uint8Array(0),
    );

    const deleter = proc(inner);
    const wrapped = new BeforeAuditPut(inner);
    const compactor = proc(wrapped);
    let deleted = false;
    wrapped.hook = async () => {
      await deleter.sessions.delete(ns, 'gone', {}, undefined);
      await deleter.settle();
      deleted = true;
    };
    await compactor.sessions.manifest.compact(ns, true);
    await compactor.settle();
    expect(deleted).toBe(true);
    expect(await inner.get(keys.session(ns, 'gone'))).toBeNull();
    expect(await listAll(inner, keys.audit(ns, 'gone'))).toEqual([]);
  });
});
