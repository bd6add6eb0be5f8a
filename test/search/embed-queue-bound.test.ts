// Review s53a, finding 6: the HttpEmbedder sends one request at a time and queued every other save's text
// without a bound. While the provider was slow but healthy (no failure, so no cooldown), saves arriving
// faster than a batch per round trip piled up in memory, each holding its text and its stored session.
// Now the save texts waiting are capped (4 batches); past the cap a save's text is dropped at once (its
// session's vector lags, and the vector index's compaction builds it later).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { EmbeddingsUnavailableError, HttpEmbedder } from '../../lib/search/embed.js';
import { loadConfig } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

/** Resolves once `test` holds (polling; the test's own timeout bounds it). */
async function until(test: () => boolean): Promise<void> {
  while (!test()) await new Promise((r) => setTimeout(r, 5));
}

describe('save texts waiting for the embeddings service', () => {
  it('are capped at 4 batches; past it a save text is dropped at once, and a query still goes', async () => {
    stub = await startOpenAiStub(64);
    stub.mode = 'hang';
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', dims: 64, batchSize: 8 });
    const waiting = embedder as unknown as { queue: unknown[] };
    const first = embedder.embed(['in flight'], false, { ns: 'a', save: true });
    first.catch(() => undefined);
    await until(() => stub!.requests.length === 1);
    const saves = Array.from({ length: 50 }, (_, i) =>
      embedder.embed([`save ${i}`], false, { ns: 'a', save: true }).then(
        () => 'embedded',
        (err) => (err instanceof EmbeddingsUnavailableError ? 'dropped' : String(err)),
      ),
    );
    // Dropped at once: they settle while the request in flight still hangs.
    expect(await Promise.all(saves.slice(32))).toEqual(Array.from({ length: 18 }, () => 'dropped'));
    expect(waiting.queue).toHaveLength(32);
    // A search's query is not a save's text: it is never dropped.
    const query = embedder.embed(['the query'], true, { ns: 'a' });
    expect(waiting.queue).toHaveLength(33);
    await stub.close();
    stub = undefined;
    await Promise.allSettled([first, query, ...saves]);
  });

  // The second case: review s53f. Without DIMS a save's text was the space's probe, sent without the save
  // flag: until the service had answered once, every save's text waited, with no bound (56 of 16 here).
  it.each([
    ['with DIMS', { SATCHEL_EMBEDDINGS_DIMS: '64' }, 300],
    ['without DIMS (the save text is the first probe)', {}, 1500],
  ])(
    'a burst of saves on a slow service, %s: the queue stays within its bound',
    async (_, env, delayMs) => {
      stub = await startOpenAiStub(64);
      stub.delayMs = delayMs; // slow, never failing
      const config = await loadConfig(
        {
          SATCHEL_EMBEDDINGS_URL: stub.url,
          SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
          ...env,
        },
        'local',
      );
      // batchSize 4: the bound is 4 batches, 16 texts.
      const embedder = new HttpEmbedder({ ...config.embeddings!, batchSize: 4 });
      const waiting = embedder as unknown as { queue: unknown[] };
      const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-queue-')));
      const app = createApp({ config, objects, allowOpen: true, log: captureLogs(), embedder });
      let most = 0;
      for (let wave = 0; wave < 4; wave++) {
        const made = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const res = await app.app.fetch(
              new Request('http://localhost/v1/sessions', {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({
                  task: `incident ${wave}-${i}`,
                  messages: [{ role: 'user', content: `pager ${wave} ${i} `.repeat(50) }],
                }),
              }),
            );
            return res.status;
          }),
        );
        expect(made.every((s) => s === 201)).toBe(true);
        await new Promise((r) => setTimeout(r, 20));
        most = Math.max(most, waiting.queue.length);
      }
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(16);
      stub.delayMs = 0;
      await app.background.drain();
      expect(waiting.queue).toHaveLength(0);
    },
  );
});
