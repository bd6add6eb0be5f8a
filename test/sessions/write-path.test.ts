// Issue 13: the write path. A warm append commits with one request and answers before its log, audit and
// index records; appends queued in one process go out as one group commit; and every point where a
// writer can stop between the requests of a write heals (the manifest from the standing marker, the audit
// record from the write record kept in the session object). Run on a local folder and on radosgw.
import { describe, expect, it } from 'vitest';
import { concat, publicChunks, publicSession } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'wp';
const localStore = () => tempLocalStore('wp');

/** The class of a key under the namespace: `sessions`, `m/p`, `m/l`, `audit`, `x/d`, ... */
function kindOf(key: string): string {
  const rest = key.slice(`ns/${ns}/`.length);
  const parts = rest.split('/');
  return parts[0] === 'm' || parts[0] === 'x' ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/**
 * A store in front of the real one that records every request and can stop a process at any request:
 * once `stopAt` requests have been forwarded, every later request hangs forever without reaching storage,
 * as if the process had been killed (what it had sent before has landed; nothing after it is sent).
 */
class Recorder implements ObjectStore {
  readonly name: string;
  log: { op: string; kind: string }[] = [];
  stopAt = Infinity;
  /** PUTs of these key classes wait (unanswered) until `release()`. */
  holding = new Set<string>();
  private held: (() => void)[] = [];
  private sent = 0;
  constructor(private readonly inner: ObjectStore) {
    this.name = inner.name;
  }
  release(): void {
    this.holding.clear();
    for (const go of this.held.splice(0)) go();
  }
  private gate(op: string, key: string): Promise<never> | null {
    if (this.sent >= this.stopAt) return new Promise<never>(() => undefined);
    this.sent++;
    this.log.push({ op, kind: kindOf(key) });
    return null;
  }
  get(key: string) {
    return this.gate('get', key) ?? this.inner.get(key);
  }
  put(key: string, body: Uint8Array, options?: PutOptions) {
    const op = options?.ifMatch ? 'cas' : options?.ifNoneMatch ? 'create' : 'put';
    const stopped = this.gate(op, key);
    if (stopped) return stopped;
    if (!this.holding.has(kindOf(key))) return this.inner.put(key, body, options);
    return new Promise<void>((r) => this.held.push(r)).then(() =>
      this.inner.put(key, body, options),
    );
  }
  delete(k: string | string[]) {
    const first = Array.isArray(k) ? (k[0] ?? '') : k;
    return this.gate('delete', first) ?? this.inner.delete(k);
  }
  list(prefix: string, options?: { cursor?: string; limit?: number }) {
    return this.gate('list', prefix) ?? this.inner.list(prefix, options);
  }
  head(key: string) {
    return this.gate('head', key) ?? this.inner.head!(key);
  }
}

function open(objects: ObjectStore, options: SessionStoreOptions = {}): SessionStore {
  const pipeline = defaultPipeline({ maxSessionBytes: 4 * 1024 * 1024 });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    ...options,
  });
}

const user = (content: string) => ({ role: 'user' as const, content });

