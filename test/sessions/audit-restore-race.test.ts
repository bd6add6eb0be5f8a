// The compactor restores audit records for a stale marker (`restoreAudit`): it reads the session, PUTs the
// records, then checks that the session still exists. A delete (another process) that lists audit/<id>/
// between the read and the PUT must not leave a restored record in the bucket ("deleted means gone"); when
// that check fails, the marker stays, and a later compaction restores the records while the session lives
// or, finding it gone, erases what is left (review, 2026-12-04: restored records stayed for good; then a
// failed check deleted the records a live session's writers had stored).
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

const ns = 'ar';

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

/** A session `id` with two writes, and the marker of a writer that crashed under it 20 minutes ago. */
async function crashedUnderMarker(inner: ObjectStore, id: string) {
  const writer = proc(inner);
  await writer.sessions.create(ns, { id, task: 'secret task', messages: [] }, writer.ctx);
  const hello = { messages: [{ role: 'user' as const, content: 'hello' }] };
  await writer.sessions.append(ns, id, hello, undefined, writer.ctx);
  await writer.settle();
  await writer.sessions.retireMarkers();
  const at = Date.now() - 20 * 60_000;
  await inner.put(
    keys.pending(ns, id, `${String(at).padStart(13, '0')}-sdead0`),
    new Uint8Array(0),
  );
  return writer;
}

describe('audit records restored by the compactor', () => {
  for (const failCheck of [false, true])
    it(`leave nothing of a deleted session (the check after them ${failCheck ? 'failed once' : 'answered'})`, async () => {
      const inner = tempLocalStore('restore-erase-fails');
      await crashedUnderMarker(inner, 'gone');

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
    const writer = await crashedUnderMarker(inner, 'live');
    const before = await writer.sessions.auditRecords(ns, 'live');
    expect(before.map((r) => r.revision)).toEqual([1, 2]);
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
