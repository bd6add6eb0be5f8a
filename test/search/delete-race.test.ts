// Deleted means gone, for the search records of a session's last writes: a record still waiting in this
// process (its 250 ms linger, or a whole read of the session after a partial append whose previous record a
// compaction folded) is stored before the delete lists the records, so the delete removes it too. Found by
// review: every case left a record holding the session's text before the fix (two of them before the
// partial appends, too).
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import type { Embedder } from '../../lib/search/embed.js';
import { SearchEngine } from '../../lib/search/engine.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { createSplit, kb, PassThrough, searchProcess } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'dr';

class Slow extends PassThrough {
  /** GETs of a base (`/b/`) are answered this much later (data read at request time, like S3). */
  slowBaseMs = 0;
  slowRecordPutMs = 0;
  override async get(key: string) {
    const got = await this.inner.get(key);
    if (this.slowBaseMs && key.includes('/b/'))
      await new Promise((r) => setTimeout(r, this.slowBaseMs));
    return got;
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.slowRecordPutMs && key.includes('/x/d/'))
      await new Promise((r) => setTimeout(r, this.slowRecordPutMs));
    return this.inner.put(key, body, options);
  }
}

/** A process whose `settle` drains its background work five times over (work that schedules more). */
function proc(objects: ObjectStore, options: SessionStoreOptions = {}) {
  const p = searchProcess(objects, options);
  return { ...p, settle: () => p.settle(5) };
}

async function holders(objects: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listAll(objects, '')) {
    const got = await objects.get(k);
    if (got && new TextDecoder().decode(got.body).includes('zeppelin')) out.push(k);
  }
  return out;
}

async function scenario(
  slow: Partial<Pick<Slow, 'slowBaseMs' | 'slowRecordPutMs'>>,
  partial: boolean,
) {
  const objects = new Slow(tempLocalStore('delrace'));
  const a = proc(objects);
  await createSplit(a, ns, 'big', 'zeppelin audit', true);
  await a.engine.lexical.compact(ns); // the previous record folds into a segment
  const b = partial ? proc(objects) : a; // a new server: its append is partial
  Object.assign(objects, slow);
  const ctx = { schedule: b.schedule };
  await b.sessions.append(ns, 'big', { messages: [kb('s0', true)] }, undefined, ctx);
  await b.sessions.delete(ns, 'big', ctx);
  await b.settle();
  await a.settle();
  Object.assign(objects, { slowBaseMs: 0, slowRecordPutMs: 0 });
  return holders(objects.inner);
}

describe('a delete racing the search record of the last write', () => {
  it('of a partial copy leaves no record', async () => {
    expect(await scenario({}, true)).toEqual([]);
  });
  it('of a partial copy whose whole read answers after the delete leaves no record', async () => {
    expect(await scenario({ slowBaseMs: 300 }, true)).toEqual([]);
  });
  it('of a whole copy whose record PUT is slow leaves no record', async () => {
    expect(await scenario({ slowRecordPutMs: 300 }, false)).toEqual([]);
  });
});
describe('a delete right after a write', () => {
  it('of a whole copy leaves no record', async () => {
    expect(await scenario({}, false)).toEqual([]);
  });
});

describe('a delete in another process, while this one stores the last write record', () => {
  it.each([
    ['at once', 0],
    ['after waiting for a commit that never comes', 60_000],
  ])(
    'leaves no record: the record PUT that lands after the delete listed the records finds the object gone (checked %s)',
    async (_, wait) => {
      const objects = new Slow(tempLocalStore('delrace-x'));
      const a = proc(objects, { existenceLingerMs: wait });
      await a.sessions.create(ns, { id: 'x', task: 'zeppelin audit', messages: [kb('h0', true)] });
      await a.settle();
      // A's next record takes 300 ms to land; B deletes the session meanwhile (and lists the records).
      objects.slowRecordPutMs = 300;
      await a.sessions.append(ns, 'x', { messages: [kb('h1', true)] }, undefined, {
        schedule: a.schedule,
      });
      await a.sessions.settled(); // its log and audit records are stored; its search record is on its way
      const flushing = a.engine.flushRecords();
      await new Promise((r) => setTimeout(r, 50));
      const b = proc(objects);
      await b.sessions.delete(ns, 'x', { schedule: b.schedule });
      await b.settle();
      await flushing;
      await a.settle();
      objects.slowRecordPutMs = 0;
      expect(await holders(objects.inner)).toEqual([]);
      expect(a.errors).toEqual([]);
    },
  );
});

