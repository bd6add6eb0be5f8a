// Review s53f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// A query the embeddings service refuses alone (400/413/422: a query too long for the model, say) gets a
// zero vector (embed.ts `none()`: "A blank text, or one the service refused alone, gets zeros"). rankVectors
// (engine.ts ~941) drops only *session* vectors that are zeros: with a zero *query* every session scores
// 0, and they all come back in id order as a vector ranking, which is fused with BM25. The answer's
// order and scores are then those of a fusion with an alphabetical list, not the lexical answer the
// search gives whenever it has no query vector (cooldown, no embedder).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { LocalStore } from '../../lib/storage/local.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

it('a query refused by the embeddings service answers as the lexical search does', async () => {
  stub = await startOpenAiStub(64);
  const QUERY = 'postgres vacuum autovacuum stuck';
  stub.refuse = (t) => t === QUERY;
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s53f-'));
  const env = {
    SATCHEL_EMBEDDINGS_URL: stub.url,
    SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
    SATCHEL_EMBEDDINGS_DIMS: '64',
  };
  const app = await makeApp({ env, objects: new LocalStore(dir) });
  const sessions = [
    {
      id: 'a-weak',
      task: 'notes',
      messages: [{ role: 'user', content: 'postgres once and vacuum' }],
    },
    { id: 'b-other', task: 'kafka lag', messages: [{ role: 'user', content: 'postgres is fine' }] },
    {
      id: 'z-strong',
      task: 'postgres vacuum stalls',
      messages: [
        {
          role: 'user',
          content: 'autovacuum is stuck; postgres vacuum never ends, postgres vacuum',
        },
      ],
    },
    { id: 'm-mid', task: 'vacuum', messages: [{ role: 'user', content: 'postgres vacuum stuck' }] },
  ];
  for (const body of sessions)
    expect((await app.call('POST', '/v1/sessions', { body })).status).toBe(201);
  await settleAll(app);
  // Vectors are built (the search's compaction too).
  await app.call('POST', '/v1/session_search', { body: { action: 'search', query: 'kafka' } });
  await settleAll(app);
  expect(stub.requests.length).toBeGreaterThan(0);

  const withZeroQuery = await app.call('POST', '/v1/session_search', {
    body: { action: 'search', query: QUERY },
  });
  expect(withZeroQuery.status).toBe(200);
  expect(stub.requests.some((r) => r.input.includes(QUERY))).toBe(true); // it was asked, and refused

  // The same folder without embeddings: the lexical answer.
  const lexicalOnly = await makeApp({ objects: new LocalStore(dir) });
  const lexical = await lexicalOnly.call('POST', '/v1/session_search', {
    body: { action: 'search', query: QUERY },
  });
  const view = (r: { json: { results: { id: string; score: number }[] } }) =>
    r.json.results.map((h) => [h.id, h.score]);
  expect(view(withZeroQuery)).toEqual(view(lexical));
});
