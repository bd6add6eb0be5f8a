// Before 2026-12-04 session_search `find` also accepted a task that merely contained the query as a
// substring (`task.toLowerCase().includes(query)`), inside words too and for a query with no searchable word:
// "cat" found "Fix the application crash", "art" found "Restart the worker pool", and "the" every task with
// t-h-e anywhere. Now a task matches when it holds every query token (whole words, as search tokenizes
// them), and a query without one is a tool-level {"error"}.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it('find matches whole words, not a query inside unrelated words', async () => {
  const app = await makeApp();
  const mk = async (task: string) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task, messages: [{ role: 'user', content: 'x' }] },
      })
    ).json.id as string;
  await mk('Fix the application crash');
  const restart = await mk('Restart the worker pool');
  const pets = await mk('Feed the cat');
  const cjk = await mk('喂我的猫');
  const tool = (query?: string) =>
    app.call('POST', '/v1/session_search', { body: { action: 'find', query } });
  const find = async (query: string) => {
    const out = await tool(query);
    expect(out.status).toBe(200);
    return out.json.sessions.map((s: { id: string }) => s.id);
  };
  expect(await find('cat')).toEqual([pets]);
  expect(await find('art')).toEqual([]);
  expect(await find('restarting workers')).toEqual([restart]);
  expect(await find('the worker pool')).toEqual([restart]);
  expect(await find('猫')).toEqual([cjk]);
  for (const query of ['the', '?!', '  ', undefined]) {
    const out = await tool(query);
    expect(out.status, String(query)).toBe(200);
    expect(out.json, String(query)).toEqual({ error: expect.any(String) });
  }
});
