// A search query leaves for the embeddings API redacted, as every text embedded is (found by a review on
// 2026-12-04: SearchEngine.rankVectors sent the raw query, and as the space probe when DIMS is unset, so a
// token searched for reached the third-party embeddings provider; stored text only ever holds [REDACTED]).
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text, type ObjectStore } from '../../lib/storage/port.js';

const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
/** Realistic fake secrets in real formats (not documented examples), assembled at run time. */
const SECRETS = {
  github: 'ghp_' + rep('Zq8xW3vN5', 36),
  openai: 'sk-proj-' + rep('Ab3dE5gH7jK9mN', 64),
  stripe: 'sk_live_' + rep('51HxYzAbCdEf', 40),
  aws: 'AKIA' + rep('QX7Z4K2M', 16),
};

/** Every stored object (key and body) as one text. */
async function dumpStore(objects: ObjectStore): Promise<string> {
  const all = await listAll(objects, '');
  const bodies = await Promise.all(
    all.map(async (k) => k + '\n' + text((await objects.get(k))?.body ?? new Uint8Array())),
  );
  return bodies.join('\n');
}

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
          messages: [{ role: 'user', content: `my token is ${SECRETS.github}, rotate it` }],
        },
      });
      expect(made.status).toBe(201);
      await app.background.drain();
      await app.sessions.settled();
      const res = await app.call('POST', '/v1/session_search', {
        body: { action: 'search', query: `where did I paste ${SECRETS.github} token` },
      });
      expect(res.status).toBe(200);
      await app.sessions.settled();
      // Stored objects are clean (the save pipeline did its job)...
      expect((await dumpStore(app.objects)).includes(SECRETS.github)).toBe(false);
      // ...but the query went to the external service as typed.
      const sent = server.requests.flatMap((r) => r.input).join('\n');
      expect(server.requests.length).toBeGreaterThan(0);
      expect(sent.includes(SECRETS.github), 'the raw token was POSTed to the embeddings API').toBe(
        false,
      );
    });
  }
});