describe('a session deleted in another process and created again under its id by this one', () => {
  it('leaves no search record of the deleted one that landed after the create was sent', async () => {
    const objects = new Slow(tempLocalStore('delrace-again'));
    const a = proc(objects, { existenceLingerMs: 60_000 });
    await a.sessions.create(ns, { id: 'y', task: 'zeppelin audit', messages: [kb('h0', true)] });
    await a.settle();
    objects.slowRecordPutMs = 1000;
    const ctx = { schedule: a.schedule };
    await a.sessions.append(ns, 'y', { messages: [kb('h1', true)] }, undefined, ctx);
    await a.sessions.settled(); // its log and audit records are stored; its search record is on its way
    const flushing = a.engine.flushRecords();
    await new Promise((r) => setTimeout(r, 50));
    const b = proc(objects);
    await b.sessions.delete(ns, 'y', { schedule: b.schedule });
    await b.sessions.settled();
    // Created again before the old record lands: when it lands, an object exists under the id.
    await a.sessions.create(ns, { id: 'y', task: 'balloon', messages: [] }, ctx);
    await flushing;
    await b.settle();
    await a.settle();
    objects.slowRecordPutMs = 0;
    expect(await holders(objects.inner)).toEqual([]);
    expect(a.errors).toEqual([]);
  });
});

describe('records whose PUT outlasts a delete (found by review)', () => {
  /** Every object that names the session or holds its text (standing markers hold neither). */
  async function leftOf(objects: ObjectStore, id: string): Promise<string[]> {
    const out: string[] = [];
    for (const k of await listAll(objects, '')) {
      const got = await objects.get(k);
      const text = got ? new TextDecoder().decode(got.body) : '';
      if (text.includes('zeppelin') || (k.includes(`/${id}/`) && !k.includes('/m/p/'))) out.push(k);
    }
    return out;
  }

  it("a vector record whose embedding answers after the session's delete goes", async () => {
    const objects = tempLocalStore('delrace-vec');
    let answer!: () => void;
    const slow = new Promise<void>((r) => (answer = r));
    const embedder: Embedder = {
      calibrated: true,
      space: () => 'test/4',
      available: () => true,
      embed: async (texts) => {
        await slow; // the embeddings service takes its time (up to its timeout)
        return texts.map(() => new Float32Array([0.5, 0.5, 0.5, 0.5]));
      },
      state: () => ({ configured: true, space: 'test/4', state: 'ok' }),
    };
    const sessions = new SessionStore(objects, {
      pipeline: defaultPipeline({ maxSessionBytes: 4 << 20 }),
    });
    const tasks: Promise<unknown>[] = [];
    const ctx = { schedule: (p: Promise<unknown>) => void tasks.push(p) };
    sessions.addListener(
      new SearchEngine(sessions, embedder, { freshnessMs: 0, onError: () => {} }),
    );
    await sessions.create(ns, { id: 'v1', task: 'zeppelin', messages: [] }, ctx);
    await sessions.append(ns, 'v1', { messages: [kb('v', true)] }, undefined, ctx);
    await new Promise((r) => setTimeout(r, 20));
    await sessions.delete(ns, 'v1', ctx);
    answer();
    for (let i = 0; i < 5; i++) {
      await sessions.settled();
      await Promise.allSettled(tasks.splice(0));
    }
    expect((await leftOf(objects, 'v1')).filter((k) => k.includes('/x/v/'))).toEqual([]);
  });

  it('log, audit and search records whose PUT landed with its answer lost, after a delete elsewhere, go', async () => {
    const inner = tempLocalStore('delrace-lost');
    let deleting: Promise<void> | undefined;
    const records = (k: string) =>
      k.includes('/m/l/') || k.includes('/audit/') || k.includes('/x/d/');
    // Process A's view of the bucket: once its session is written, each record's PUT waits for B's
    // delete, lands, and loses its answer; every retry of it fails before reaching storage.
    class LostAnswers extends PassThrough {
      armed = false;
      readonly landed = new Set<string>();
      override async put(key: string, body: Uint8Array, options?: PutOptions) {
        if (!(this.armed && records(key))) return this.inner.put(key, body, options);
        if (this.landed.has(key)) throw new StorageUnavailableError('unreachable');
        await (deleting ??= b.sessions.delete(ns, 's1', { schedule: b.schedule }).then(b.settle));
        await this.inner.put(key, body, options);
        this.landed.add(key);
        throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
      }
    }
    const objects = new LostAnswers(inner);
    const a = proc(objects, { audit: new AuditLog(objects, (s) => s) });
    const b = proc(inner, { audit: new AuditLog(inner, (s) => s) });
    await a.sessions.create(ns, { id: 's1', task: 'job', messages: [] }, { schedule: a.schedule });
    await a.settle();
    objects.armed = true;
    await a.sessions.append(ns, 's1', { messages: [kb('s', true)] }, undefined, {
      schedule: a.schedule,
    });
    await a.settle();
    await b.settle();
    expect(deleting).toBeDefined();
    expect([...objects.landed].map((k) => k.split('/')[2])).toEqual(
      expect.arrayContaining(['m', 'audit', 'x']),
    );
    expect(await leftOf(inner, 's1')).toEqual([]);
  });
});
