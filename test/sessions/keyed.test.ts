// Keyed writes (docs/design.md, "Keyed writes"): the records of writes with an Idempotency-Key leave the
// session object once it holds 24 of them; a retry of any key within the retention window is still a
// no-op, looked up in storage only when the object's filters may hold its key. On a local folder and on
// radosgw, with what each write read and wrote.
import { describe, expect, it } from 'vitest';
import { decodeStored } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { SatchelError } from '../../lib/model/errors.js';
import { RETENTION_MS } from '../../lib/model/retention.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import {
  addToFilters,
  capacityOf,
  filterHas,
  KEYED_KEEP,
  KEYED_PUSH_AT,
  incarnationIn,
  incarnationOf,
  lookUpKeyRecord,
  PACK_MAX,
  packsOf,
  storeOut,
  sweepDue,
} from '../../lib/sessions/key-records.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { sha256Hex } from '../../lib/model/digest.js';
import type { WriteRecord } from '../../lib/model/session.js';
import { listAll } from '../../lib/storage/prefix.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { openTestS3 } from '../support/s3.js';
import { eventually } from '../support/eventually.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'keyed';

/** Counts GETs and PUTs of stored-out key records, and bytes PUT per key class. */
class Watch extends PassThrough {
  keyGets = 0;
  keyPuts = 0;
  sessionBytes = 0;
  /** The order of PUTs: `k` for a key record, `s` for the session object. */
  trail: string[] = [];
  override get(key: string) {
    if (key.includes('/k/')) this.keyGets++;
    return this.inner.get(key);
  }
  override put(key: string, body: Uint8Array, options?: PutOptions) {
    if (key.includes('/k/')) this.keyPuts++;
    if (key.includes('/sessions/')) this.sessionBytes += body.byteLength;
    if (key.includes('/k/') || key.includes('/sessions/'))
      this.trail.push(key.includes('/k/') ? 'k' : 's');
    return this.inner.put(key, body, options);
  }
}

/** Holds every PUT of a key record until `release()`, counting them. */
class HeldKeyPuts extends PassThrough {
  held = 0;
  release = () => {};
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (key.includes('/k/')) {
      this.held++;
      await this.gate;
    }
    return this.inner.put(key, body, options);
  }
}

function open(objects: ObjectStore, now?: () => number) {
  return new SessionStore(objects, {
    pipeline: defaultPipeline({ maxSessionBytes: 8 << 20 }),
    ...(now ? { now } : {}),
  });
}

const msg = (i: number) => ({
  role: 'user' as const,
  content: `message ${i} ${'lorem '.repeat(40)}`,
});

/** Every keyed record in the stored-out objects `names` (packs, or records stored alone). */
async function recordsIn(objects: ObjectStore, names: string[]): Promise<WriteRecord[]> {
  const bodies = await Promise.all(names.map((n) => objects.get(n)));
  return bodies.flatMap((b) => [JSON.parse(new TextDecoder().decode(b!.body))].flat());
}

