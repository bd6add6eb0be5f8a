// Deleted means gone, across processes, for the manifest log record and the audit record of a write: one
// process answers an append and stores its records afterwards (background work); another deletes the
// session meanwhile. The delete deletes the object, then lists the records to erase; a record that lands
// after that listing is erased by its writer, which lists the object after storing it and finds it gone.
// Before that check, the late log record kept the session's task in the bucket.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import {
  text,
  type ListOptions,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'race';

/**
 * PUTs of manifest log records and audit records land `slowMs` later; deletes are noted, and so are
 * LISTs and HEADs (`listed`: the existence check is a HEAD, as in production).
 */
class SlowRecords extends PassThrough {
  slowMs = 0;
  readonly deleted: string[] = [];
  readonly listed: string[] = [];
  override list(prefix: string, options?: ListOptions) {
    this.listed.push(prefix);
    return this.inner.list(prefix, options);
  }
  head(key: string) {
    this.listed.push(key);
    return this.inner.head!(key);
  }
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

function proc(objects: ObjectStore, options: SessionStoreOptions = {}) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const audit = new AuditLog(objects, pipeline.redactText);
  const sessions = new SessionStore(objects, { pipeline, audit, ...options });
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

const say = (p: ReturnType<typeof proc>, id: string, content: string) =>
  p.sessions.append(ns, id, { messages: [{ role: 'user', content }] }, undefined, p.ctx);

/** A creates `id` and answers an append whose records land 400 ms later; B deletes the session meanwhile. */
async function deleteWhileRecordsFly(
  objects: SlowRecords,
  a: ReturnType<typeof proc>,
  b: ReturnType<typeof proc>,
  id: string,
): Promise<void> {
  await a.sessions.create(ns, { id, task: 'zeppelin survey', messages: [] }, a.ctx);
  await a.settle();
  objects.slowMs = 400;
  await say(a, id, 'zeppelin route');
  // The append has answered; its records are still on their way when another process deletes.
  await b.sessions.delete(ns, id, b.ctx);
  await b.settle();
}

/** Nothing holds the deleted session's text, and its writer erased the records that landed late. */
async function erasedByWriter(objects: SlowRecords, id: string): Promise<void> {
  expect(await holders(objects.inner, 'zeppelin')).toEqual([]);
  // They landed after the purge had listed: their writer erased them (else the test proves nothing).
  expect(objects.deleted.filter((k) => k.includes('/m/l/'))).toHaveLength(1);
  expect(objects.deleted.filter((k) => k.startsWith(keys.audit(ns, id)))).toHaveLength(1);
}

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
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
    it.each([
      ['at once', 0],
      ['after waiting for a commit that never comes', 60_000],
    ])(
      'erases the log and audit records that land after its purge listed (checked %s)',
      async (_, wait) => {
        const objects = new SlowRecords(make());
        const a = proc(objects, { existenceLingerMs: wait });
        const b = proc(objects.inner);
        const id = `late-${Date.now()}`;
        await deleteWhileRecordsFly(objects, a, b, id);
        await a.settle();
        await erasedByWriter(objects, id);
        expect(await listAll(objects.inner, keys.audit(ns, id))).toEqual([]);
        const listed = await proc(objects.inner).sessions.list(ns, { limit: 100 });
        expect(listed.sessions.map((s) => s.id)).not.toContain(id);
      },
    );

    it('a commit after the records answers their check: no LIST while the session is written', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects, { existenceLingerMs: 60_000, recordLingerMs: 0 });
      const id = `busy-${Date.now()}`;
      await a.sessions.create(ns, { id, task: 'zeppelin busy', messages: [] }, a.ctx);
      await a.settle();
      const key = keys.session(ns, id);
      objects.listed.length = 0;
      for (let i = 0; i < 3; i++) {
        await say(a, id, `m${i}`);
        // The records land, then their check waits; the next append's commit answers it.
        await until(() => a.sessions.existence.pending === 1);
      }
      expect(objects.listed.filter((p) => p === key)).toEqual([]);
      await a.settle(); // the last check LISTs
      expect(objects.listed.filter((p) => p === key)).toEqual([key]);
      expect(objects.deleted.filter((k) => !k.includes('/m/p/'))).toEqual([]);
      expect(await listAll(objects.inner, keys.audit(ns, id))).toHaveLength(4);
    });

    it('a commit on the session created again under the id erases the old records that an object still outlives', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects, { existenceLingerMs: 60_000 });
      const b = proc(objects.inner);
      const id = `again-${Date.now()}`;
      await deleteWhileRecordsFly(objects, a, b, id);
      await b.sessions.create(ns, { id, task: 'balloon survey', messages: [] }, b.ctx);
      await b.settle();
      // A's records landed after the purge listed; an object exists under the id, but not their session.
      await until(() => a.sessions.existence.pending === 1);
      objects.slowMs = 0;
      await say(a, id, 'balloon route');
      await a.settle();
      await b.settle();
      await erasedByWriter(objects, id);
      expect(await holders(objects.inner, 'balloon route')).toContain(keys.session(ns, id));
    });

    it('a session deleted and created again by another process before the check: its records are erased', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects, { existenceLingerMs: 60_000 });
      const b = proc(objects.inner);
      const id = `reborn-${Date.now()}`;
      await deleteWhileRecordsFly(objects, a, b, id);
      await b.sessions.create(ns, { id, task: 'balloon survey', messages: [] }, b.ctx);
      await b.settle();
      // A's records landed after the purge listed; A writes no more, so its check asks the object.
      await until(() => a.sessions.existence.pending === 1);
      await a.settle();
      await erasedByWriter(objects, id);
      expect(await holders(objects.inner, 'balloon survey')).toContain(keys.session(ns, id));
    });

    it('a create under the id by the writer erases the old records waiting for their check', async () => {
      const objects = new SlowRecords(make());
      const a = proc(objects, { existenceLingerMs: 60_000 });
      const b = proc(objects.inner);
      const id = `recreate-${Date.now()}`;
      await deleteWhileRecordsFly(objects, a, b, id);
      await until(() => a.sessions.existence.pending === 1);
      objects.slowMs = 0;
      objects.listed.length = 0;
      await a.sessions.create(ns, { id, task: 'balloon survey', messages: [] }, a.ctx);
      await until(() => objects.deleted.some((k) => k.includes('/m/l/')));
      expect(objects.listed).not.toContain(keys.session(ns, id)); // answered by the create, not a LIST
      await a.settle();
      await erasedByWriter(objects, id);
    });

    it('commits to a session deleted and created again in one batch of records log each incarnation', async () => {
      const objects = new SlowRecords(make());
      // Markers go once their writes are logged: only the log records tell a reader about the session.
      const a = proc(objects, { recordLingerMs: 60_000, markerIdleMs: 0 });
      const b = proc(objects.inner);
      const id = `twice-${Date.now()}`;
      await a.sessions.create(ns, { id, task: 'zeppelin first', messages: [] }, a.ctx);
      for (let i = 0; i < 3; i++) await say(a, id, `zeppelin ${i}`);
      await b.sessions.delete(ns, id, b.ctx);
      await b.settle();
      // A's records of the first session still linger when it creates the second under the id.
      await a.sessions.create(ns, { id, task: 'balloon second', messages: [] }, a.ctx);
      await a.settle();
      const listed = await proc(objects.inner).sessions.list(ns, { limit: 100 });
      expect(listed.sessions.filter((s) => s.id === id).map((s) => s.task)).toEqual([
        'balloon second',
      ]);
      expect(await holders(objects.inner, 'zeppelin')).toEqual([]);
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
