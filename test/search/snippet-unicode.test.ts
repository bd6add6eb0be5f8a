// Snippets and the search tool's answers are Unicode text around the match (review s50a): the window was
// cut in `toLowerCase()`'s offsets (İ lowers to two code units, so a Turkish passage moved it off the
// match), and at 200 code units, which can fall inside a surrogate pair (half an emoji: a lone surrogate,
// which strict JSON readers refuse).
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
type App = Awaited<ReturnType<typeof makeApp>>;

async function snippets(app: App, query: string): Promise<string[]> {
  const res = await app.call('POST', '/v1/session_search', { body: { action: 'search', query } });
  expect(res.status).toBe(200);
  return (res.json.results as { snippet: string }[]).map((r) => r.snippet);
}

describe('snippets', () => {
  it('hold the matched words after Turkish capitals (İ) in the same message', async () => {
    const app = await makeApp();
    const heading = 'İSTANBUL İLİ İŞ İLANI İÇİN İLETİŞİM BİLGİLERİ '.repeat(8);
    const content = `${heading}\nthe moonbeam parser drops the phone numbers`;
    await app.call('POST', '/v1/sessions', {
      body: { task: 'ads', messages: [{ role: 'user', content }] },
    });
    await app.background.drain();
    expect(await snippets(app, 'moonbeam parser')).toEqual([
      expect.stringContaining('moonbeam parser'),
    ]);
    // And İ in the query finds its lower case in the text.
    expect(await snippets(app, 'İSTANBUL')).toEqual([expect.stringContaining('İSTANBUL')]);
  });

  it('hold a match found by accent folding, not the text before it (until 2026-12-05 they did not)', async () => {
    const app = await makeApp();
    const before = 'Notes from the week, in no particular order. '.repeat(8);
    const content = `${before}Je bois un café au lait près de la gare à Zürich chaque matin.`;
    await app.call('POST', '/v1/sessions', {
      body: { task: 'habits', messages: [{ role: 'user', content }] },
    });
    await app.background.drain();
    expect(await snippets(app, 'cafe zurich')).toEqual([expect.stringContaining('café au lait')]);
    expect(await snippets(app, 'CAFÉ')).toEqual([expect.stringContaining('café au lait')]);
  });

  it('never hold half an emoji, whichever end of the window falls inside a pair', async () => {
    const app = await makeApp();
    for (const pad of ['', 'a']) {
      const content = `${pad}${'😀'.repeat(60)} moonbeam parser ${'🎉'.repeat(100)}`;
      await app.call('POST', '/v1/sessions', {
        body: { task: `emoji ${pad}`, messages: [{ role: 'user', content }] },
      });
    }
    await app.background.drain();
    const found = await snippets(app, 'moonbeam parser');
    expect(found).toHaveLength(2);
    for (const s of found) {
      expect(LONE.test(s), JSON.stringify(s)).toBe(false);
      expect(s).toContain('moonbeam parser');
    }
  });

  it("the tool's answer for an unknown long id does not cut an emoji in half", async () => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/session_search', {
      body: { action: 'get', id: `${'a'.repeat(127)}😀` },
    });
    expect(res.status).toBe(200);
    expect(res.json.error).toMatch(/^no session with id a+\ufffd$/);
  });
});
