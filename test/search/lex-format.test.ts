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
import { olderIndexRead, withVersion } from '../support/search-process.js';

it('a lexical index stored by the older tokenizer is not trusted, and is rebuilt', async () => {
  // What the older tokenizer stored: no unigram inside a longer CJK run, format version 1.
  const read = await olderIndexRead({
    task: '宠物',
    content: '我的猫很可爱',
    older: (t) => [...t].length > 1,
    v: 1,
    query: '猫',
    token: '猫',
  });
  expect(read.hits).toEqual([read.id]);
  // The rebuild wrote segments in the current format, with the new tokens.
  expect(read.rebuilt.length).toBeGreaterThan(0);
  for (const postings of read.rebuilt) expect(postings).not.toBeNull();
});

it('records and segments of format versions 1 to 4 do not decode', () => {
  // 3 (2026-12-05): identifiers' whole forms stemmed, plural acronyms whole, Indic and Thai vowel signs
  // kept (a Hindi word was indexed as its consonants alone). 4: a plural acronym is its singular.
  // 5 (2026-12-06): ー is part of a CJK run (a version 4 index holds サ, ー, バ for サーバー).
  const key = { id: 's', c: 1, r: 1 };
  const doc = { len: 1, tf: new Map([['x', 1]]) };
  expect(decodeLexRecord(encodeLexRecord(key, doc)).doc.tf.get('x')).toBe(1);
  for (const v of [1, 2, 3, 4]) {
    expect(() => decodeLexRecord(withVersion(encodeLexRecord(key, doc), v))).toThrow(
      CorruptIndexError,
    );
    expect(() => decodeLexSegment(withVersion(encodeLexSegment([{ key, doc }]), v))).toThrow(
      CorruptIndexError,
    );
  }
});

it("the built-in embedder's space changed with the tokens it hashes", () => {
  // Its vectors are hashed from the same tokens: stored under the old space name, a Thai session's vector
  // would be compared with query vectors of other features until the session was written again.
  expect(new LocalEmbedder().space()).toBe('local/hash-v5/256');
});
