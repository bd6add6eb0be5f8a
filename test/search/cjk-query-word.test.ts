// Review s67e (2026-12-07), finding 1: a query's CJK word of n ≥ 4 characters was n − 1 independent bigram
// tokens, so the two-token rule took any session holding two of them, in unrelated words: データベース
// (database) answered データを送った (sent the data) and ベースギターを弾く (play the bass guitar), and
// サーバー (server) answered only 週末はサーフィンとバーベキュー (surfing and a barbecue), the false match
// review s59d had fixed. A query's CJK run now counts as one word, held where all its bigrams are.
import { describe, expect, it } from 'vitest';
import { deepSearch } from '../../lib/search/engine.js';
import { parseQuery, tokensHeld } from '../../lib/search/tokenize.js';
import { makeApp, settleAll } from '../http/helpers.js';

type App = Awaited<ReturnType<typeof makeApp>>;

async function tool(app: App, action: 'search' | 'find', query: string): Promise<string[]> {
  const res = await app.call('POST', '/v1/session_search', { body: { action, query } });
  expect(res.status).toBe(200);
  return ((res.json.results ?? res.json.sessions) as { task: string }[]).map((r) => r.task).sort();
}

async function create(app: App, task: string, content: string): Promise<void> {
  const res = await app.call('POST', '/v1/sessions', {
    body: { task, messages: [{ role: 'user', content }] },
  });
  expect(res.status).toBe(201);
}

describe('a query CJK word is one word, held only whole', () => {
  it('the rule counts a run once, and only where all its bigrams are held', () => {
    const q = parseQuery('データベース');
    expect(q.tokens).toEqual(['デー', 'ータ', 'タベ', 'ベー', 'ース']);
    expect(tokensHeld(q)).toBe(1); // the words the two-token rule counts
    const holds = (text: string) => (t: string) => text.includes(t);
    expect(tokensHeld(q, holds('データを送った、ベースギター'))).toBe(0);
    expect(tokensHeld(q, holds('データベースの接続'))).toBe(1);
    // Two words (a run and a loose token; a two-character run is one bigram): each counts once.
    const two = parseQuery('データベース timeout 接続');
    expect(tokensHeld(two)).toBe(3);
    expect(tokensHeld(two, (t) => t === 'timeout' || holds('データとベース')(t))).toBe(1);
    expect(tokensHeld(two, (t) => t === 'timeout' || holds('データベース接続')(t))).toBe(3);
  });

  it('search (index records, then segments), DeepSearch and find agree', async () => {
    const app = await makeApp();
    await create(app, 'db', 'データベースの接続が切れた'); // the database connection dropped
    await create(app, 'data', 'データを送った'); // sent the data
    await create(app, 'bass', 'ベースギターを弾く'); // play the bass guitar
    await create(app, 'bbq', '週末はサーフィンとバーベキュー'); // surfing and a barbecue at the weekend
    await create(app, 'ko-bass', '베이스 기타를 연주한다'); // Korean: play the bass guitar
    await create(app, 'ko-db', '데이터베이스 백업'); // Korean: database backup
    await create(app, 'データとベースの話', 'nothing here'); // a task holding データ and ベース apart
    await settleAll(app);
    const expected: [string, string[]][] = [
      ['データベース', ['db']],
      ['サーバー', []],
      ['데이터베이스', ['ko-db']],
      // Two words: a session holding both qualifies; one holding one of them, or scattered bigrams, not.
      ['データベース 接続', ['db']],
      ['サーバー 週末', []],
    ];
    const check = async () => {
      for (const [query, tasks] of expected)
        expect([query, await tool(app, 'search', query)]).toEqual([query, tasks]);
      const live = (await app.sessions.manifest.view('alice')).entries;
      for (const [query, tasks] of expected) {
        const deep = (await deepSearch(app.sessions, 'alice', live, query, 10)).map((h) => h.task);
        expect([query, deep.sort()]).toEqual([query, tasks]);
      }
    };
    await check();
    await app.search.lexical.compact('alice', true);
    await settleAll(app);
    await check();
    // find: every query word in the task, a CJK word whole.
    expect(await tool(app, 'find', 'データベース')).toEqual([]);
    expect(await tool(app, 'find', 'データ')).toEqual(['データとベースの話']);
  });
});