for (const [backend, make] of [
  ['local folder', localStore],
  ['radosgw', () => openTestS3('write-path')],
] as const) {
  describe(`write path (${backend})`, () => {
    it('a warm append sends one request before it answers; its records follow', async () => {
      const rec = new Recorder(make());
      const store = open(rec);
      await store.create(ns, { id: 'warm', task: 'warm path' });
      await store.append(ns, 'warm', { messages: [user('one')] }, undefined);
      await store.settled();
      rec.log = [];
      // The log and audit records are held unanswered: the append answers without them.
      rec.holding = new Set(['m/l', 'audit']);
      await store.append(ns, 'warm', { messages: [user('two')] }, undefined);
      expect(rec.log.filter((r) => r.kind === 'sessions')).toEqual([
        { op: 'cas', kind: 'sessions' },
      ]);
      expect(rec.log.filter((r) => r.kind === 'm/p')).toEqual([]);
      rec.release();
      await store.settled();
      // After the records, one HEAD of the session's key (its etag is this append's: no GET): a delete in
      // another process that listed the records before they landed leaves them to their writer
      // (test/sessions/delete-race.test.ts).
      expect(rec.log.map((r) => `${r.op} ${r.kind}`).sort()).toEqual([
        'cas sessions',
        'create audit',
        'create m/l',
        'head sessions',
      ]);
      // Read-your-writes in this process: the list and the audit log show it at once.
      const listed = await store.list(ns, { limit: 5 });
      expect(listed.sessions[0]).toMatchObject({ id: 'warm', turns: 2 });
      expect((await store.auditRecords(ns, 'warm')).map((a) => a.op)).toEqual([
        'create',
        'append',
        'append',
      ]);
    });

    it('a list and the audit log right after an answer show the write (before its records land)', async () => {
      const objects = make();
      const store = open(objects);
      await store.create(ns, { id: 'ryw', task: 'read your writes' });
      await store.append(ns, 'ryw', { messages: [user('x')] }, undefined);
      // No settled(): the log record may still be on its way; the standing marker sends readers to the object.
      const listed = await store.list(ns, { limit: 50 });
      expect(listed.sessions.find((s) => s.id === 'ryw')?.turns).toBe(1);
      expect(await store.auditRecords(ns, 'ryw')).toHaveLength(2);
      // Another process sees it too, through the marker.
      const other = open(objects);
      expect(
        (await other.list(ns, { limit: 50 })).sessions.find((s) => s.id === 'ryw')?.turns,
      ).toBe(1);
    });

    it('appends queued in one process go out as one group commit, each with its own receipt and audit record', async () => {
      const rec = new Recorder(make());
      const store = open(rec);
      await store.create(ns, { id: 'group', task: 'group commit' });
      await store.settled();
      rec.log = [];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          store.append(ns, 'group', { messages: [user(`m${i}`)] }, undefined, {
            idempotencyKey: `key-${i}`,
          }),
        ),
      );
      const commits = rec.log.filter((r) => r.op === 'cas').length;
      // The first goes alone; the eleven that queued behind it go out together.
      expect(commits).toBe(2);
      expect(results.every((r) => !r.replayed)).toBe(true);
      // Requests sent at once have no order among themselves; each is stored once.
      const stored = await store.get(ns, 'group');
      expect(stored.messages.map((m) => m.content).sort()).toEqual(
        Array.from({ length: 12 }, (_, i) => `m${i}`).sort(),
      );
      expect(new Set(results.map((r) => r.receipt.revision)).size).toBe(2);
      await store.settled();
      const audit = await store.auditRecords(ns, 'group');
      expect(audit.filter((a) => a.op === 'append')).toHaveLength(12);
      expect(audit.reduce((n, a) => n + a.messages_added, 0)).toBe(12);
      // Each request keeps its own idempotency record: a retry of one of them is a replay.
      const again = await store.append(ns, 'group', { messages: [user('m7')] }, undefined, {
        idempotencyKey: 'key-7',
      });
      expect(again.replayed).toBe(true);
      expect((await store.get(ns, 'group')).messages).toHaveLength(12);
    });

    it('a group holding a replay and a reused key answers each request on its own', async () => {
      const store = open(make());
      await store.create(ns, { id: 'mixed', task: 'mixed group' });
      await store.append(ns, 'mixed', { messages: [user('first')] }, undefined, {
        idempotencyKey: 'k1',
      });
      const blocker = store.append(ns, 'mixed', { messages: [user('blocker')] }, undefined);
      const [replay, reused, fresh] = await Promise.allSettled([
        store.append(ns, 'mixed', { messages: [user('first')] }, undefined, {
          idempotencyKey: 'k1',
        }),
        store.append(ns, 'mixed', { messages: [user('other')] }, undefined, {
          idempotencyKey: 'k1',
        }),
        store.append(ns, 'mixed', { messages: [user('fresh')] }, undefined),
      ]);
      await blocker;
      expect(replay).toMatchObject({ status: 'fulfilled', value: { replayed: true } });
      expect(reused).toMatchObject({ status: 'rejected', reason: { kind: 'key_reused' } });
      expect(fresh).toMatchObject({ status: 'fulfilled', value: { replayed: false } });
      expect((await store.get(ns, 'mixed')).messages.map((m) => m.content)).toEqual([
        'first',
        'blocker',
        'fresh',
      ]);
    });

    it('group commits of several processes lose nothing and keep each writer in order', async () => {
      const objects = make();
      await open(objects).create(ns, { id: 'race', task: 'racing groups' });
      const stores = Array.from({ length: 3 }, () => open(objects));
      await Promise.all(
        stores.flatMap((s, p) =>
          Array.from({ length: 3 }, async (_, w) => {
            for (let i = 0; i < 5; i++)
              await s.append(ns, 'race', { messages: [user(`p${p}w${w}-${i}`)] }, undefined);
          }),
        ),
      );
      const texts = (await stores[0]!.get(ns, 'race')).messages.map((m) => String(m.content));
      expect(texts).toHaveLength(45);
      expect(new Set(texts).size).toBe(45);
      for (let p = 0; p < 3; p++)
        for (let w = 0; w < 3; w++) {
          const mine = texts.filter((t) => t.startsWith(`p${p}w${w}-`));
          expect(mine).toEqual(Array.from({ length: 5 }, (_, i) => `p${p}w${w}-${i}`));
        }
    });

    it('a writer stopped at each request of a write leaves a state that heals', async () => {
      // The requests of a cold append: marker PUT and session GET (together), the commit, then the log
      // and audit records. Stop the process after 0, 1, 2, 3 and 4 of them.
      for (let stopAt = 0; stopAt <= 4; stopAt++) {
        const objects = make();
        let clock = Date.now();
        const setup = open(objects, { now: () => clock });
        const id = `stop-${stopAt}`;
        await setup.create(ns, { id, task: 'stopped writer' });
        await setup.settled();
        await setup.retireMarkers();
        const rec = new Recorder(objects);
        const doomed = open(rec, { now: () => clock });
        rec.stopAt = stopAt;
        const answer = doomed.append(ns, id, { messages: [user('maybe')] }, undefined);
        const answered = await Promise.race([
          answer.then(() => true),
          new Promise((r) => setTimeout(() => r(false), 300)),
        ]);
        // It answers only once the commit has landed (the third request).
        expect(answered).toBe(stopAt >= 3);
        const stored = await open(objects).get(ns, id);
        const landed = stored.messages.length === 1;
        expect(landed).toBe(stopAt >= 3);
        // Another process lists the object's real state at once.
        const fresh = open(objects, { now: () => clock });
        const entry = (await fresh.list(ns, { limit: 100 })).sessions.find((s) => s.id === id);
        expect(entry?.turns).toBe(landed ? 1 : 0);
        // After the stale-marker window the compactor folds it, restores the audit record and collects
        // the marker.
        clock += 16 * 60_000;
        const later = open(objects, { now: () => clock });
        await later.list(ns, { limit: 100 });
        await later.manifest.compact(ns, true);
        const left = await listAll(objects, keys.manifest(ns));
        expect(left.filter((k) => k.includes('/m/p/'))).toEqual([]);
        const again = (await later.list(ns, { limit: 100 })).sessions.find((s) => s.id === id);
        expect(again?.turns).toBe(landed ? 1 : 0);
        const audit = await later.auditRecords(ns, id);
        expect(audit.map((a) => a.op)).toEqual(landed ? ['create', 'append'] : ['create']);
      }
    });

    it("a cold write builds beside its marker's PUT, and sends no PUT before the marker is stored", async () => {
      // Whole, and split (its append seals a segment: a part PUT before the commit).
      for (const layout of [{}, { splitBytes: 1024, segmentBytes: 256 }]) {
        const objects = make();
        const id = `gate-${Object.keys(layout).length}`;
        const setup = open(objects, layout);
        await setup.create(ns, { id, task: 'marker first', messages: [user('x'.repeat(1500))] });
        await setup.settled();
        await setup.retireMarkers();
        const rec = new Recorder(objects);
        const cold = open(rec, layout);
        rec.holding = new Set(['m/p']);
        let answered = false;
        const answer = cold
          .append(ns, id, { messages: [user('y'.repeat(600))] }, undefined)
          .then(() => (answered = true));
        await new Promise((r) => setTimeout(r, 150));
        // The read went out beside the marker; nothing else is sent while the marker is unanswered.
        expect(rec.log.map((r) => `${r.op} ${r.kind}`)).toEqual(['put m/p', 'get sessions']);
        expect(answered).toBe(false);
        rec.release();
        await answer;
        const sent = rec.log.map((r) => `${r.op} ${r.kind}`);
        expect(sent).toContain('cas sessions');
        if (Object.keys(layout).length) expect(sent).toContain('create b');
        expect((await open(objects).get(ns, id)).messages).toHaveLength(2);
        await cold.settled();
      }
    });

    it('a marker that cannot be stored fails the write, which stores nothing', async () => {
      const objects = make();
      const setup = open(objects);
      await setup.create(ns, { id: 'nomark', task: 'no marker' });
      await setup.settled();
      const before = (await listAll(objects, `ns/${ns}/`)).sort();
      let puts = 0;
      const failing: ObjectStore = {
        name: objects.name,
        get: (k) => objects.get(k),
        delete: (k) => objects.delete(k),
        list: (p, o) => objects.list(p, o),
        put: (k, b, o) => {
          puts++;
          return k.includes('/m/p/')
            ? Promise.reject(new Error('marker lost'))
            : objects.put(k, b, o);
        },
      };
      const cold = open(failing);
      const writes = [0, 1, 2].map((i) =>
        cold.append(ns, 'nomark', { messages: [user(`m${i}`)] }, undefined),
      );
      for (const w of writes) await expect(w).rejects.toThrow('marker lost');
      await cold.settled();
      // Only the markers' PUTs went out: the one for the first write, and one for the two queued behind it.
      expect(puts).toBe(2);
      expect((await listAll(objects, `ns/${ns}/`)).sort()).toEqual(before);
      expect((await open(objects).get(ns, 'nomark')).messages).toEqual([]);
    });

    it('a log record that fails leaves the marker, and the manifest heals from the object', async () => {
      const objects = make();
      let clock = Date.now();
      let failLogs = true;
      const flaky: ObjectStore = {
        name: objects.name,
        get: (k) => objects.get(k),
        delete: (k) => objects.delete(k),
        list: (p, o) => objects.list(p, o),
        put: (k, b, o) =>
          failLogs && k.includes('/m/l/')
            ? Promise.reject(new Error('log record lost'))
            : objects.put(k, b, o),
      };
      const store = open(flaky, { now: () => clock, markerIdleMs: 1 });
      await store.create(ns, { id: 'nolog', task: 'no log record' });
      await store.append(ns, 'nolog', { messages: [user('a')] }, undefined);
      await store.settled();
      await new Promise((r) => setTimeout(r, 20));
      failLogs = false;
      // The marker stayed (its writes are not logged), with one stored after each of them, so every
      // reader checks the object.
      const markers = (await listAll(objects, keys.manifest(ns))).filter((k) =>
        k.includes('/m/p/nolog/'),
      );
      expect(markers).toHaveLength(3);
      expect(
        (await open(objects).list(ns, { limit: 100 })).sessions.find((s) => s.id === 'nolog')
          ?.turns,
      ).toBe(1);
      clock += 16 * 60_000;
      const later = open(objects, { now: () => clock });
      await later.list(ns, { limit: 100 });
      await later.manifest.compact(ns, true);
      expect(
        (await listAll(objects, keys.manifest(ns))).filter((k) => k.includes('/m/p/nolog/')),
      ).toEqual([]);
      expect(
        (await later.list(ns, { limit: 100 })).sessions.find((s) => s.id === 'nolog')?.turns,
      ).toBe(1);
    });

    it('an idle standing marker is removed once its writes are logged', async () => {
      const objects = make();
      const store = open(objects, { markerIdleMs: 1 });
      await store.create(ns, { id: 'idle', task: 'idle marker' });
      await store.append(ns, 'idle', { messages: [user('a')] }, undefined);
      await store.settled();
      const markers = async () =>
        (await listAll(objects, keys.manifest(ns))).filter((k) => k.includes('/m/p/idle/'));
      for (let i = 0; i < 100 && (await markers()).length > 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await markers()).toEqual([]);
      // The next write arms a new one.
      await store.append(ns, 'idle', { messages: [user('b')] }, undefined);
      expect(await markers()).toHaveLength(1);
    });

    it('a delete right after an append leaves none of its text in any object', async () => {
      const objects = make();
      const store = open(objects);
      await store.create(ns, { id: 'gone', task: 'zebra-unique-task' });
      await store.append(ns, 'gone', { messages: [user('zebra-unique-text')] }, undefined);
      await store.delete(ns, 'gone');
      await store.settled();
      await store.manifest.compact(ns, true);
      await new Promise((r) => setTimeout(r, 50));
      const all = await listAll(objects, `ns/${ns}/`);
      const bodies = await Promise.all(all.map((k) => objects.get(k)));
      const holding = all.filter((_, i) =>
        new TextDecoder().decode(bodies[i]?.body ?? new Uint8Array()).includes('zebra-unique'),
      );
      expect(holding).toEqual([]);
    });
  });
}