async function stored(objects: ObjectStore, id: string) {
  const key = keys.session(ns, id);
  return decodeStored((await objects.get(key))!.body, key).session;
}

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('keyed')],
  ['radosgw', () => openTestS3('keyed')],
] as const) {
  describe(`keyed writes (${backend})`, () => {
    it('the object keeps a few keyed records; a retry of any key is still a no-op', async () => {
      const objects = new Watch(make());
      const store = open(objects);
      const id = `k-${Date.now()}`;
      await store.create(ns, { id, task: 'keyed', messages: [] });
      const receipts = [];
      for (let i = 0; i < 100; i++)
        receipts.push(
          (
            await store.append(ns, id, { messages: [msg(i)] }, undefined, {
              idempotencyKey: `key-${i}`,
            })
          ).receipt,
        );
      const session = await stored(objects.inner, id);
      const keyed = session.satchel!.writes.filter((w) => w.k.startsWith('k:'));
      // A writer that keeps the session lets up to twice 24 wait for its background PUT (one pack).
      expect(keyed.length).toBeLessThanOrEqual(2 * KEYED_PUSH_AT);
      expect(keyed.length).toBeGreaterThan(0);
      // What each costs in every write of the object (docs/design.md, "Keyed writes").
      expect(Math.max(...keyed.map((w) => JSON.stringify(w).length))).toBeLessThan(300);
      await store.settled();
      // Each record is stored once; every one the object no longer holds is stored (some it still holds
      // are too: a writer that keeps the session stores them alongside a commit and drops them later).
      const out = await listAll(objects.inner, keys.keyRecords(ns, id));
      expect(out.length).toBe(objects.keyPuts);
      // In packs: one PUT per write that stores records out (17 records each), not one per record.
      const records = await recordsIn(objects.inner, out);
      expect(new Set(records.map((r) => r.k)).size).toBe(records.length);
      expect(records.length).toBeGreaterThanOrEqual(100 - keyed.length);
      expect(objects.keyPuts).toBeLessThanOrEqual(
        Math.ceil(100 / (KEYED_PUSH_AT + 1 - KEYED_KEEP)),
      );
      // Fresh keys passed the filters without a lookup (false positives aside).
      expect(objects.keyGets).toBeLessThanOrEqual(3);
      // Retries: the first key (stored out long ago), one in the middle, and the newest.
      for (const i of [0, 50, 99]) {
        const again = await store.append(ns, id, { messages: [msg(i)] }, undefined, {
          idempotencyKey: `key-${i}`,
        });
        expect(again.replayed).toBe(true);
        expect(again.receipt.revision).toBe(receipts[i]!.revision);
      }
      // Another process, which holds nothing, agrees; and a reused key with another body is refused.
      const fresh = open(objects);
      const other = await fresh.append(ns, id, { messages: [msg(3)] }, undefined, {
        idempotencyKey: 'key-3',
      });
      expect(other).toMatchObject({ replayed: true, receipt: { revision: receipts[3]!.revision } });
      const reused = fresh.append(ns, id, { messages: [msg(999)] }, undefined, {
        idempotencyKey: 'key-3',
      });
      await expect(reused).rejects.toMatchObject({ kind: 'key_reused' });
      const after = await fresh.get(ns, id);
      expect(after.messages).toHaveLength(100);
      expect(after.revision).toBe(101);
      // The store's own lookup (used by continue) finds stored-out records too.
      expect(
        await fresh.keyedRecord(ns, id, await stored(objects.inner, id), 'key-1'),
      ).toMatchObject({
        r: { revision: receipts[1]!.revision },
      });
      // A delete takes them with the session.
      await fresh.delete(ns, id);
      expect(await listAll(objects.inner, keys.keyRecords(ns, id))).toEqual([]);
    });

    it('racing keyed writers lose nothing and apply each key once, retries included', async () => {
      const objects = make();
      const id = `race-${Date.now()}`;
      await open(objects).create(ns, { id, task: 'race', messages: [] });
      const stores = Array.from({ length: 4 }, () => open(objects));
      await Promise.all(
        stores.map(async (s, p) => {
          for (let i = 0; i < 15; i++) {
            const key = `p${p}-${i}`;
            await s.append(ns, id, { messages: [{ role: 'user', content: key }] }, undefined, {
              idempotencyKey: key,
            });
            // Every third write is sent again by another process.
            if (i % 3 === 0)
              await stores[(p + 1) % 4]!.append(
                ns,
                id,
                { messages: [{ role: 'user', content: key }] },
                undefined,
                {
                  idempotencyKey: key,
                },
              );
          }
        }),
      );
      // And once more each, after everything (most are stored out by now).
      for (let p = 0; p < 4; p++)
        for (let i = 0; i < 15; i++)
          await stores[p]!.append(
            ns,
            id,
            { messages: [{ role: 'user', content: `p${p}-${i}` }] },
            undefined,
            {
              idempotencyKey: `p${p}-${i}`,
            },
          );
      const texts = (await open(objects).get(ns, id)).messages.map((m) => String(m.content));
      expect(texts).toHaveLength(60);
      expect(new Set(texts).size).toBe(60);
    });

    it('a writer that stored records out and then failed to commit leaves a state that works', async () => {
      class FailCommitAfterKeys extends PassThrough {
        armed = false;
        failed = 0;
        override async put(key: string, body: Uint8Array, options?: PutOptions) {
          if (key.includes('/k/') && this.failed === 0) this.armed = true;
          else if (this.armed && key.includes('/sessions/')) {
            this.armed = false;
            this.failed++;
            throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
          }
          return this.inner.put(key, body, options);
        }
      }
      const objects = new FailCommitAfterKeys(make());
      const id = `fail-${Date.now()}`;
      const store = open(objects);
      await store.create(ns, { id, task: 'fail', messages: [] });
      const receipts = new Map<number, number>();
      for (let i = 0; i < 40; i++) {
        const send = () =>
          store.append(ns, id, { messages: [msg(i)] }, undefined, { idempotencyKey: `f-${i}` });
        // The client retries what failed, with the same key.
        const r = await send().catch(() => send());
        receipts.set(i, r.receipt.revision);
      }
      expect(objects.failed).toBeGreaterThan(0);
      const fresh = open(objects.inner);
      for (let i = 0; i < 40; i++) {
        const again = await fresh.append(ns, id, { messages: [msg(i)] }, undefined, {
          idempotencyKey: `f-${i}`,
        });
        expect(again).toMatchObject({ replayed: true, receipt: { revision: receipts.get(i) } });
      }
      expect((await fresh.get(ns, id)).messages).toHaveLength(40);
    });

    it('a write that loses its race after storing records out does not store them again', async () => {
      /** Lets another writer commit just before the next conditional PUT of the session. */
      class RaceOnce extends Watch {
        race: (() => Promise<unknown>) | undefined;
        override async put(key: string, body: Uint8Array, options?: PutOptions) {
          const race = options?.ifMatch && key.includes('/sessions/') ? this.race : undefined;
          if (race) this.race = undefined;
          await race?.();
          return super.put(key, body, options);
        }
      }
      const inner = make();
      const objects = new RaceOnce(inner);
      const id = `race-once-${Date.now()}`;
      const store = open(objects);
      await store.create(ns, { id, task: 'race', messages: [] });
      for (let i = 0; i < KEYED_PUSH_AT; i++)
        await store.append(ns, id, { messages: [msg(i)] }, undefined, { idempotencyKey: `r-${i}` });
      expect(objects.keyPuts).toBe(0);
      // Without a key, the other write leaves the object's keyed records as they were: the retry must
      // store out the same ones, which the lost attempt stored already. A writer that held nothing
      // stores them before its commit.
      objects.race = () => open(inner).append(ns, id, { messages: [msg(99)] }, undefined);
      await open(objects).append(ns, id, { messages: [msg(KEYED_PUSH_AT)] }, undefined, {
        idempotencyKey: `r-${KEYED_PUSH_AT}`,
      });
      expect(objects.race).toBeUndefined();
      expect(objects.keyPuts).toBe(1); // the 17 oldest, in one pack
      const keyed = (await stored(inner, id)).satchel!.writes.filter((w) => w.k.startsWith('k:'));
      expect(keyed).toHaveLength(KEYED_KEEP);
      const fresh = open(inner);
      for (let i = 0; i <= KEYED_PUSH_AT; i++) {
        const again = await fresh.append(ns, id, { messages: [msg(i)] }, undefined, {
          idempotencyKey: `r-${i}`,
        });
        expect(again.replayed).toBe(true);
      }
      expect((await fresh.get(ns, id)).messages).toHaveLength(KEYED_PUSH_AT + 2);
    });

    it('a writer that keeps the session stores records alongside a commit and drops them in the next', async () => {
      const objects = new Watch(make());
      const id = `ahead-${Date.now()}`;
      const store = open(objects);
      const background: Promise<unknown>[] = [];
      const keyed = { schedule: (work: Promise<unknown>) => void background.push(work) };
      const send = (s: SessionStore, i: number) =>
        s.append(ns, id, { messages: [msg(i)] }, undefined, { ...keyed, idempotencyKey: `a-${i}` });
      await store.create(ns, { id, task: 'ahead', messages: [] });
      for (let i = 0; i <= KEYED_PUSH_AT; i++) await send(store, i);
      const inObject = async () =>
        (await stored(objects.inner, id)).satchel!.writes.filter((w) => w.k.startsWith('k:'))
          .length;
      // The 25th keyed write committed with every record; the 17 oldest were stored after it.
      expect(await inObject()).toBe(KEYED_PUSH_AT + 1);
      await Promise.all(background);
      expect(objects.keyPuts).toBe(1); // the 17 oldest, in one pack
      // The next write drops them without a PUT (its one new candidate stays, for the next pack).
      objects.trail = [];
      await send(store, KEYED_PUSH_AT + 1);
      expect(await inObject()).toBe(KEYED_KEEP + 1);
      await Promise.all(background);
      expect(objects.trail).toEqual(['s']);
      const fresh = open(objects.inner);
      for (let i = 0; i <= KEYED_PUSH_AT + 1; i++)
        expect((await send(fresh, i)).replayed).toBe(true);
      expect((await fresh.get(ns, id)).messages).toHaveLength(KEYED_PUSH_AT + 2);
      // Stored after a delete that listed first: the writer finds the session gone and deletes them.
      const id2 = `${id}-deleted`;
      const first = open(objects.inner);
      await first.create(ns, { id: id2, task: 'ahead', messages: [] });
      for (let i = 0; i < KEYED_PUSH_AT; i++)
        await first.append(ns, id2, { messages: [msg(i)] }, undefined, {
          idempotencyKey: `d-${i}`,
        });
      const gated = new HeldKeyPuts(objects.inner);
      const slow = open(gated);
      await slow.get(ns, id2);
      background.length = 0;
      // Warm: its 25th keyed write stores the oldest records after the commit, held at the gate.
      await slow.append(ns, id2, { messages: [msg(99)] }, undefined, {
        ...keyed,
        idempotencyKey: 'd-99',
      });
      expect(gated.held).toBe(1); // the 17 oldest, in one pack
      await first.delete(ns, id2);
      gated.release();
      await Promise.all(background);
      expect(await listAll(objects.inner, keys.keyRecords(ns, id2))).toEqual([]);
    });

    // Found by review: records a warm writer stores after its commit, when the session is deleted and
    // created again under the same id (a client whose key counter starts again) before they land.
    for (const [how, created_at] of [
      ['created again', undefined],
      // An import keeps the deleted session's created_at (a restore of an export): found by a review.
      ['imported again with its created_at', '2026-11-30T10:00:00.000Z'],
    ] as const)
      it(`records stored after a commit do not outlive a delete and a session ${how} under the id`, async () => {
        const objects = make();
        const id = `recreate-${Date.now()}`;
        const times = created_at ? { created_at } : {};
        const say = (i: number, tag: string) => ({
          messages: [{ role: 'user' as const, content: `${tag} message ${i}` }],
        });
        const first = open(objects);
        await first.create(ns, { id, task: 'old', messages: [], ...times });
        for (let i = 0; i < KEYED_PUSH_AT; i++)
          await first.append(ns, id, say(i, 'old'), undefined, { idempotencyKey: `d-${i}` });
        const background: Promise<unknown>[] = [];
        const schedule = (work: Promise<unknown>) => void background.push(work);
        const gated = new HeldKeyPuts(objects);
        const slow = open(gated);
        await slow.get(ns, id); // warm
        await slow.append(ns, id, say(99, 'old'), undefined, { schedule, idempotencyKey: 'd-99' });
        expect(gated.held).toBe(1); // the 17 oldest, in one pack
        // Deleted (its LIST of k/<id>/ runs before the records land) and created again under the id.
        await first.delete(ns, id);
        const other = open(objects);
        await other.create(ns, { id, task: 'new', messages: [], ...times });
        gated.release();
        await Promise.all(background);
        expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
        // The new session uses the same keys for other requests, and answers its own retries.
        const receipts = [];
        for (let i = 0; i < KEYED_PUSH_AT + 4; i++)
          receipts.push(
            await other.append(ns, id, say(i, 'new'), undefined, {
              schedule,
              idempotencyKey: `d-${i}`,
            }),
          );
        await Promise.all(background);
        expect(receipts.every((r) => !r.replayed)).toBe(true);
        const retry = await open(objects).append(ns, id, say(0, 'new'), undefined, {
          idempotencyKey: 'd-0',
        });
        expect(retry).toMatchObject({ replayed: true, receipt: receipts[0]!.receipt });
      });

    it('a writer that stored records out, then finds the session created again, deletes them', async () => {
      const inner = make();
      const id = `recreate-cold-${Date.now()}`;
      const first = open(inner);
      await first.create(ns, { id, task: 'old', messages: [] });
      for (let i = 0; i < KEYED_PUSH_AT; i++)
        await first.append(ns, id, { messages: [msg(i)] }, undefined, { idempotencyKey: `c-${i}` });
      /** Deletes the session and creates it again while the first key record's PUT is on its way. */
      class Recreate extends Watch {
        private recreated: Promise<unknown> | undefined;
        override async put(key: string, body: Uint8Array, options?: PutOptions) {
          if (key.includes('/k/'))
            await (this.recreated ??= first
              .delete(ns, id)
              .then(() => first.create(ns, { id, task: 'new', messages: [] })));
          return super.put(key, body, options);
        }
      }
      const objects = new Recreate(inner);
      const background: Promise<unknown>[] = [];
      const schedule = (work: Promise<unknown>) => void background.push(work);
      // A writer that holds nothing stores the 17 oldest records before its commit, which then fails.
      const r = await open(objects).append(ns, id, { messages: [msg(99)] }, undefined, {
        schedule,
        idempotencyKey: 'c-99',
      });
      expect(objects.keyPuts).toBe(1); // the 17 oldest, in one pack
      // It landed on the new session, created above the deleted one's floor (1 + KEYED_PUSH_AT + 1000).
      expect(r.receipt.revision).toBe(KEYED_PUSH_AT + 1003);
      await Promise.all(background);
      expect(await listAll(inner, keys.keyRecords(ns, id))).toEqual([]);
    });

    it('a stored-out key is forgotten after the retention window, with its filter', async () => {
      const objects = new Watch(make());
      let clock = Date.now();
      const store = open(objects, () => clock);
      const id = `ttl-${Date.now()}`;
      await store.create(ns, { id, task: 'ttl', messages: [] });
      for (let i = 0; i < 30; i++)
        await store.append(ns, id, { messages: [msg(i)] }, undefined, { idempotencyKey: `t-${i}` });
      expect((await stored(objects.inner, id)).satchel!.kf).toHaveLength(1);
      clock += RETENTION_MS + 60_000;
      const late = await store.append(ns, id, { messages: [msg(0)] }, undefined, {
        idempotencyKey: 't-0',
      });
      expect(late.replayed).toBe(false);
      expect((await stored(objects.inner, id)).satchel!.kf).toEqual([]);
    });
  });
}

