// Review s67j, finding 1, on Workers: a query's CJK run is split into words by Intl.Segmenter, which must
// know Chinese and Japanese words in workerd as it does in Node (数据库连接失败 is 数据|库|连接|失败), or a
// sentence typed without spaces finds nothing there.
import type { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';
import { startWorkerd } from '../support/workerd.js';

const TOKEN = 'tok_s67j_worker_8Hw2';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let mf: Miniflare;

beforeAll(async () => {
  // The R2-only bundle, built as for deployment (test/functions/worker.test.ts).
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s67j-'));
  const script = await buildWorker(join(dir, 'r2', 'worker-r2.js'), { s3: false });
  mf = startWorkerd(script, { SATCHEL_TOKENS: `edge/w=${TOKEN}`, SATCHEL_LOG: 'off' });
}, 120_000);
afterAll(async () => {
  await mf?.dispose();
});

async function call(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await mf.dispatchFetch(`http://w${path}`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

it('a Worker finds the sessions holding a CJK sentence query’s words', async () => {
  for (const [task, content] of [
    ['zh', '昨天数据库的连接失败了，重启以后好了'], // yesterday the database connection failed
    ['ja', 'データベースへの接続でエラーが出た'], // an error came up connecting to the database
    ['bbq', '週末はサーフィンとバーベキュー'], // surfing and a barbecue at the weekend
  ]) {
    const res = await call('/v1/sessions', { task, messages: [{ role: 'user', content }] });
    expect(res.status).toBe(201);
  }
  for (const [query, tasks] of [
    ['数据库连接失败', ['zh']],
    ['データベースの接続エラー', ['ja']],
    ['サーバー', []],
  ] as const) {
    const res = await call('/v1/session_search', { action: 'search', query });
    expect(res.status).toBe(200);
    expect([query, res.json.results.map((h: { task: string }) => h.task)]).toEqual([query, tasks]);
  }
});
