import { describe, expect, it } from 'vitest';
import type { StoredSession, WriteRecord } from '../../lib/model/session.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import {
  keepWrites,
  pruneMark,
  recordsCover,
  unkeyedKept,
} from '../../lib/sessions/write-records.js';
import { Batcher } from '../../lib/storage/concurrency.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { text } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';

const rec = (i: number, keyed = false): WriteRecord => ({
  k: (keyed ? 'k:' : 'w:') + String(i).padStart(4, '0'),
  at: 1_000 + i,
  r: { revision: i },
});
const session = (writes: WriteRecord[], extra: Record<string, unknown> = {}): StoredSession =>
  ({ revision: writes.length, satchel: { writes, ...extra } }) as unknown as StoredSession;

describe('write records: what a write keeps and what it may have lost', () => {
  it('an object without a mark tells pruning by its count, as Satchels before the mark did', () => {
    const few = Array.from({ length: 14 }, (_, i) => rec(i + 1));
    expect(pruneMark(session(few).satchel)).toBeNull();
    expect(unkeyedKept(session(few).satchel, 1)).toBe(true);
    expect(recordsCover(session(few).satchel, 0)).toBe(true);
    // 15 kept: anything older than the oldest kept may be gone.
    const full = Array.from({ length: 15 }, (_, i) => rec(i + 5));
    expect(pruneMark(session(full).satchel)).toEqual([4, 1_004]);
    expect(unkeyedKept(session(full).satchel, 4)).toBe(false);
    expect(unkeyedKept(session(full).satchel, 5)).toBe(true);
    expect(recordsCover(session(full).satchel, 1_004)).toBe(false);
    expect(recordsCover(session(full).satchel, 1_005)).toBe(true);
  });

  it('pruning by count raises the mark, and settled records leave without raising it', () => {
    let cur = session([rec(1)]);
    for (let i = 2; i <= 20; i++) {
      const { writes, wp } = keepWrites(cur, [rec(i)], 5_000, () => false);
      cur = session(writes, wp ? { wp } : {});
      cur.revision = i;
    }
    expect(cur.satchel!.writes.map((w) => w.r.revision)).toEqual(
      Array.from({ length: 16 }, (_, i) => i + 5),
    );
    expect((cur.satchel as { wp?: unknown }).wp).toEqual([4, 1_004]);
    // This process's settled records leave: the mark stays, so revision 4 is still "may be gone".
    const settled = new Set(cur.satchel!.writes.slice(0, 15).map((w) => w.k));
    const { writes, wp } = keepWrites(cur, [rec(21)], 5_000, (k) => settled.has(k));
    expect(writes.map((w) => w.r.revision)).toEqual([20, 21]);
    expect(wp).toEqual([4, 1_004]);
    const after = session(writes, { wp });
    expect(unkeyedKept(after.satchel, 4)).toBe(false);
    expect(unkeyedKept(after.satchel, 5)).toBe(true);
    expect(recordsCover(after.satchel, 1_004)).toBe(false);
    expect(recordsCover(after.satchel, 1_005)).toBe(true);
  });

  it('a count-inferred mark is stored before drops take the count under 15', () => {
    const full = session(Array.from({ length: 15 }, (_, i) => rec(i + 5)));
    const { writes, wp } = keepWrites(full, [rec(20)], 5_000, (k) => k !== 'w:0019');
    expect(writes.map((w) => w.r.revision)).toEqual([19, 20]);
    expect(wp).toEqual([4, 1_004]);
  });

  it('keyed records never leave as settled ones do', () => {
    const cur = session([rec(1, true), rec(2)]);
    const { writes } = keepWrites(cur, [rec(3)], 5_000, () => true);
    expect(writes.map((w) => w.k)).toEqual(['k:0001', 'w:0003']);
  });
});

describe('a process drops its own records once their log and audit records are stored', () => {
  const ns = 'default';
  const user = (content: string) => ({ role: 'user' as const, content });
  const stored = async (objects: MemoryStore) =>
    JSON.parse(text((await objects.get('ns/default/sessions/s.json'))!.body)).satchel.writes
      .length as number;

  it('keeps one or two where it kept 16', async () => {
    const objects = new MemoryStore();
    const store = new SessionStore(objects, { audit: new AuditLog(objects, (s) => s) });
    await store.create(ns, { id: 's', task: 't' });
    for (let i = 0; i < 20; i++) {
      await store.append(ns, 's', { messages: [user(`m${i}`)] }, undefined);
      await store.settled();
    }
    expect(await stored(objects)).toBe(1);
  });

  it('keeps every record whose audit record could not be stored (the compactor restores from it)', async () => {
    class NoAudit extends PassThrough {
      override put(...args: Parameters<MemoryStore['put']>) {
        if (args[0].includes('/audit/')) return Promise.reject(new Error('audit refused'));
        return this.inner.put(...args);
      }
    }
    const objects = new MemoryStore();
    const store = new SessionStore(new NoAudit(objects), {
      audit: new AuditLog(new NoAudit(objects), (s) => s),
      onError: () => undefined,
    });
    await store.create(ns, { id: 's', task: 't' });
    for (let i = 0; i < 10; i++) {
      await store.append(ns, 's', { messages: [user(`m${i}`)] }, undefined);
      await store.settled();
    }
    expect(await stored(objects)).toBe(11);
  });
});

describe('Batcher', () => {
  it('runs a batch once it holds fullAt items, without waiting for its linger', async () => {
    const runs: number[][] = [];
    const b = new Batcher<number>(async (_, items) => void runs.push([...items]), 60_000, 3);
    const first = [1, 2, 3].map((i) => b.add('k', [i]));
    await Promise.all(first);
    expect(runs).toEqual([[1, 2, 3]]);
    const fourth = b.add('k', [4]);
    let done = false;
    void fourth.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false); // one item lingers
    await b.flush();
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });
});