describe('stored-out records named before packs', () => {
  it('records stored alone (before packs, until 2026-12-02) are read no more; a pack by its session only', async () => {
    const objects = tempLocalStore('legacy');
    const k = 'k:' + (await sha256Hex('legacy-key'));
    const created = incarnationOf({
      created_at: '2026-12-01T10:00:00.000Z',
      satchel: { writes: [], i: 'a1' },
    });
    expect(created).toBe('a1');
    // Stored as a Satchel of 2026-12-01 and 2026-12-02 named them (none of them can count after
    // 2026-12-03, 24 h after the last), here with a time a lookup would still count.
    const now = Date.parse('2026-12-05T08:00:00Z');
    const record: WriteRecord = { k, at: now - 60_000, r: { revision: 7 } };
    const folder = `${keys.keyRecords(ns, 'old')}${Math.floor(record.at / RETENTION_MS)}/`;
    const body = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    await objects.put(`${folder}${k.slice(2)}.json`, body(record));
    await objects.put(`${folder}${k.slice(2)}-${created}.json`, body(record));
    expect(await lookUpKeyRecord(objects, ns, 'old', created, k, now, null)).toBeUndefined();
    // A pack holding it is found, by that session only.
    await objects.put(`${folder}p-${created}_${k.slice(2, 10)}.json`, body([record]));
    expect(await lookUpKeyRecord(objects, ns, 'old', created, k, now, null)).toEqual(record);
    const other = 'b2'; // a session created again under the id
    expect(await lookUpKeyRecord(objects, ns, 'old', other, k, now, null)).toBeUndefined();
  });
});

