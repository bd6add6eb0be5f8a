// Review s53a, finding 5: on Lambda (functions/lambda.ts) the handler drains the background work before it
// answers, and a save's background work held its embeddings call: with a provider that does not answer,
// every save answered only after the 10 s timeout. configuration.md: "saves never wait for embeddings".
// On short-lived runtimes (Lambda, Workers) a save's background no longer calls the service: its vector
// lags, and the vector index's compaction (which a search schedules) embeds it.
import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp } from '../http/helpers.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

describe('a save on a short-lived runtime', () => {
  it('makes no embeddings request in its drain; a later search embeds the session', async () => {
    stub = await startOpenAiStub(64);
    stub.mode = 'hang';
    const app = await makeApp({
      shortLived: true,
      answersAfterBackground: true,
      env: {
        SATCHEL_EMBEDDINGS_URL: stub.url,
        SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        SATCHEL_EMBEDDINGS_DIMS: '64',
      },
    });
    const text = 'postgres vacuum stalls autovacuum stuck'; // its embedding text
    const made = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'postgres vacuum stalls',
        messages: [{ role: 'user', content: 'autovacuum stuck' }],
      },
    });
    expect(made.status).toBe(201);
    // What functions/lambda.ts awaits before it returns the answer: no request, so nothing to wait for.
    await app.background.drain();
    expect(stub.requests).toEqual([]);
    expect(app.search.health().state).toBe('ok');

    stub.mode = 'ok';
    const found = await app.call('POST', '/v1/session_search', {
      body: { action: 'search', query: 'autovacuum' },
    });
    expect(found.json.results.map((h: { id: string }) => h.id)).toEqual([made.json.id]);
    await app.background.drain();
    expect(stub.requests.flatMap((r) => r.input)).toContain(text);
    const meta = JSON.parse(
      new TextDecoder().decode((await app.objects.get('ns/alice/x/vectors_meta.json'))!.body),
    );
    const segments = await listAll(app.objects, `ns/alice/x/v/${meta.hash}/g/`);
    expect(segments.filter((k) => k.endsWith('.f32'))).toHaveLength(1);
  });
});
