// Before 2026-12-04 a CJK run was indexed only as overlapping bigrams (a run of one character as its unigram),
// so a one-character Chinese/Japanese/Korean word inside a longer run was never found: "猫" against
// "我的猫很可爱" answered {"results": []}, and "猫 可爱" too (only 可爱 matched, under the two-token rule).
// Now a document's CJK runs give each character as well; a query's runs still give bigrams only (a lone
// character its unigram), so a longer query word does not match scattered characters.
import { expect, it } from 'vitest';
import { queryTokens, tokenize } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';

it('a one-character Chinese word inside a sentence is found', async () => {
  const app = await makeApp();
  const created = await app.call('POST', '/v1/sessions', {
    body: { task: '宠物', messages: [{ role: 'user', content: '我的猫很可爱' }] },
  });
  expect(created.status).toBe(201);
  const search = async (query: string) => {
    const out = await app.call('POST', '/v1/session_search', { body: { action: 'search', query } });
    expect(out.status).toBe(200);
    return out.json.results.map((h: { id: string }) => h.id);
  };
  expect(await search('猫 可爱')).toEqual([created.json.id]);
  expect(await search('猫')).toEqual([created.json.id]);
  // A two-character query word is a bigram: its characters apart do not match it.
  expect(await search('猫爱')).toEqual([]);
});

it('documents get CJK unigrams and bigrams; queries bigrams, or the lone character', () => {
  expect(tokenize('东京都', true).sort()).toEqual(['东', '东京', '京', '京都', '都'].sort());
  expect(queryTokens('东京都')).toEqual(['东京', '京都']);
  expect(queryTokens('猫')).toEqual(['猫']);
  expect(tokenize('밥을 먹었어', true)).toContain('밥');
});