describe('the fingerprint of a keyed request', () => {
  const body = { messages: [{ role: 'user' as const, content: 'db password is hunter2' }] };

  it('holds the key, so the bucket cannot test guesses at what the request held; reuse is 422', async () => {
    const objects = tempLocalStore('fingerprint');
    const store = open(objects);
    await store.create(ns, { id: 'fp', task: 't', messages: [] });
    await store.append(ns, 'fp', body, undefined, { idempotencyKey: 'key-fp-1' });
    const record = (await stored(objects, 'fp')).satchel!.writes.find((w) => w.k.startsWith('k:'))!;
    expect(record.f).toBeUndefined();
    expect(record.g).toMatch(/^[0-9a-f]{64}$/);
    // The hash of the request alone, which a reader of the bucket could compute for a guess, is not it.
    expect(record.g).not.toBe(await sha256Hex(JSON.stringify(['append', body])));
    const replay = await store.append(ns, 'fp', body, undefined, { idempotencyKey: 'key-fp-1' });
    expect(replay.replayed).toBe(true);
    const other = { messages: [{ role: 'user' as const, content: 'db password is hunter3' }] };
    await expect(
      store.append(ns, 'fp', other, undefined, { idempotencyKey: 'key-fp-1' }),
    ).rejects.toMatchObject({ kind: 'key_reused' });
  });

  it('a record of an older Satchel (`f`, the request alone; none counts after 2026-12-04) is taken for the same request', async () => {
    const objects = tempLocalStore('fingerprint-f');
    const at = Date.parse('2026-12-04T12:00:00Z');
    const store = open(objects, () => at);
    await store.create(ns, { id: 'old', task: 't', messages: [] });
    await store.append(ns, 'old', body, undefined, { idempotencyKey: 'key-old' });
    // As a Satchel of 2026-12-02 stored it: `f` of the request alone, no `g`.
    const key = keys.session(ns, 'old');
    const session = await stored(objects, 'old');
    const record = session.satchel!.writes.find((w) => w.k.startsWith('k:'))!;
    delete record.g;
    record.f = await sha256Hex(JSON.stringify(['append', body]));
    await objects.put(key, new TextEncoder().encode(JSON.stringify(session)));
    const fresh = open(objects, () => at + 60_000);
    const other = { messages: [{ role: 'user' as const, content: 'something else' }] };
    for (const request of [body, other]) {
      const replay = await fresh.append(ns, 'old', request, undefined, {
        idempotencyKey: 'key-old',
      });
      expect(replay.replayed).toBe(true);
    }
    expect((await stored(objects, 'old')).messages).toHaveLength(1);
  });
});

