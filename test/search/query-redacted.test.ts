// A search query leaves for the embeddings API redacted, as every text embedded is (found by a review on
// 2026-12-04: SearchEngine.rankVectors sent the raw query, and as the space probe when DIMS is unset, so a
// token searched for reached the third-party embeddings provider; stored text only ever holds [REDACTED]).
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';

// A GitHub token in its real format (not a documented example), assembled at run time.
const TOKEN = 'ghp_' + 'Zq8xW3vN5'.repeat(4);

let server: EmbeddingsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('search query to the embeddings service', () => {
  for (const dims of ['64', null] as const) {
    it(`a secret in a session_search query is not sent to the embeddings API (DIMS ${dims ?? 'unset'})`, async () => {
      server = await startEmbeddingsServer(64);
      const app = await makeApp({
        env: {
          SATCHEL_EMBEDDINGS_URL: server.url,
          SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
          ...(dims ? { SATCHEL_EMBEDDINGS_DIMS: dims } : {}),
        },
      });
      const made = await app.call('POST', '/v1/sessions', {
        body: {
          task: 'rotate the github token',
          messages: [{ role: 'user', content: `my token is ${TOKEN}, rotate it` }],
        },
      });
      expect(made.status).toBe(201);
      await app.background.drain();
      await app.sessions.settled();
      const res = await app.call('POST', '/v1/session_search', {
        body: { action: 'search', query: `where did I paste ${TOKEN} token` },
      });
      expect(res.status).toBe(200);
      await app.sessions.settled();
      // The query was embedded (the session's text too), and never as typed. What is stored is
      // test/http/secrets-at-rest.test.ts's to check.
      const sent = server.requests.flatMap((r) => r.input).join('\n');
      expect(sent).toContain('where did I paste [REDACTED] token');
      expect(sent.includes(TOKEN), 'the raw token was POSTed to the embeddings API').toBe(false);
    });
  }
});
