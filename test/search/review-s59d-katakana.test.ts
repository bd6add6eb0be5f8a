// Review s59d (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// The katakana long-vowel mark ー (U+30FC; halfwidth ｰ becomes it under NFKD) is of the Common script, so
// the tokenizer's CJK class (Han, Hiragana, Katakana, Hangul by script) left it out and every katakana word
// holding it was cut into single characters: the query サーバー (server) gave サ, ー, バ instead of the
// bigrams サー, ーバ, バー. Scattered characters then met the two-token rule, so a session about a barbecue
// (バーベキュー) or a supermarket (スーパー) answered a search for a server, and find took a barbecue
// service for one. design.md ("Tokens"): a longer query word matches as bigrams, not scattered characters.
// The fix changes stored tokens: the lexical format is version 5 and the built-in space local/hash-v5, so a
// version 4 index (which lacks the bigrams holding ー) is rebuilt, not read.
import { describe, expect, it } from 'vitest';
import { parseQuery, tokenize } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';
import { olderIndexRead } from '../support/search-process.js';

type App = Awaited<ReturnType<typeof makeApp>>;

async function search(app: App, query: string): Promise<string[]> {
  const res = await app.call('POST', '/v1/session_search', { body: { action: 'search', query } });
  expect(res.status).toBe(200);
  return (res.json.results as { task: string }[]).map((r) => r.task);
}

async function create(app: App, task: string, content?: string): Promise<void> {
  const messages = content ? [{ role: 'user', content }] : [];
  const res = await app.call('POST', '/v1/sessions', { body: { task, messages } });
  expect(res.status).toBe(201);
}

describe('katakana words with the long-vowel mark ー', () => {
  it('a query word is bigrams, never single characters (halfwidth ｰ too)', () => {
    expect(parseQuery('サーバー').tokens).toEqual(['サー', 'ーバ', 'バー']);
    expect(parseQuery('ｻｰﾊﾞｰ').tokens).toEqual(['サー', 'ーバ', 'バー']);
    expect(parseQuery('らーめん').tokens).toEqual(['らー', 'ーめ', 'めん']);
    // A document's run gives each character as well, ー among them.
    expect(tokenize('スーパー', true).sort()).toEqual(
      ['ス', 'スー', 'ー', 'ーパ', 'パ', 'パー', 'ー'].sort(),
    );
  });

  it('punctuation around CJK words is still no word character', () => {
    const tokens = tokenize('「サーバー」、起動・停止。〜〃', true);
    expect(tokens.filter((t) => /[「」、。・〜〃]/u.test(t))).toEqual([]);
    expect(parseQuery('「サーバー」、起動。').tokens).toEqual(['サー', 'ーバ', 'バー', '起動']);
  });

  it('search for サーバー (server) finds neither a barbecue nor a supermarket', async () => {
    const app = await makeApp();
    await create(app, 'サーバーの設定', 'サーバーが起動しません'); // the server does not start
    await create(app, '週末の予定', 'バーベキューをします'); // a barbecue at the weekend
    await create(app, '買い物', 'スーパーでパンを買う'); // bread from the supermarket
    await app.background.drain();
    expect(await search(app, 'サーバー')).toEqual(['サーバーの設定']);
    expect(await search(app, 'ｻｰﾊﾞｰ')).toEqual(['サーバーの設定']);
    expect(await search(app, 'スーパー')).toEqual(['買い物']);
  });

  it('find サーバー (every query word in the task) does not take a barbecue service', async () => {
    const app = await makeApp();
    await create(app, 'バーベキューのサービス'); // a barbecue (catering) service
    await create(app, 'サーバーの移行'); // moving the server
    const res = await app.call('POST', '/v1/session_search', {
      body: { action: 'find', query: 'サーバー' },
    });
    expect(res.status).toBe(200);
    expect((res.json.sessions as { task: string }[]).map((s) => s.task)).toEqual([
      'サーバーの移行',
    ]);
  });

  it('a lexical index of the version before (no bigrams holding ー) is rebuilt, not read', async () => {
    // What version 4 stored: the same documents without the bigrams that hold ー, format version 4.
    const read = await olderIndexRead({
      task: 'サーバーの設定',
      content: 'サーバーが起動しません',
      older: (t) => t === 'ー' || !t.includes('ー'),
      v: 4,
      query: 'サーバー',
      token: 'ーバ',
    });
    expect(read.hits).toEqual([read.id]);
    expect(read.rebuilt.length).toBeGreaterThan(0);
    for (const postings of read.rebuilt) expect(postings).not.toBeNull();
  });
});