describe('packs of stored-out records', () => {
  it('are named within a file name, by day, and a lookup finds a record in one by its short hash', async () => {
    const objects = tempLocalStore('packs');
    const at = Date.parse('2026-12-02T09:00:00Z');
    const day = Math.floor(at / RETENTION_MS);
    const records: WriteRecord[] = await Promise.all(
      Array.from({ length: 2 * PACK_MAX + 3 }, async (_, i) => ({
        k: 'k:' + (await sha256Hex(`pack-${i}`)),
        // The last three are of the next day.
        at: i < 2 * PACK_MAX ? at + i : at + RETENTION_MS,
        r: { revision: i + 1 },
      })),
    );
    // The longest incarnation a name can hold.
    const token = 'f'.repeat(32);
    const packs = packsOf(ns, 'p', token, records);
    expect(packs.map((p) => p.records.length)).toEqual([PACK_MAX, PACK_MAX, 3]);
    expect(packs.map((p) => p.name.split('/').at(-2))).toEqual([day, day, day + 1].map(String));
    for (const p of packs) {
      expect(new TextEncoder().encode(p.name.split('/').at(-1)).byteLength).toBeLessThanOrEqual(
        255,
      );
      // A local folder stores the name as a file (at most 255 bytes).
      await objects.put(p.name, new TextEncoder().encode(JSON.stringify(p.records)));
    }
    for (const i of [0, PACK_MAX + 5, 2 * PACK_MAX + 1]) {
      const now = records[i]!.at + 60_000;
      const found = await lookUpKeyRecord(objects, ns, 'p', token, records[i]!.k, now, null);
      expect(found).toEqual(records[i]);
      // Not in a session created again under the id.
      expect(
        await lookUpKeyRecord(objects, ns, 'p', 'b2', records[i]!.k, now, null),
      ).toBeUndefined();
    }
    // A key whose short hash a pack's name holds, but not the key: read, not found.
    const stranger = 'k:' + records[3]!.k.slice(2, 10) + '0'.repeat(56);
    expect(
      await lookUpKeyRecord(objects, ns, 'p', token, stranger, at + 60_000, null),
    ).toBeUndefined();
  });
});

describe('incarnationIn', () => {
  it('reads the incarnation of a whole object and of a delta, and nothing else', async () => {
    const objects = tempLocalStore('incarnation');
    const store = new SessionStore(objects, {
      pipeline: defaultPipeline({ maxSessionBytes: 8 << 20 }),
      splitBytes: 4096,
    });
    await store.create(ns, { id: 'small', task: 'whole', messages: [msg(0)] });
    await store.create(ns, { id: 'split', task: 'delta', messages: [msg(0)] });
    for (let i = 1; i < 20; i++) await store.append(ns, 'split', { messages: [msg(i)] }, undefined);
    for (const id of ['small', 'split']) {
      const body = (await objects.get(keys.session(ns, id)))!.body;
      const session = await store.get(ns, id);
      expect(incarnationIn(body)).toBe(incarnationOf(session));
      expect(incarnationOf(session)).toMatch(/^[0-9a-f]{8}$/);
    }
    expect(
      decodeStored((await objects.get(keys.session(ns, 'split')))!.body, 'split').base,
    ).toBeDefined();
    expect(incarnationIn(new TextEncoder().encode('{"nothing":1}'))).toBeUndefined();
    expect(incarnationIn(new TextEncoder().encode('not json'))).toBeUndefined();
  });
});

