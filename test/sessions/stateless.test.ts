// Issue 13, item 3: "a stateless function that appends must not need to download the session". A process
// that does not hold a large session's parts appends on the delta alone (a partial copy: the messages before
// the parts' end are absent), and reads the whole session only when the write needs it: the size cap's
// measured path, a rescan under new rules, an operation other than an append, a new base. Every case runs on
// a local folder and on radosgw, and checks what was read as well as what a new reader finds.
import { describe, expect, it } from 'vitest';
import {
  concat,
  decodeStored,
  encodedLength,
  joinArrays,
  lazyJoin,
  publicChunks,
  publicSession,
} from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionCache } from '../../lib/sessions/cache.js';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import type { Message, StoredSession } from '../../lib/model/session.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { openTestS3 } from '../support/s3.js';
import { eventually } from '../support/eventually.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'sl';
const SPLIT = 16 * 1024;
const SEG = 2048;

/** Records the keys read and written. */
class Reads implements ObjectStore {
  readonly name: string;
  gets: string[] = [];
  puts: string[] = [];
  constructor(readonly inner: ObjectStore) {
    this.name = inner.name;
  }
  get(key: string) {
    this.gets.push(key);
    return this.inner.get(key);
  }
  put(key: string, body: Uint8Array, options?: PutOptions) {
    this.puts.push(key);
    return this.inner.put(key, body, options);
  }
  delete(k: string | string[]) {
    return this.inner.delete(k);
  }
  list(prefix: string, options?: { cursor?: string; limit?: number }) {
    return this.inner.list(prefix, options);
  }
  /** The parts (base, segments) read since the last reset. */
  partsRead(id: string): string[] {
    return this.gets.filter((k) => k.startsWith(keys.parts(ns, id)));
  }
  reset(): void {
    this.gets = [];
    this.puts = [];
  }
}

function open(
  objects: ObjectStore,
  options: SessionStoreOptions & { maxSessionBytes?: number; knownValues?: string[] } = {},
) {
  const { maxSessionBytes = 4 * 1024 * 1024, knownValues, ...rest } = options;
  const pipeline = defaultPipeline({ maxSessionBytes, ...(knownValues ? { knownValues } : {}) });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    splitBytes: SPLIT,
    segmentBytes: SEG,
    ...rest,
  });
}

const user = (content: string) => ({ role: 'user' as const, content });
const assistant = (content: string) => ({ role: 'assistant' as const, content });
/** A message of about 1 KB whose text starts with `tag`. */
const kb = (tag: string, role: 'user' | 'assistant' = 'user') =>
  (role === 'user' ? user : assistant)(
    `${tag} ${'lorem ipsum dolor sit amet '.repeat(37)}`.slice(0, 1000),
  );
const tags = (messages: { content: string }[]) => messages.map((m) => m.content.split(' ')[0]!);

/** A session of `n` messages of about 1 KB (h0…), then one append, so it is stored as base and delta. */
async function createSplit(store: SessionStore, id: string, n = 30): Promise<void> {
  await store.create(ns, { id, task: 'a large session', messages: [] });
  const history = Array.from({ length: n }, (_, i) => kb(`h${i}`, i % 2 ? 'assistant' : 'user'));
  await store.append(ns, id, { messages: history }, undefined);
  await store.settled();
  const stored = await store.objects.get(keys.session(ns, id));
  expect(decodeStored(stored!.body, id).base).toBeDefined();
}

