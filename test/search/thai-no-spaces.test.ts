// Before 2026-12-04 only Han, Hiragana, Katakana and Hangul runs were split; Thai, Lao, Khmer and Myanmar,
// written without spaces between words, were one token per sentence (marks stripped), so "แมว" (cat) in
// "ฉันชอบแมวมาก" was never found ({"results": []}). Runs of those scripts are now split into words with
// Intl.Segmenter (word granularity) before marks are folded.
import { expect, it } from 'vitest';
import { queryTokens, tokenize } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';

it('a Thai word inside a sentence is found', async () => {
  const app = await makeApp();
  const created = await app.call('POST', '/v1/sessions', {
    body: { task: 'สัตว์เลี้ยง', messages: [{ role: 'user', content: 'ฉันชอบแมวมาก' }] },
  });
  expect(created.status).toBe(201);
  const out = await app.call('POST', '/v1/session_search', {
    body: { action: 'search', query: 'แมว' },
  });
  expect(out.status).toBe(200);
  expect(out.json.results.map((h: { id: string }) => h.id)).toEqual([created.json.id]);
});

it('Thai, Lao and Khmer sentences become several tokens, each a query word', () => {
  for (const [sentence, word] of [
    ['ฉันชอบแมวมาก', 'แมว'],
    ['ຂ້ອຍມັກແມວ', 'ແມວ'],
    ['ខ្ញុំចូលចិត្តឆ្មា', 'ឆ្មា'],
  ] as const) {
    const tokens = tokenize(sentence, true);
    expect(tokens.length, sentence).toBeGreaterThan(1);
    for (const q of queryTokens(word)) expect(tokens, sentence).toContain(q);
  }
  // Text around such a run is tokenized as before.
  expect(tokenize('deploy ฉันชอบแมวมาก ERR_X')).toEqual(
    expect.arrayContaining(['deploi', 'err_x', 'err', 'x']),
  );
});
