// Review s53f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// docs/design.md ("Search"): "at most 256 save texts wait for a request (more are dropped ...)"; embed.ts
// counts only texts sent with `{ save: true }`. Without SATCHEL_EMBEDDINGS_DIMS (documented: "the vector
// size is learned from the first answer, a process's first save or search making that call") a save's
// background work first calls `engine.vectors(ns, doc)`, which embeds the save's whole text as the probe
// (engine.ts `vectors`: `embed([probe], urgent, { ns })`), without `save: true`: until the service has
// answered once, every save's text waits, with no bound. A slow service at start (or one down since
// start, once per cooldown) piles up the texts of every save made meanwhile.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { loadConfig } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

it('without DIMS, the save texts waiting for a slow service stay within the bound', async () => {
  stub = await startOpenAiStub(64);
  stub.delayMs = 1500; // slow, never failing
  const config = await loadConfig(
    { SATCHEL_EMBEDDINGS_URL: stub.url, SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small' },
    'local',
  );
  // batchSize 4: the bound is 4 batches, 16 texts (as in test/search/embed-queue-bound.test.ts).
  const embedder = new HttpEmbedder({ ...config.embeddings!, batchSize: 4 });
  const waiting = embedder as unknown as { queue: unknown[] };
  const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s53f-')));
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
  stub.delayMs = 0;
  await app.background.drain();
  expect(most).toBeLessThanOrEqual(16);
});