async function partsClean(objects: ObjectStore, id: string): Promise<boolean> {
  const form = decodeStored((await objects.get(keys.session(ns, id)))!.body, id);
  const names = form.base ? [form.base.key, ...form.segs.map((s) => s.key)] : [];
  const listed = await listAll(objects, keys.parts(ns, id));
  return JSON.stringify(listed.sort()) === JSON.stringify(names.sort());
}

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('stateless')],
  ['radosgw', () => openTestS3('stateless')],
] as const) {
  describe(`appends that read only the delta (${backend})`, () => {
    it('a new process appends without reading the base; merges read only their segments', async () => {
      const objects = new Reads(make());
      await createSplit(open(objects), 's1');
      const baseOf = async () =>
        decodeStored((await objects.inner.get(keys.session(ns, 's1')))!.body, 's1').base!.key;
      let base = await baseOf();
      let segmentReads = 0;
      let folds = 0;
      for (let i = 0; i < 40; i++) {
        objects.reset();
        const store = open(objects); // a stateless function: a new process each time
        const r = await store.append(ns, 's1', { messages: [kb(`s${i}`)] }, undefined);
        await store.settled();
        // The base is read only by the append that stores a new one (the segments outgrew it); a merge
        // reads the segments it rewrites, nothing else.
        const now = await baseOf();
        if (objects.gets.includes(base)) {
          expect(now).not.toBe(base);
          folds++;
        } else segmentReads += objects.partsRead('s1').length;
        base = now;
        expect(r.receipt.revision).toBe(3 + i);
        // turns counts the user messages of the whole session: 15 of the history, and one per append.
        expect(r.receipt.turns).toBe(15 + i + 1);
        expect(r.session.messages).toHaveLength(31 + i);
        expect(r.session.messages.at(-1)!.content.startsWith(`s${i} `)).toBe(true);
      }
      // 40 KB in 2 KiB segments onto a 30 KB base: merges read segments, and one fold read the base.
      expect(segmentReads).toBeGreaterThan(0);
      expect(folds).toBe(1);
      const got = await open(objects).get(ns, 's1');
      expect(tags(got.messages)).toEqual([
        ...Array.from({ length: 30 }, (_, i) => `h${i}`),
        ...Array.from({ length: 40 }, (_, i) => `s${i}`),
      ]);
      expect(got.turns).toBe(55);
      expect(got.revision).toBe(42);
      await eventually(() => partsClean(objects.inner, 's1'));
    });

    it('the same process reads the session whole for a GET, a trim and an If-Match replace after such an append', async () => {
      const objects = new Reads(make());
      await createSplit(open(objects), 's2', 24);
      const store = open(objects);
      await store.append(ns, 's2', { messages: [kb('a0')] }, undefined);
      expect(objects.partsRead('s2')).toEqual([]);
      const got = await store.get(ns, 's2');
      expect(tags(got.messages)).toEqual([...Array.from({ length: 24 }, (_, i) => `h${i}`), 'a0']);
      expect(got.messages.every((m) => typeof m?.content === 'string')).toBe(true);

      const other = open(objects);
      await other.append(ns, 's2', { messages: [kb('a1')] }, undefined);
      const popped = await other.pop(ns, 's2', 1, undefined);
      expect(tags(popped.popped)).toEqual(['a1']);
      await other.append(ns, 's2', { messages: [kb('a1')] }, undefined);
      const trimmed = await other.trim(ns, 's2', 4);
      expect(trimmed.after).toBe(4);
      expect(tags((await open(objects).get(ns, 's2')).messages)).toEqual([
        'h22',
        'h23',
        'a0',
        'a1',
      ]);
      const third = open(objects);
      await third.append(ns, 's2', { messages: [kb('a2')] }, undefined);
      const replaced = await third.replace(
        ns,
        's2',
        { task: 'replaced', messages: [kb('r0'), kb('r1', 'assistant')] },
        trimmed.receipt.revision + 1,
      );
      expect(tags(replaced.session.messages)).toEqual(['r0', 'r1']);
      const fresh = await open(objects).get(ns, 's2');
      expect(tags(fresh.messages)).toEqual(['r0', 'r1']);
      expect(fresh.turns).toBe(1);
    });

    it('an append near the size cap reads the whole session and applies the cap to it', async () => {
      const objects = new Reads(make());
      const limit = 44 * 1024;
      await createSplit(open(objects, { maxSessionBytes: limit }), 's3', 24);
      // Far under the cap: the delta alone.
      const first = open(objects, { maxSessionBytes: limit });
      await first.append(ns, 's3', { messages: [kb('a0')] }, undefined);
      expect(objects.partsRead('s3')).toEqual([]);
      // Within reach of the cap: the whole session is read and measured; the oldest groups go.
      let dropped = 0;
      for (let i = 1; i <= 24 && dropped === 0; i++) {
        objects.reset();
        const store = open(objects, { maxSessionBytes: limit });
        const r = await store.append(ns, 's3', { messages: [kb(`a${i}`)] }, undefined);
        dropped = r.receipt.dropped_groups;
        if (dropped) expect(objects.partsRead('s3').length).toBeGreaterThan(0);
      }
      expect(dropped).toBeGreaterThan(0);
      const got = await open(objects, { maxSessionBytes: limit }).get(ns, 's3');
      expect(got.messages.some((m) => m.content.startsWith('[satchel]'))).toBe(true);
      expect(got.messages.at(-1)!.content.startsWith('a')).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(got))).toBeLessThan(limit);
    });

    it('an append under new redaction settings rescans the whole session, parts included', async () => {
      const objects = new Reads(make());
      const secret = 'hunter2-correct-horse-battery';
      const store = open(objects);
      await store.create(ns, { id: 's4', task: 'secrets', messages: [] });
      const history = Array.from({ length: 24 }, (_, i) => kb(`h${i}`));
      history[3] = user(`h3 the password for the staging box is ${secret}, keep it safe`);
      await store.append(ns, 's4', { messages: history }, undefined);
      await store.append(ns, 's4', { messages: [kb('a0')] }, undefined);
      // A process configured with the value as a known secret: its rules differ, so it scans everything.
      const strict = open(objects, { knownValues: [secret] });
      objects.reset();
      const r = await strict.append(ns, 's4', { messages: [kb('a1')] }, undefined);
      expect(r.receipt.redactions).toBeGreaterThan(0);
      expect(objects.partsRead('s4').length).toBeGreaterThan(0);
      const got = await open(objects).get(ns, 's4');
      expect(JSON.stringify(got)).not.toContain(secret);
      expect(tags(got.messages).slice(-2)).toEqual(['a0', 'a1']);
      // And nothing stored holds it.
      for (const key of await listAll(objects.inner, `ns/${ns}/`)) {
        const body = (await objects.inner.get(key))?.body;
        if (body) expect(Buffer.from(body).toString('utf8')).not.toContain(secret);
      }
    });

    it('stateless writers racing on one session lose nothing and keep each writer order', async () => {
      const objects = new Reads(make());
      await createSplit(open(objects), 's5', 20);
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          for (let i = 0; i < 8; i++) {
            const store = open(objects);
            await store.append(ns, 's5', { messages: [kb(`w${w}-${i}`)] }, undefined);
            await store.settled();
          }
        }),
      );
      const got = await open(objects).get(ns, 's5');
      const all = tags(got.messages);
      for (let w = 0; w < 4; w++)
        expect(all.filter((t) => t.startsWith(`w${w}-`))).toEqual(
          Array.from({ length: 8 }, (_, i) => `w${w}-${i}`),
        );
      expect(all).toHaveLength(20 + 32);
      expect(got.turns).toBe(10 + 32);
      await eventually(() => partsClean(objects.inner, 's5'));
    });
  });
}