describe('the key filters', () => {
  const record = async (i: number): Promise<WriteRecord> => ({
    k: 'k:' + (await sha256Hex(`key ${i}`)),
    at: 1_000 + i,
    r: {},
  });

  it('never miss a key they hold, pass few they do not, and grow with a busy day', async () => {
    const held = await Promise.all(Array.from({ length: 2_000 }, (_, i) => record(i)));
    let filters: ReturnType<typeof addToFilters> = [];
    for (let i = 0; i < held.length; i += 50)
      filters = addToFilters(filters, held.slice(i, i + 50), 2_000);
    const bits = filters.map((f) => atob(f.b).length * 8);
    expect(bits).toEqual([...bits].sort((a, b) => a - b)); // each as large as the one before, or larger
    expect(filters.length).toBeLessThanOrEqual(6);
    for (const f of filters) expect(f.n).toBeLessThanOrEqual(capacityOf(atob(f.b).length * 8));
    for (const r of held) expect(filters.some((f) => filterHas(f, r.k))).toBe(true);
    const others = await Promise.all(Array.from({ length: 3_000 }, (_, i) => record(100_000 + i)));
    const passed = others.filter((r) => filters.some((f) => filterHas(f, r.k))).length;
    expect(passed / others.length).toBeLessThan(0.04);
  });

  it('stay sized to a day of keys at a steady 34 keys a day (found by review)', async () => {
    let kf: ReturnType<typeof addToFilters> = [];
    let now = 20_000 * RETENTION_MS;
    let i = 0;
    for (let half = 0; half < 400; half++) {
      now += RETENTION_MS / 2;
      const records = await Promise.all(Array.from({ length: 17 }, () => record(i++)));
      kf = addToFilters(
        kf,
        records.map((r) => ({ ...r, at: now - 1_000 })),
        now,
      );
    }
    expect(JSON.stringify(kf).length).toBeLessThan(2_000);
  });

  it('sweep the days before the day before yesterday at most once a day', () => {
    const now = 20_000 * RETENTION_MS + 5_000;
    expect(sweepDue(undefined, now)).toEqual({ to: 19_998 });
    expect(sweepDue({ ks: 19_998 }, now)).toBeUndefined();
    expect(sweepDue({ ks: 19_995 }, now)).toEqual({ from: 19_995, to: 19_998 });
  });

  it('store out every keyed record but the newest 8 once there are more than 24; unkeyed ones stay', async () => {
    const keyed = await Promise.all(Array.from({ length: 25 }, (_, i) => record(i)));
    const unkeyed = Array.from({ length: 5 }, (_, i) => ({ k: `w:${i}`, at: 1_000 + i, r: {} }));
    const { kept, store, leaving, ahead } = storeOut([...unkeyed, ...keyed], [], 2_000);
    expect(store).toEqual(keyed.slice(0, 17));
    expect(leaving).toEqual(store);
    expect(ahead).toEqual([]);
    expect(kept).toEqual([...unkeyed, ...keyed.slice(17)]);
    expect(storeOut([...unkeyed, ...keyed.slice(1)], [], 2_000).store).toEqual([]);
    // Never one of the write's own records (a group commit's), whose receipts are not made yet.
    expect(storeOut(keyed, keyed.slice(0, 20), 2_000).store).toEqual([]);
    expect(storeOut(keyed, keyed.slice(10), 2_000).store).toEqual(keyed.slice(0, 10));
    // Records this process stored already leave without a PUT; a writer that keeps the session stores
    // the others alongside its commit (they stay for now), until the object holds twice 24.
    const storedAlready = new Set(keyed.slice(0, 5));
    const warm = storeOut(keyed, [], 2_000, (r) => storedAlready.has(r), true);
    expect(warm.leaving).toEqual(keyed.slice(0, 5));
    expect(warm.store).toEqual([]);
    // The rest stay, to go in the next batch's pack.
    expect(warm.ahead).toEqual([]);
    expect(warm.kept).toEqual(keyed.slice(5));
    expect(storeOut(keyed, [], 2_000, () => false, true).ahead).toEqual(keyed.slice(0, 17));
    // While a PUT stores some, none more: the next batch goes in one pack.
    const inFlight = (r: WriteRecord) => r === keyed[0];
    expect(storeOut(keyed, [], 2_000, () => false, true, inFlight).ahead).toEqual([]);
    expect(storeOut(keyed, [], 2_000, () => false, false, inFlight).store).toEqual(
      keyed.slice(0, 17),
    );
    const cold = storeOut(keyed, [], 2_000, (r) => storedAlready.has(r), false);
    expect([cold.leaving, cold.store, cold.ahead]).toEqual([
      keyed.slice(0, 17),
      keyed.slice(5, 17),
      [],
    ]);
    const fifty = await Promise.all(Array.from({ length: 49 }, (_, i) => record(i)));
    expect(storeOut(fifty, [], 2_000, () => false, true).store).toEqual(fifty.slice(0, 32));
    // Past the retention window a record leaves without being stored.
    const late = storeOut(keyed, [], 1_000 + RETENTION_MS + 3);
    expect([late.leaving, late.store]).toEqual([keyed.slice(4, 17), keyed.slice(4, 17)]);
    expect(late.kept).toEqual(keyed.slice(17));
    // An older Satchel's object with many keyed records: at most 32 leave per write, the oldest first.
    const many = await Promise.all(Array.from({ length: 500 }, (_, i) => record(i)));
    const first = storeOut(many, [], 2_000);
    expect(first.store).toEqual(many.slice(0, 32));
    expect(first.kept).toEqual(many.slice(32));
  });

  it('keep within a byte budget: past it, only the newest that fit in half of it stay', async () => {
    const keyed = await Promise.all(Array.from({ length: 6 }, (_, i) => record(i)));
    const size = JSON.stringify(keyed[0]).length + 1;
    // Within the budget (or without one) nothing leaves below 24 records.
    expect(storeOut(keyed, [], 2_000, undefined, false, undefined, 6 * size + 6).store).toEqual([]);
    expect(storeOut(keyed, [], 2_000).store).toEqual([]);
    // Past it: the newest two fit in half of a budget of five records; the four older ones leave.
    const over = storeOut(keyed, [], 2_000, undefined, false, undefined, 5 * size);
    expect(over.store).toEqual(keyed.slice(0, 4));
    expect(over.kept).toEqual(keyed.slice(4));
    // Never the write's own, even when they alone are over it.
    const own = storeOut(keyed, keyed.slice(2), 2_000, undefined, false, undefined, size);
    expect(own.store).toEqual(keyed.slice(0, 2));
    expect(own.kept).toEqual(keyed.slice(2));
    // A warm writer stores them after its commit while what stays is within twice the budget.
    const warm = storeOut(keyed, [], 2_000, () => false, true, undefined, 5 * size);
    expect([warm.store, warm.ahead]).toEqual([[], keyed.slice(0, 4)]);
    expect(warm.kept).toEqual(keyed);
    const tight = storeOut(keyed, [], 2_000, () => false, true, undefined, 2 * size);
    expect([tight.store, tight.ahead]).toEqual([keyed.slice(0, 5), []]);
  });
});

