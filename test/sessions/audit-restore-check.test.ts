// The compactor restores a crashed writer's audit records; when the check after them (does the session still
// exist?) fails, they are erased, and the marker it keeps makes the next compaction restore them again while
// the session lives (found by review, 2026-12-04: they stayed for good after a delete raced the restore).
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'rf';

function proc(objects: ObjectStore) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const tasks: Promise<unknown>[] = [];
  const errors: string[] = [];
  const sessions = new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    onError: (what) => void errors.push(what),
  });
  const ctx = { schedule: (p: Promise<unknown>) => void tasks.push(p) };
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await sessions.settled();
      await Promise.allSettled(tasks.splice(0));
    }
  };
  return { sessions, ctx, settle, errors };
}

class Hooks extends PassThrough {
  beforeAuditPut: (() => Promise<void>) | undefined;
  failGetOf: string | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.beforeAuditPut && key.includes('/audit/')) {
      const h = this.beforeAuditPut;
      this.beforeAuditPut = undefined;
      await h();
    }
    return this.inner.put(key, body, options);
  }
  override async get(key: string) {
    if (key === this.failGetOf) {
      this.failGetOf = undefined;
      throw new StorageUnavailableError('503 from the backend');
    }
    return this.inner.get(key);
  }
}

describe('audit records restored by the compactor', () => {
  for (const failCheck of [false, true])
    it(`leave nothing of a deleted session (the check after them ${failCheck ? 'failed once' : 'answered'})`, async () => {
      const inner = tempLocalStore('restore-erase-fails');
      const writer = proc(inner);
      await writer.sessions.create(
        ns,
        { id: 'gone', task: 'secret task', messages: [] },
        writer.ctx,
      );
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
      const wrapped = new Hooks(inner);
      const compactor = proc(wrapped);
      wrapped.beforeAuditPut = async () => {
        await deleter.sessions.delete(ns, 'gone', {}, undefined);
        await deleter.settle();
        // The existence check after the restored PUTs gets a 503 once.
        if (failCheck) wrapped.failGetOf = keys.session(ns, 'gone');
      };
      await compactor.sessions.manifest.compact(ns, true);
      await compactor.settle();
      expect(compactor.errors).toEqual([]);
      // A later compaction heals the marker it kept (the next call may join one already under way).
      for (let i = 0; i < 3; i++) {
        await compactor.sessions.manifest.compact(ns, true);
        await compactor.settle();
      }
      expect(
        (await listAll(inner, keys.pending(ns, 'gone', ''))).filter((k) => k.endsWith('-sdead0')),
      ).toEqual([]);
      expect(await inner.get(keys.session(ns, 'gone'))).toBeNull();
      expect(await listAll(inner, keys.audit(ns, 'gone'))).toEqual([]);
    });

  it('keep, when the check fails, the audit records of a live session that had landed', async () => {
    // Found by review: the restore deleted every record it named on a failed check, those its writers had
    // stored themselves (its create-only PUTs found them) included.
    const inner = tempLocalStore('restore-erase-live');
    const writer = proc(inner);
    await writer.sessions.create(ns, { id: 'live', task: 't', messages: [] }, writer.ctx);
    const hello = { messages: [{ role: 'user' as const, content: 'hello' }] };
    await writer.sessions.append(ns, 'live', hello, undefined, writer.ctx);
    await writer.settle();
    await writer.sessions.retireMarkers();
    const before = await writer.sessions.auditRecords(ns, 'live');
    expect(before.map((r) => r.revision)).toEqual([1, 2]);
    const at = Date.now() - 20 * 60_000;
    await inner.put(
      keys.pending(ns, 'live', `${String(at).padStart(13, '0')}-sdead0`),
      new Uint8Array(0),
    );
    const wrapped = new Hooks(inner);
    const compactor = proc(wrapped);
    wrapped.beforeAuditPut = async () => {
      wrapped.failGetOf = keys.session(ns, 'live'); // the existence check gets one 503
    };
    await compactor.sessions.manifest.compact(ns, true);
    await compactor.settle();
    expect(await proc(inner).sessions.auditRecords(ns, 'live')).toEqual(before);
  });
});