describe('GET sends the stored bytes when they are the public form', () => {
  it('answers exactly what publicSession gives, and falls back when it cannot', async () => {
    const objects = localStore();
    const store = open(objects);
    await store.create(ns, {
      id: 'bytes',
      task: 'a "quoted" task with ,"satchel": in it',
      metadata: { a: '1', satchel: 'x' }, // an unescaped ,"satchel": before the real one
      messages: [user('hello ,"satchel":{"writes":[]} there')],
    });
    await store.append(ns, 'bytes', { messages: [user('more')] }, undefined, {
      idempotencyKey: 'k-1',
    });
    const { session, chunks } = await store.getStored(ns, 'bytes');
    expect(chunks).not.toBeNull();
    expect(JSON.parse(new TextDecoder().decode(concat(...chunks!)))).toEqual(
      JSON.parse(JSON.stringify(publicSession(session))),
    );
    // Content parts are answered in another form; a session without bookkeeping is not Satchel's.
    const body = (await objects.get(keys.session(ns, 'bytes')))!.body; // a small session is stored whole
    const withParts = {
      ...session,
      messages: [{ role: 'user', content: 'x', content_parts: [] }],
    } as unknown as typeof session;
    expect(publicChunks(withParts, { body })).toBeNull();
    const { satchel: _s, ...foreign } = session;
    expect(publicChunks(foreign as typeof session, { body })).toBeNull();
    // A session without metadata answers `metadata: {}`, as publicSession does.
    await store.create(ns, { id: 'bare', task: 'no metadata', messages: [user('hi')] });
    const bare = await store.getStored(ns, 'bare');
    expect(bare.session.metadata).toBeUndefined();
    expect(JSON.parse(new TextDecoder().decode(concat(...bare.chunks!)))).toEqual(
      JSON.parse(JSON.stringify(publicSession(bare.session))),
    );
  });
});
