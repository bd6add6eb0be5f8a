// Deleted means gone, across processes, for the manifest log record and the audit record of a write: one
// process answers an append and stores its records afterwards (background work); another deletes the
// session meanwhile. The delete deletes the object, then lists the records to erase; a record that lands
// after that listing is erased by its writer, which lists the object after storing it and finds it gone.
// Before that check, the late log record kept the session's task in the bucket.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text, type ObjectStore, type PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'race';

/** PUTs of manifest log records and audit records land `slowMs` later; deletes are noted. */
class SlowRecords extends PassThrough {
  slowMs = 0;
  readonly deleted: string[] = [];
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.slowMs && (key.includes('/m/l/') || key.includes('/audit/')))
      await new Promise((r) => setTimeout(r, this.slowMs));
    return this.inner.put(key, body, options);
  }
  override delete(keys: string | string[]) {
    this.deleted.push(...[keys].flat());
    return this.inner.delete(keys);
  }
}

function proc(objects: ObjectStore) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const audit = new AuditLog(objects, pipeline.redactText);
  const sessions = new SessionStore(objects, { pipeline, audit });
  const tasks: Promise<unknown>[] = [];
  const ctx = { schedule: (p: Promise<unknown>) => void tasks.push(p) };
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await sessions.settled();
      await Promise.allSettled(tasks.splice(0));
    }
  };
  return { sessions, ctx, settle };
}

async function holders(objects: ObjectStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await listAll(objects, `ns/${ns}/`)) {
    const got = await objects.get(key);
    if (got && text(got.body).includes(needle)) out.push(key);
  }
  return out;
}

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('delete-race')],
  ['radosgw', () => openTestS3('delete-race')],
] as const) {
  describe(`a delete in another process racing a write's records (${backend})`, () => {
    it('erases the log and audit records that land after its purge listed', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects);
      const b = proc(objects.inner);
      const id = `late-${Date.now()}`;
      await a.sessions.create(ns, { id, task: 'zeppelin survey', messages: [] }, a.ctx);
      await a.settle();
      objects.slowMs = 400;
      await a.sessions.append(
        ns,
        id,
        { messages: [{ role: 'user', content: 'zeppelin route' }] },
        undefined,
        a.ctx,
      );
      // The append has answered; its records are still on their way when another process deletes.
      await b.sessions.delete(ns, id, b.ctx);
      await b.settle();
      await a.settle();
      expect(await holders(objects.inner, 'zeppelin')).toEqual([]);
      expect(await listAll(objects.inner, keys.audit(ns, id))).toEqual([]);
      // They landed after the purge had listed: their writer erased them (else the test proves nothing).
      expect(objects.deleted.filter((k) => k.includes('/m/l/'))).toHaveLength(1);
      expect(objects.deleted.filter((k) => k.startsWith(keys.audit(ns, id)))).toHaveLength(1);
      const listed = await proc(objects.inner).sessions.list(ns, { limit: 100 });
      expect(listed.sessions.map((s) => s.id)).not.toContain(id);
    });

    it('leaves the records of a session that still exists', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects);
      const id = `kept-${Date.now()}`;
      await a.sessions.create(ns, { id, task: 'zeppelin kept', messages: [] }, a.ctx);
      objects.slowMs = 100;
      await a.sessions.append(
        ns,
        id,
        { messages: [{ role: 'user', content: 'zeppelin stays' }] },
        undefined,
        a.ctx,
      );
      await a.settle();
      expect(objects.deleted.filter((k) => !k.includes('/m/p/'))).toEqual([]);
      expect(await listAll(objects.inner, keys.audit(ns, id))).toHaveLength(1);
      const withTask = await holders(objects.inner, 'zeppelin kept');
      expect(withTask.filter((k) => k.includes('/m/l/'))).toHaveLength(1);
    });
  });
}

/** The first GET of `key` answers only when `release` is called (the object is read at request time). */
class GatedGet extends PassThrough {
  key = '';
  release: () => void = () => undefined;
  sessionPuts = 0;
  override async get(key: string) {
    const got = await this.inner.get(key);
    if (key === this.key) {
      this.key = '';
      await new Promise<void>((r) => (this.release = r));
    }
    return got;
  }
  override put(key: string, body: Uint8Array, options?: PutOptions) {
    if (key.includes('/sessions/')) this.sessionPuts++;
    return this.inner.put(key, body, options);
  }
}

describe('a read that began before a delete in the same process', () => {
  it('does not put the deleted session back in the cache, so a later append writes nothing', async () => {
    const objects = new GatedGet(tempLocalStore('delete-read'));
    const a = proc(objects);
    await a.sessions.create(ns, { id: 'gone', task: 'zeppelin', messages: [] });
    await a.settle();
    objects.key = keys.session(ns, 'gone');
    const reading = a.sessions.get(ns, 'gone');
    await new Promise((r) => setTimeout(r, 50));
    await a.sessions.delete(ns, 'gone', a.ctx);
    objects.release();
    expect((await reading).task).toBe('zeppelin'); // it read the object before the delete
    objects.sessionPuts = 0;
    const append = a.sessions.append(
      ns,
      'gone',
      { messages: [{ role: 'user', content: 'x' }] },
      undefined,
    );
    await expect(append).rejects.toMatchObject({ kind: 'not_found' });
    expect(objects.sessionPuts).toBe(0);
  });
});
