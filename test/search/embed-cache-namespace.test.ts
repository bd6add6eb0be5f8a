// Review s53a, finding 4: the HttpEmbedder's vector cache was keyed by a digest of the text alone and shared
// by every namespace of the process. A search in one namespace whose query was exactly another namespace's
// session text was a cache hit: no call to the provider, so its answer came a round trip sooner, an oracle
// on another namespace's sessions. The cache is now keyed by namespace and digest.
import { afterEach, describe, expect, it } from 'vitest';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

describe('the embeddings cache across namespaces', () => {
  it("a search costs its provider call whether or not another namespace stored the query's text", async () => {
    stub = await startOpenAiStub(64);
    const app = await makeApp({
      env: {
        SATCHEL_EMBEDDINGS_URL: stub.url,
        SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        SATCHEL_EMBEDDINGS_DIMS: '64',
      },
    });
    const secretText = 'reset the payroll admin password for dana';
    const a = await app.call('POST', '/v1/sessions', { body: { task: secretText } });
    const b = await app.call('POST', '/v1/sessions', {
      token: TOKENS.bob,
      body: {
        task: 'payroll admin notes',
        messages: [{ role: 'user', content: 'reset password policy' }],
      },
    });
    expect([a.status, b.status]).toEqual([201, 201]);
    await app.background.drain();
    await app.sessions.settled();
    const search = async (token: string, query: string) => {
      const before = stub!.requests.length;
      const res = await app.call('POST', '/v1/session_search', {
        token,
        body: { action: 'search', query },
      });
      expect(res.status).toBe(200);
      await app.background.drain();
      return stub!.requests.slice(before).filter((r) => r.input.includes(query)).length;
    };
    await search(TOKENS.bob, 'payroll warmup'); // loads bob's indexes
    expect(await search(TOKENS.bob, 'reset the payroll admin password for erik')).toBe(1);
    expect(await search(TOKENS.bob, secretText)).toBe(1);
    // The same namespace still hits its own cache.
    expect(await search(TOKENS.laptop, secretText)).toBe(0);
  });

  it('the embedder keys its cache by namespace', async () => {
    stub = await startOpenAiStub(64);
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', dims: 64 });
    await embedder.embed(['some text'], false, { ns: 'a' });
    await embedder.embed(['some text'], true, { ns: 'b' });
    await embedder.embed(['some text'], true, { ns: 'a' });
    expect(stub.requests.map((r) => r.input)).toEqual([['some text'], ['some text']]);
  });
});
