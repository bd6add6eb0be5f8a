// The 2026-12-04 tokenizer gives documents other tokens (CJK unigrams, Thai/Lao/Khmer/Myanmar words, ı → i,
// ß → ss), so a lexical index stored before it must not be trusted: its segments lack those tokens, and a
// query for "猫" would answer [] from a complete-looking index. The lexical format version (LEX_V in
// lib/search/segment.ts) went from 1 to 2: an older segment or record does not decode, so the query is
// answered from the session objects and the index is rebuilt. Before the bump an old segment was read as is.
import { expect, it } from 'vitest';
import { LocalEmbedder } from '../../lib/search/embed.js';
import {
  CorruptIndexError,
  decodeLexRecord,
  decodeLexSegment,
  encodeLexRecord,
  encodeLexSegment,
} from '../../lib/search/segment.js';
import { listAll } from '../../lib/storage/prefix.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { searchProcess } from '../support/search-process.js';

/** The bytes with the format version of their JSON (a record's, or a segment's header) set to `v`. */
function asVersion1(bytes: Uint8Array, v = 1): Uint8Array {
  const out = Buffer.from(bytes);
  const at = out.indexOf('{"v":');
  expect(at).toBeGreaterThanOrEqual(0);
  out.write(String(v), at + 5, 'latin1');
  return new Uint8Array(out);
}

it('a lexical index stored by the older tokenizer is not trusted, and is rebuilt', async () => {
  const objects = new MemoryStore();
  const a = searchProcess(objects);
  const { session } = await a.sessions.create(
    'ns',
    { task: '宠物', messages: [{ role: 'user', content: '我的猫很可爱' }] },
    { schedule: a.schedule },
  );
  await a.settle();
  expect((await a.engine.search('ns', '猫', 5)).map((h) => h.id)).toEqual([session.id]);
  await a.engine.lexical.compact('ns');
  await a.settle();
  const lex = (await listAll(objects, 'ns/ns/x/g/')).filter((k) => k.endsWith('.lex'));
  expect(lex.length).toBeGreaterThan(0);
  // What the older tokenizer stored: no unigram inside a longer CJK run, format version 1.
  for (const key of lex) {
    const seg = decodeLexSegment((await objects.get(key))!.body);
    const docs = seg.all().map((doc, i) => ({
      key: seg.docs[i]!,
      doc: { len: doc.len, tf: new Map([...doc.tf].filter(([t]) => [...t].length > 1)) },
    }));
    await objects.put(key, asVersion1(encodeLexSegment(docs)));
  }

  const b = searchProcess(objects); // another process, after the deploy
  const hits = await b.engine.search('ns', '猫', 5, { schedule: b.schedule });
  expect(hits.map((h) => h.id)).toEqual([session.id]);
  await b.settle(2);
  // The rebuild wrote segments in the current format, with the new tokens.
  const rebuilt = (await listAll(objects, 'ns/ns/x/g/')).filter(
    (k) => k.endsWith('.lex') && !lex.includes(k),
  );
  expect(rebuilt.length).toBeGreaterThan(0);
  for (const key of rebuilt)
    expect(decodeLexSegment((await objects.get(key))!.body).postingsOf('猫')).not.toBeNull();
});

it('records and segments of format versions 1 to 4 do not decode', () => {
  // 3 (2026-12-05): identifiers' whole forms stemmed, plural acronyms whole, Indic and Thai vowel signs
  // kept (a Hindi word was indexed as its consonants alone). 4: a plural acronym is its singular.
  // 5 (2026-12-06): ー is part of a CJK run (a version 4 index holds サ, ー, バ for サーバー).
  const key = { id: 's', c: 1, r: 1 };
  const doc = { len: 1, tf: new Map([['x', 1]]) };
  expect(decodeLexRecord(encodeLexRecord(key, doc)).doc.tf.get('x')).toBe(1);
  for (const v of [1, 2, 3, 4]) {
    expect(() => decodeLexRecord(asVersion1(encodeLexRecord(key, doc), v))).toThrow(
      CorruptIndexError,
    );
    expect(() => decodeLexSegment(asVersion1(encodeLexSegment([{ key, doc }]), v))).toThrow(
      CorruptIndexError,
    );
  }
});

it("the built-in embedder's space changed with the tokens it hashes", () => {
  // Its vectors are hashed from the same tokens: stored under the old space name, a Thai session's vector
  // would be compared with query vectors of other features until the session was written again.
  expect(new LocalEmbedder().space()).toBe('local/hash-v5/256');
});
