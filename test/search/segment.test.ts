import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extendLexDoc, lexDocOf, type DocKey, type LexDoc } from '../../lib/search/docs.js';
import {
  CorruptIndexError,
  decodeF32,
  decodeLexRecord,
  decodeLexSegment,
  encodeF32,
  encodeLexRecord,
  encodeLexSegment,
} from '../../lib/search/segment.js';
import type { Message } from '../../lib/model/session.js';

const term = fc.stringMatching(/^[a-z0-9_\u00e9\u6771]{1,12}$/);
const lexDoc = fc
  .dictionary(term, fc.integer({ min: 1, max: 100_000 }), { maxKeys: 40 })
  .map((o): LexDoc => {
    const tf = new Map(Object.entries(o));
    return { len: [...tf.values()].reduce((a, b) => a + b, 0), tf };
  });
const docKey = (i: number): DocKey => ({ id: `s${i}`, c: 1_790_000_000_000 + i, r: 1 + (i % 7) });

describe('search index formats', () => {
  it('a lexical segment gives back every document, and each term its postings', () => {
    fc.assert(
      fc.property(fc.array(lexDoc, { maxLength: 30 }), (docs) => {
        const entries = docs.map((doc, i) => ({ key: docKey(i), doc }));
        const seg = decodeLexSegment(encodeLexSegment(entries));
        expect(seg.docs).toEqual(entries.map((e) => e.key));
        expect(seg.all()).toEqual(docs);
        for (const [i, doc] of docs.entries()) {
          for (const [t, n] of doc.tf) {
            const p = seg.postingsOf(t)!;
            const k = [...p.docs].indexOf(i);
            expect(p.tfs[k]).toBe(n);
          }
        }
        expect(seg.postingsOf('not-a-term-anywhere!')).toBeNull();
      }),
      { numRuns: 60 },
    );
  });

  it('records and float32 rows round-trip; damaged bytes are CorruptIndexError, never a crash', () => {
    const doc = lexDocOf({
      task: 'café ERR_OSSL',
      messages: [{ role: 'user', content: '東京 snake_case' }],
    });
    expect(decodeLexRecord(encodeLexRecord(docKey(3), doc))).toEqual({ key: docKey(3), doc });
    const rows = [Float32Array.from([0.5, -1.25, 3]), Float32Array.from([0, 1e-7, -0])];
    expect([...decodeF32(encodeF32(rows, 3), 3)]).toEqual([
      0.5,
      -1.25,
      3,
      0,
      Math.fround(1e-7),
      -0,
    ]);
    const good = encodeLexSegment([{ key: docKey(1), doc }]);
    for (const bad of [
      new Uint8Array(0),
      new Uint8Array([1, 2, 3]),
      good.slice(0, good.length - 1),
      new TextEncoder().encode('{"v":1}'),
    ]) {
      expect(() => decodeLexSegment(bad)).toThrow(CorruptIndexError);
    }
    expect(() => decodeLexRecord(new TextEncoder().encode('{"v":2}'))).toThrow(CorruptIndexError);
    expect(() => decodeF32(new Uint8Array(5), 3)).toThrow(CorruptIndexError);
  });

  it('an append extends the previous document exactly as re-reading the whole session would', () => {
    const message = fc.record({
      role: fc.constantFrom('system', 'user', 'assistant', 'tool') as fc.Arbitrary<Message['role']>,
      content: fc.string({ maxLength: 80 }),
    });
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }),
        fc.array(message, { maxLength: 8 }),
        fc.array(message, { minLength: 1, maxLength: 5 }),
        (task, before, added) => {
          const whole = lexDocOf({ task, messages: [...before, ...added] as Message[] });
          expect(
            extendLexDoc(lexDocOf({ task, messages: before as Message[] }), added as Message[]),
          ).toEqual(whole);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('ranking over segments', () => {
  it('BM25 over segments and fresh documents equals the in-memory reference, top-k included', async () => {
    const { Bm25Index } = await import('../support/bm25-reference.js');
    const { rankLexical } = await import('../../lib/search/engine.js');
    const vocab = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta'];
    const doc = fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 25 }),
        fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 30 }),
        (docs, query, k) => {
          const reference = new Bm25Index();
          const entries = docs.map((tokens, i) => {
            reference.add(`s${i}`, tokens);
            const tf = new Map<string, number>();
            for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
            return { key: docKey(i), doc: { len: tokens.length, tf } };
          });
          // The first half in two segments, the rest "fresh" (records), as a real index holds them.
          const half = Math.ceil(entries.length / 2);
          const segA = decodeLexSegment(encodeLexSegment(entries.slice(0, half / 2)));
          const segB = decodeLexSegment(encodeLexSegment(entries.slice(half / 2, half)));
          const live = new Map<string, { si: number; di: number } | { doc: LexDoc }>();
          entries.forEach((e, i) => {
            if (i < Math.floor(half / 2)) live.set(e.key.id, { si: 0, di: i });
            else if (i < half) live.set(e.key.id, { si: 1, di: i - Math.floor(half / 2) });
            else live.set(e.key.id, { doc: e.doc });
          });
          const ours = rankLexical({ segments: [segA, segB], live, missing: [] }, query, k);
          const theirs = reference.search(query, k);
          expect(ours.map((h) => h.id)).toEqual(theirs.map((h) => h.id));
          ours.forEach((h, i) => expect(h.score).toBeCloseTo(theirs[i]!.score, 9));
        },
      ),
      { numRuns: 150 },
    );
  });
});
