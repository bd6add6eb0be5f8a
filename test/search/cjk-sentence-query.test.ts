// Review s67j (2026-12-07). Finding 1: since 66140fb a query's CJK run was one word, held only where all its
// bigrams are; Chinese and Japanese are typed without spaces, so a sentence (数据库连接失败, "database
// connection failed") was one word whose bigrams across its words (库连, 接失) no session held: search and
// DeepSearch found only the exact phrase. A query's run is now split into words (Intl.Segmenter), each of
// two or more characters held whole and counted once. Finding 2: with one such word (need 1) the list of
// qualifying sessions had no room, so 200 sessions holding some of データベース's bigrams (scored, not
// holding the word) filled the candidates and cut the one session holding it: the answer was empty. Review
// s67k: the split dropped a one-character word (库 of 数据|库), so 数据库 found 数据分析报告; it now joins
// its neighbour.
import { describe, expect, it } from 'vitest';
import { deepSearch } from '../../lib/search/engine.js';
import { parseQuery, tokensHeld } from '../../lib/search/tokenize.js';
import { makeApp, settleAll } from '../http/helpers.js';

type App = Awaited<ReturnType<typeof makeApp>>;

async function create(app: App, task: string, content: string): Promise<void> {
  const res = await app.call('POST', '/v1/sessions', {
    body: { task, messages: [{ role: 'user', content }] },
  });
  expect(res.status).toBe(201);
}

async function search(app: App, query: string): Promise<string[]> {
  const res = await app.call('POST', '/v1/session_search', { body: { action: 'search', query } });
  expect(res.status).toBe(200);
  return (res.json.results as { task: string }[]).map((r) => r.task).sort();
}

async function deep(app: App, query: string): Promise<string[]> {
  const live = (await app.sessions.manifest.view('alice')).entries;
  return (await deepSearch(app.sessions, 'alice', live, query, 10)).map((h) => h.task).sort();
}

describe('a CJK query typed as a sentence', () => {
  it('is its words: each held whole, a one-character word with its neighbour, counted once', () => {
    const zh = parseQuery('数据库连接失败'); // 数据|库|连接|失败: 库 joins 数据 (review s67k)
    expect(zh.runs).toEqual([['数据', '据库'], ['连接'], ['失败']]);
    // Every bigram still scores (a session holding the phrase ranks first), though only the words count.
    expect(zh.tokens).toEqual(['数据', '据库', '库连', '连接', '接失', '失败']);
    expect(tokensHeld(zh)).toBe(3);
    const holds = (text: string) => (t: string) => text.includes(t);
    expect(tokensHeld(zh, holds('昨天数据库的连接失败了'))).toBe(3);
    expect(tokensHeld(zh, holds('连接失败'))).toBe(2);
    const ja = parseQuery('データベースの接続エラー'); // データベース|の|接続|エラー: の joins データベース
    expect(ja.runs).toEqual([
      ['デー', 'ータ', 'タベ', 'ベー', 'ース', 'スの'],
      ['接続'],
      ['エラ', 'ラー'],
    ]);
    expect(tokensHeld(ja)).toBe(3);
    expect(tokensHeld(ja, holds('データベースへの接続でエラーが出た'))).toBe(2);
    // A one-character word is not dropped (review s67k: 数据库 was held by 数据分析报告, 猫の写真 by 犬の写真,
    // 我的狗 by 喂我的猫).
    expect(tokensHeld(parseQuery('数据库'), holds('数据分析报告'))).toBe(0);
    expect(tokensHeld(parseQuery('猫の写真'), holds('犬の写真を整理する'))).toBe(0);
    expect(tokensHeld(parseQuery('我的狗'), holds('喂我的猫'))).toBe(0);
    // One word stays one run; a run with no word of two characters is one word (猫|爱: not 猫 and 爱).
    expect(parseQuery('データベース').runs).toHaveLength(1);
    expect(parseQuery('猫爱').runs).toEqual([['猫爱']]);
    expect(parseQuery('猫').runs).toEqual([]);
    // A word typed twice counts once.
    expect(tokensHeld(parseQuery('连接失败，连接'))).toBe(2);
  });

  it('finds the sessions holding its words, in search and DeepSearch', async () => {
    const app = await makeApp();
    await create(app, 'zh', '昨天数据库的连接失败了，重启以后好了'); // yesterday the db connection failed
    await create(app, 'ja', 'データベースへの接続でエラーが出た'); // an error connecting to the database
    await create(app, 'bbq', '週末はサーフィンとバーベキュー'); // surfing and a barbecue
    await create(app, 'data', 'データを送った、ベースギターを弾く'); // sent the data, play the bass guitar
    await settleAll(app);
    const expected: [string, string[]][] = [
      ['数据库连接失败', ['zh']],
      ['データベース接続エラー', ['ja']],
      ['データベースの接続エラー', ['ja']],
      ['数据库 连接 失败', ['zh']],
      // Still held only whole (review s67e): データ and ベース apart are not データベース.
      ['データベース', ['ja']],
      ['サーバー', []],
    ];
    for (const [q, tasks] of expected) {
      expect([q, await search(app, q)]).toEqual([q, tasks]);
      expect([q, await deep(app, q)]).toEqual([q, tasks]);
    }
  });
});

describe('a CJK query with a one-character word (review s67k)', () => {
  it('finds only the sessions holding it: the word is not dropped', async () => {
    const app = await makeApp();
    await create(app, '数据分析报告', '整理上个月的数据，写分析报告'); // data analysis report
    await create(app, '犬の写真', '犬の写真を整理する'); // photos of the dog
    await create(app, '喂我的猫', '记得喂我的猫'); // feed my cat
    await create(app, '数据库迁移', '把数据库迁移到新服务器'); // database migration
    await settleAll(app);
    for (const [q, tasks] of [
      ['数据库', ['数据库迁移']],
      ['猫の写真', []],
      ['我的狗', []],
    ] as const) {
      expect([q, await search(app, q)]).toEqual([q, tasks]);
      expect([q, await deep(app, q)]).toEqual([q, tasks]);
    }
  });
});

describe('a one-word CJK query among many sessions holding some of its bigrams', () => {
  it('finds the only session holding the word', async () => {
    const app = await makeApp();
    // The word once, in a long message: it scores lower than a short one holding two of its bigrams.
    await create(app, 'target', 'データベース ' + 'lorem ipsum dolor sit amet '.repeat(300));
    for (let i = 0; i < 100; i++) await create(app, `a${i}`, 'データベ データベ'); // デー ータ タベ
    for (let i = 0; i < 100; i++) await create(app, `b${i}`, 'ベース ベース'); // ベー ース
    await settleAll(app);
    expect(await deep(app, 'データベース')).toEqual(['target']);
    expect(await search(app, 'データベース')).toEqual(['target']);
    await app.search.lexical.compact('alice', true);
    await settleAll(app);
    expect(await search(app, 'データベース')).toEqual(['target']);
  });
});