// Found by review of the first version (each failed there): a group commit storing its own members'
// records before their receipts were made, a key used again after the window answering its first use,
// and a delete racing a writer leaving its stored-out records (one of them a continue's reply) behind.
describe('keyed records stored out (review)', () => {
  const say = (t: string) => ({ messages: [{ role: 'user' as const, content: t }] });

  it('a group commit never stores out its own members records', async () => {
    const objects = tempLocalStore('keyed-review');
    const store = open(objects);
    const id = `group-${Date.now()}`;
    await store.create(ns, { id, task: 'group', messages: [] });
    // Queued behind the first: groups of up to 16 keyed appends, one commit each.
    const first = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store.append(ns, id, say(`g-${i}`), undefined, { idempotencyKey: `g-${i}` }),
      ),
    );
    await store.settled();
    const fresh = open(objects);
    for (let i = 0; i < 40; i++) {
      const again = await fresh.append(ns, id, say(`g-${i}`), undefined, {
        idempotencyKey: `g-${i}`,
      });
      expect(again.replayed).toBe(true);
      expect(again.receipt.revision, `g-${i}`).toBe(first[i]!.receipt.revision);
    }
  });

  it('a key used again after the window answers its second use, not its first', async () => {
    const objects = tempLocalStore('keyed-review');
    let clock = Date.now();
    const store = open(objects, () => clock);
    const id = `reuse-${Date.now()}`;
    await store.create(ns, { id, task: 'reuse', messages: [] });
    const fill = async (tag: string) => {
      for (let i = 0; i < 30; i++)
        await store.append(ns, id, say(`${tag}-${i}`), undefined, {
          idempotencyKey: `${tag}-${i}`,
        });
    };
    await store.append(ns, id, say('first body'), undefined, { idempotencyKey: 'reused' });
    await fill('a'); // 'reused' is stored out
    clock += RETENTION_MS + 60_000; // the first use is forgotten
    const second = await store.append(ns, id, say('second body'), undefined, {
      idempotencyKey: 'reused',
    });
    expect(second.replayed).toBe(false);
    await fill('b'); // its record leaves the object too
    const retry = store.append(ns, id, say('second body'), undefined, { idempotencyKey: 'reused' });
    await expect(retry).resolves.toMatchObject({
      replayed: true,
      receipt: { revision: second.receipt.revision },
    });
    // Three days on, the earlier days are swept by the next write that stores records out.
    clock += 3 * RETENTION_MS;
    await fill('c');
    // The sweep runs in the background of the write that stored records out.
    const days = async () =>
      new Set((await listAll(objects, keys.keyRecords(ns, id))).map((k) => k.split('/').at(-2)))
        .size;
    await eventually(async () => (await days()) === 1);
    expect(await days()).toBe(1);
  });

  it('a key used again after the window, its first record still in the object, is a new write', async () => {
    let clock = Date.now();
    const store = open(tempLocalStore('keyed-review'), () => clock);
    const id = `reuse-in-${Date.now()}`;
    await store.create(ns, { id, task: 'reuse', messages: [] });
    const first = await store.append(ns, id, say('same'), undefined, { idempotencyKey: 'daily' });
    clock += RETENTION_MS + 60_000;
    const other = await store.append(ns, id, say('other'), undefined, { idempotencyKey: 'daily' });
    expect(other.replayed).toBe(false);
    clock += RETENTION_MS + 60_000;
    const again = await store.append(ns, id, say('same'), undefined, { idempotencyKey: 'daily' });
    expect(again.replayed).toBe(false);
    expect(again.receipt.revision).toBe(first.receipt.revision + 2);
  });

  it('records stored by an attempt that must read the whole session go when the re-read finds it deleted', async () => {
    // Found by review of packs: the pack's name joined the run only after the marker landed, and the
    // re-read did not wait for it, so a delete in between left the pack behind.
    const objects = tempLocalStore('keyed-review');
    const split = (store: ObjectStore, knownValues?: string[]) =>
      new SessionStore(store, {
        pipeline: defaultPipeline({
          maxSessionBytes: 8 << 20,
          ...(knownValues ? { knownValues } : {}),
        }),
        splitBytes: 1024,
        segmentBytes: 256,
      });
    /** Holds the marker's PUT until `release`; deletes the session on the second read of its object. */
    class Gated extends PassThrough {
      release = () => {};
      private readonly gate = new Promise<void>((r) => (this.release = r));
      private reads = 0;
      override async get(key: string) {
        if (key.includes('/sessions/') && ++this.reads === 2) await deleter.delete(ns, id);
        return this.inner.get(key);
      }
      /** Every PUT sent through it, to wait for those still on their way. */
      readonly sent: Promise<unknown>[] = [];
      override put(key: string, body: Uint8Array, options?: PutOptions) {
        const put = (async () => {
          if (key.includes('/m/p/')) await this.gate;
          return this.inner.put(key, body, options);
        })();
        this.sent.push(put);
        return put;
      }
    }
    const gated = new Gated(objects);
    const id = `reread-${Date.now()}`;
    const setup = split(objects);
    const deleter = split(objects);
    await setup.create(ns, { id, task: 'reread', messages: [say('x'.repeat(1500)).messages[0]!] });
    for (let i = 0; i < KEYED_PUSH_AT; i++)
      await setup.append(ns, id, say(`m-${i}`), undefined, { idempotencyKey: `m-${i}` });
    await setup.settled();
    // Another rules version (a known value added) and a request with secret values of its own
    // (Satchel-Secrets): the write must rescan the whole session.
    const cold = split(gated, ['another-known-value']);
    const answer = cold
      .append(ns, id, say('late'), undefined, {
        idempotencyKey: 'late',
        knownValues: ['a-secret-value'],
      })
      .catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 200));
    gated.release();
    await expect(answer).resolves.toMatchObject({ kind: 'not_found' });
    await Promise.all([cold.settled(), deleter.settled()]);
    // What the writer sends once its marker landed (the PUTs it held back), and the deletes after them.
    await new Promise((r) => setTimeout(r, 100));
    await Promise.allSettled(gated.sent);
    await cold.settled();
    expect(await objects.get(keys.session(ns, id))).toBeNull();
    expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
  });

  /** A session with `n` keyed records, all still in its object: every key-record PUT of its writer failed. */
  async function keptIn(objects: ObjectStore, id: string, n: number): Promise<void> {
    class FailK extends PassThrough {
      override async put(key: string, body: Uint8Array, options?: PutOptions) {
        if (key.includes('/k/')) throw new StorageUnavailableError('no key records');
        return this.inner.put(key, body, options);
      }
    }
    const a = open(new FailK(objects));
    await a.create(ns, { id, task: 'kept in', messages: [] });
    for (let i = 0; i < n; i++)
      await a.append(ns, id, say(`m-${i}`), undefined, { idempotencyKey: `m-${i}` });
    await a.settled();
    expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
  }

  it('a write storing two packs, one refused, leaves neither past a racing delete (found by review)', async () => {
    // The records leaving in one write (45 in the object: 32 leave) fill two packs. The first PUT fails
    // at once; the check after the write must wait for the second, which lands after the delete.
    const objects = tempLocalStore('keyed-review');
    const id = `two-${Date.now()}`;
    await keptIn(objects, id, 45);
    const deleter = open(objects);
    let deleting: Promise<void> | undefined;
    let kPuts = 0;
    class Straggle extends PassThrough {
      override async put(key: string, body: Uint8Array, options?: PutOptions) {
        if (!key.includes('/k/')) return this.inner.put(key, body, options);
        if (kPuts++ === 0) throw new StorageUnavailableError('pack refused');
        await (deleting ??= deleter.delete(ns, id));
        await new Promise((r) => setTimeout(r, 200));
        return this.inner.put(key, body, options);
      }
    }
    const tasks: Promise<unknown>[] = [];
    const b = open(new Straggle(objects));
    const answer = await b
      .append(ns, id, say('late'), undefined, {
        idempotencyKey: 'late',
        schedule: (p) => void tasks.push(p),
      })
      .catch((err: unknown) => err);
    expect(StorageUnavailableError.is(answer)).toBe(true);
    await Promise.all([b.settled(), deleter.settled(), Promise.allSettled(tasks)]);
    expect(kPuts).toBe(2);
    expect(await objects.get(keys.session(ns, id))).toBeNull();
    expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
  });

  for (const how of ['refused', 'answer lost, the re-read refused'] as const)
    it(`a write whose commit fails (${how}) on a live session keeps its packs; every key replays`, async () => {
      // The check after a write that did not commit deletes nothing while the session lives: the same
      // process drops the records it stored from the object in its next write (found by review).
      const objects = tempLocalStore('keyed-review');
      const id = `live-${how.length}-${Date.now()}`;
      await keptIn(objects, id, 30);
      let armed = true;
      let failGet = false;
      class FailCommit extends PassThrough {
        override async get(key: string) {
          if (failGet && key.includes('/sessions/')) {
            failGet = false;
            throw new StorageUnavailableError('re-read refused');
          }
          return this.inner.get(key);
        }
        override async put(key: string, body: Uint8Array, options?: PutOptions) {
          if (!(armed && options?.ifMatch && key.includes('/sessions/')))
            return this.inner.put(key, body, options);
          armed = false;
          if (how === 'refused') throw new StorageUnavailableError('commit refused');
          await this.inner.put(key, body, options);
          failGet = true;
          throw new StorageUnavailableError('lost', undefined, { mayHaveLanded: true });
        }
      }
      const tasks: Promise<unknown>[] = [];
      const schedule = (p: Promise<unknown>) => void tasks.push(p);
      const c = open(new FailCommit(objects));
      const first = await c
        .append(ns, id, say('x'), undefined, { idempotencyKey: 'x', schedule })
        .catch((err: unknown) => err);
      // A commit whose answer was lost may have been stored: said so (review s53c).
      if (how === 'refused') expect(StorageUnavailableError.is(first)).toBe(true);
      else expect(SatchelError.is(first, 'unavailable')).toBe(true);
      await Promise.all([c.settled(), Promise.allSettled(tasks)]);
      expect((await listAll(objects, keys.keyRecords(ns, id))).length).toBeGreaterThan(0);
      await c.append(ns, id, say('y'), undefined, { idempotencyKey: 'y' });
      await c.append(ns, id, say('x'), undefined, { idempotencyKey: 'x' });
      await c.settled();
      const fresh = open(objects);
      for (let i = 0; i < 30; i++) {
        const again = await fresh.append(ns, id, say(`m-${i}`), undefined, {
          idempotencyKey: `m-${i}`,
        });
        expect(again.replayed, `m-${i}`).toBe(true);
      }
      expect((await stored(objects, id)).messages.filter((m) => m.content === 'x')).toHaveLength(1);
    });

  for (const how of ['its commit PUT fails', 'the cap refuses it'] as const)
    it(`a write that stores records out and ends in an error (${how}) leaves none past a racing delete`, async () => {
      // Found by review of packs: only a re-read or a commit after the pack's PUT showed the session alive.
      const objects = tempLocalStore('keyed-review');
      const a = open(objects);
      const id = `err-${how.length}-${Date.now()}`;
      await a.create(ns, { id, task: 'error race', messages: [] });
      for (let i = 0; i < 24; i++)
        await a.append(ns, id, say(`e-${i}`), undefined, { idempotencyKey: `e-${i}` });
      const deleter = open(objects);
      let deleting: Promise<void> | undefined;
      // The pack's PUT reaches storage just after another process's delete has answered; the commit's
      // PUT, if it comes to it, fails before storage takes it.
      class Late extends PassThrough {
        override async put(key: string, body: Uint8Array, options?: PutOptions) {
          if (key.includes('/k/')) await (deleting ??= deleter.delete(ns, id));
          if (key.includes('/sessions/') && options?.ifMatch)
            throw new StorageUnavailableError('injected: the commit did not reach storage');
          return this.inner.put(key, body, options);
        }
      }
      const b = new SessionStore(new Late(objects), {
        pipeline: defaultPipeline({
          maxSessionBytes: how === 'the cap refuses it' ? 32 << 10 : 8 << 20,
        }),
      });
      const big = how === 'the cap refuses it' ? 'x'.repeat(40 << 10) : 'late';
      const tasks: Promise<unknown>[] = [];
      const answer = await b
        .append(ns, id, say(big), undefined, {
          idempotencyKey: 'late',
          schedule: (p) => void tasks.push(p),
        })
        .catch((err: unknown) => err);
      if (how === 'the cap refuses it') expect(answer).toMatchObject({ kind: 'too_large' });
      else expect(StorageUnavailableError.is(answer)).toBe(true);
      await Promise.all([b.settled(), deleter.settled(), Promise.allSettled(tasks)]);
      expect(deleting).toBeDefined();
      expect(await objects.get(keys.session(ns, id))).toBeNull();
      expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
    });

  it('a writer in another process that stores records out while a delete runs leaves none', async () => {
    const objects = tempLocalStore('keyed-review');
    const a = open(objects);
    const id = `del-${Date.now()}`;
    await a.create(ns, { id, task: 'delete race', messages: [] });
    // A continue's turn: its record keeps the model's reply.
    await a.append(ns, id, say('the model said: meet at 9'), undefined, {
      idempotencyKey: 'turn#turn',
      op: 'continue',
      receiptExtras: (s) => ({ reply: s.messages.at(-1)?.content }),
    });
    for (let i = 1; i < 24; i++)
      await a.append(ns, id, say(`d-${i}`), undefined, { idempotencyKey: `d-${i}` });
    const deleter = open(objects);
    let deleting: Promise<void> | undefined;
    // Process B's key-record PUTs reach storage just after process D's delete has answered.
    class Late extends PassThrough {
      override async put(key: string, body: Uint8Array, options?: PutOptions) {
        if (key.includes('/k/')) await (deleting ??= deleter.delete(ns, id));
        return this.inner.put(key, body, options);
      }
    }
    const tasks: Promise<unknown>[] = [];
    const b = open(new Late(objects));
    await b
      .append(ns, id, say('late'), undefined, {
        idempotencyKey: 'late',
        schedule: (p) => void tasks.push(p),
      })
      .catch(() => undefined);
    await Promise.all([b.settled(), deleter.settled(), Promise.allSettled(tasks)]);
    expect(await objects.get(keys.session(ns, id))).toBeNull();
    expect(await listAll(objects, keys.keyRecords(ns, id))).toEqual([]);
  });
});
