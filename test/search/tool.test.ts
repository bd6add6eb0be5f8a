import { describe, expect, it } from 'vitest';
import { clampLimit, sessionSearchTool, wrapUntrusted } from '../../lib/search/tool.js';
import { makeApp, TOKENS } from '../http/helpers.js';

const WRAP =
  /^<untrusted_content_([0-9a-f]{16}) source="session_search">\n([\s\S]*)\n<\/untrusted_content_\1>$/;

async function seeded() {
  const app = await makeApp();
  const make = (task: string, messages: { role: string; content: string }[]) =>
    app.call('POST', '/v1/sessions', { body: { task, messages } });
  const a = (
    await make('Fix the OpenSSL error in CI', [
      { role: 'system', content: 'You know about kubernetes clusters.' },
      { role: 'user', content: 'The build fails with ERR_OSSL_EVP_UNSUPPORTED on node 17' },
      {
        role: 'assistant',
        content: 'Set NODE_OPTIONS=--openssl-legacy-provider or upgrade webpack.',
      },
    ])
  ).json;
  const b = (
    await make('Deploy the website', [
      { role: 'user', content: 'deploy the marketing website to production' },
      { role: 'assistant', content: 'Deployed; the build took 3 minutes.' },
    ])
  ).json;
  const c = (
    await make('東京の天気アプリ', [
      { role: 'user', content: '東京都の天気を表示するアプリを作って' },
    ])
  ).json;
  const tool = (body: unknown, token = TOKENS.laptop) =>
    app.call('POST', '/v1/session_search', { body, token });
  return { app, a, b, c, tool };
}

describe('session_search tool', () => {
  it('list: newest first, metadata only; limit ≤ 0 → 5, at most 20', async () => {
    const { tool, a, b, c } = await seeded();
    const out = await tool({ action: 'list' });
    expect(out.status).toBe(200);
    expect(out.json.sessions.map((s: { id: string }) => s.id)).toEqual([c.id, b.id, a.id]);
    expect(out.json.sessions[0].messages).toBeUndefined();
    expect((await tool({ action: 'list', limit: 1 })).json.sessions).toHaveLength(1);
    expect([
      clampLimit(0),
      clampLimit(-3),
      clampLimit(undefined),
      clampLimit(7),
      clampLimit(500),
      clampLimit(0.5), // floors to 0: the default, not an empty answer
      clampLimit(2.9),
    ]).toEqual([5, 5, 5, 7, 20, 5, 2]);
  });

  it('search: two distinct tokens qualify a session, or the only token of a one-token query; ranked', async () => {
    const { tool, a, b } = await seeded();
    const hits = (await tool({ action: 'search', query: 'ERR_OSSL_EVP_UNSUPPORTED webpack' })).json
      .results;
    expect(hits.map((h: { id: string }) => h.id)).toEqual([a.id]);
    expect(hits[0]).toMatchObject({
      task: 'Fix the OpenSSL error in CI',
      score: expect.any(Number),
      updated_at: expect.any(String),
    });
    expect(hits[0].snippet).toContain('ERR_OSSL_EVP_UNSUPPORTED');
    const build = (await tool({ action: 'search', query: 'build' })).json.results.map(
      (h: { id: string }) => h.id,
    );
    expect(build.sort()).toEqual([a.id, b.id].sort());
    // One shared token of a two-token query is not enough.
    expect((await tool({ action: 'search', query: 'build kubernetes' })).json.results).toEqual([]);
  });

  it('search: system messages never match; unicode queries work', async () => {
    const { tool, c } = await seeded();
    expect((await tool({ action: 'search', query: 'kubernetes clusters' })).json.results).toEqual(
      [],
    );
    expect(
      (await tool({ action: 'search', query: '東京 天気' })).json.results.map(
        (h: { id: string }) => h.id,
      ),
    ).toEqual([c.id]);
  });

  it('find: by task', async () => {
    const { tool, b } = await seeded();
    expect(
      (await tool({ action: 'find', query: 'deploy website' })).json.sessions.map(
        (s: { id: string }) => s.id,
      ),
    ).toEqual([b.id]);
    expect((await tool({ action: 'find', query: 'nothing like this' })).json.sessions).toEqual([]);
  });

  it('get: the last user/assistant messages, each wrapped as untrusted content, with count and task', async () => {
    const { tool, a } = await seeded();
    const out = (await tool({ action: 'get', id: a.id })).json;
    expect(out).toMatchObject({ id: a.id, task: 'Fix the OpenSSL error in CI', count: 2 });
    expect(out.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    const [, , inner] = WRAP.exec(out.messages[0].content)!;
    expect(inner).toBe('The build fails with ERR_OSSL_EVP_UNSUPPORTED on node 17');
  });

  it('tool-level errors are results with status 200; a body that is not JSON is a 400 problem', async () => {
    const { tool, app } = await seeded();
    for (const body of [
      { action: 'explode' },
      { action: 'search' },
      { action: 'search', query: '  ' },
      { action: 'find' },
      { action: 'get' },
      { action: 'get', id: 'no-such-session' },
      { action: 'get', id: '../etc' },
      { action: 'get', id: 'a'.repeat(300) }, // no session can have it (review: it was a 400)
    ]) {
      const out = await tool(body);
      expect(out.status, JSON.stringify(body)).toBe(200);
      expect(typeof out.json.error).toBe('string');
    }
    const bad = await app.call('POST', '/v1/session_search', {
      raw: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
  });

  it('namespaces never see each other; read-only tokens may search', async () => {
    const { tool } = await seeded();
    expect((await tool({ action: 'list' }, TOKENS.bob)).json.sessions).toEqual([]);
    expect(
      (await tool({ action: 'search', query: 'build webpack' }, TOKENS.bob)).json.results,
    ).toEqual([]);
    expect((await tool({ action: 'list' }, TOKENS.ci)).json.sessions).toHaveLength(3);
  });

  it('exports an OpenAI function definition', () => {
    expect(sessionSearchTool.function.name).toBe('session_search');
    expect(sessionSearchTool.function.parameters.properties.action.enum).toEqual([
      'list',
      'search',
      'get',
      'find',
    ]);
  });
});

describe('the untrusted-content wrapper', () => {
  it("is odek's exact bytes: newline after the opening tag and before the closing one", () => {
    expect(wrapUntrusted('body', 'webhook:ci', '0123456789abcdef')).toBe(
      '<untrusted_content_0123456789abcdef source="webhook:ci">\nbody\n</untrusted_content_0123456789abcdef>',
    );
  });
});