describe('lazyJoin', () => {
  it('joins the parts only when the bytes are asked for, into the same bytes joinArrays makes', () => {
    const enc = (v: unknown[]) => new TextEncoder().encode(JSON.stringify(v));
    const first = enc([{ a: 1 }, { b: 2 }]);
    const rest = [enc([]), enc([{ c: 3 }]), enc([{ d: 'x' }, { e: [1, 2] }])];
    const lazy = lazyJoin([1, 2, 3, 4, 5], first, rest);
    // The length is known without the join: a cache weighs it without copying.
    expect(encodedLength(lazy)).toBe(joinArrays(first, ...rest).byteLength);
    const joined = lazy.json;
    expect(new TextDecoder().decode(joined)).toBe(
      JSON.stringify([{ a: 1 }, { b: 2 }, { c: 3 }, { d: 'x' }, { e: [1, 2] }]),
    );
    expect(lazy.json).toBe(joined); // joined once
    expect(encodedLength({ messages: [], json: first })).toBe(first.byteLength);
    // Nothing is copied before then: a part whose bytes cannot be read is not read.
    const unread = { byteLength: 9, subarray: () => expect.fail('read') } as unknown as Uint8Array;
    const pending = lazyJoin([1, 2, 3], first, [unread]);
    expect(encodedLength(pending)).toBe(first.byteLength + 9 - 1);
    expect(() => pending.json).toThrow('read');
  });

  it("a GET's pieces come from a lazy encoding's parts as they are, with the messages after them", () => {
    const enc = (v: unknown[]) => new TextEncoder().encode(JSON.stringify(v));
    const m = Array.from({ length: 6 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }));
    const first = enc(m.slice(0, 2));
    const lazy = lazyJoin(m.slice(0, 5), first, [enc(m.slice(2, 3)), enc(m.slice(3, 5))]);
    const session = {
      id: 'x',
      created_at: '2026-12-01T00:00:00.000Z',
      updated_at: '2026-12-01T00:00:00.000Z',
      model: '',
      provider: '',
      turns: 6,
      task: 't',
      sandbox: false,
      messages: m,
      external_refs: [],
      untrusted_ingested: false,
      episode_untrusted: false,
      episode_taint_tracked: true,
      revision: 3,
    } as StoredSession;
    const chunks = publicChunks(session, { prior: lazy })!;
    // The base's bytes are sent as they came (a view on them, not a copy)...
    expect(chunks.some((c) => c.buffer === first.buffer)).toBe(true);
    // ...and the whole is the session's public JSON.
    const sent = JSON.parse(new TextDecoder().decode(concat(...chunks)));
    expect(sent).toEqual(JSON.parse(JSON.stringify(publicSession(session))));
  });
});

describe('partial copies in the session cache', () => {
  it('weigh the messages they hold, so the cache stays within its budget', () => {
    const budget = 8 * 1024 * 1024;
    const cache = new SessionCache(budget);
    const big = 'x'.repeat(1024 * 1024); // one 1 MiB message just appended
    for (let i = 0; i < 64; i++) {
      const n = 10_000; // a session of 10,000 small messages (~10 MB) in its base, and the big one
      const messages = new Array<Message>(n).concat([{ role: 'tool', content: big }]);
      const session = { id: `s${i}`, messages } as unknown as StoredSession;
      cache.put(`k${i}`, {
        etag: 'e',
        session,
        bytes: 11 * 1024 * 1024,
        base: { key: 'b', revision: 1, messages: n, json: 10 * 1024 * 1024 },
        segs: [],
        held: n,
      });
    }
    let held = 0;
    for (let i = 0; i < 64; i++) if (cache.get(`k${i}`)) held += big.length;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(budget);
  });
});
