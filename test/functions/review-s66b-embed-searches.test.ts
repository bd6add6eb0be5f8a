// Review s66b, finding 1 (fixed 2026-12-07): on Workers with an embeddings service, HttpEmbedder's queue and
// its flush loop were isolate-wide. A search whose query queued behind another request's call waited on a
// promise only that request's I/O settled: workerd cancelled it as hung (a plain-text 500). Once the first
// request answered while its loop still sent the other's query, workerd ended the loop, `flushing` stayed
// true, and every later search in the isolate answered 500 with no request to the service. Contract: a
// search answers 200 (lexical when the service fails), and a 5xx only as problem+json.
import type { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';
import { startWorkerd } from '../support/workerd.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';
import { startChatServer } from '../support/chat-server.js';

const TOKEN = 'tok_s66b_worker_4Tq8';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let script: string;
let emb: EmbeddingsServer;
const instances: Miniflare[] = [];

beforeAll(async () => {
  emb = await startEmbeddingsServer(64);
  // The R2-only bundle, built as for deployment (test/functions/worker.test.ts).
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s66b-'));
  script = await buildWorker(join(dir, 'r2', 'worker-r2.js'), { s3: false });
}, 120_000);
afterAll(async () => {
  await Promise.all(instances.splice(0).map((mf) => mf.dispose()));
  await emb?.close();
});

/** A Worker with the embeddings service and a few sessions, searched once (the vector index set up). */
async function worker(env: Record<string, string> = {}): Promise<Miniflare> {
  emb.delayMs = 0;
  emb.mode = 'ok';
  const mf = startWorkerd(script, {
    SATCHEL_TOKENS: `edge/w=${TOKEN}`,
    SATCHEL_LOG: 'off',
    SATCHEL_EMBEDDINGS_URL: emb.url,
    SATCHEL_EMBEDDINGS_MODEL: 'stub',
    SATCHEL_EMBEDDINGS_DIMS: '64',
    ...env,
  });
  instances.push(mf);
  for (const name of ['api', 'web', 'db', 'cache']) {
    const r = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: `deploy the ${name} service` }),
    });
    expect(r.status).toBe(201);
    await r.arrayBuffer();
  }
  expect(await search(mf, 'deploy service')).toMatch(/^200 \{"results":\[\{/);
  return mf;
}

/** A search's status and the start of its body. */
async function search(mf: Miniflare, query: string): Promise<string> {
  const r = await mf.dispatchFetch('http://w/v1/session_search', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ action: 'search', query }),
  });
  return `${r.status} ${(await r.text()).slice(0, 120)}`;
}

/** The queries the service was asked for since request `from`. */
const asked = (from: number) => emb.requests.slice(from).flatMap((r) => r.input);

describe('Worker: searches at once in one isolate with an embeddings service', () => {
  it('answers both overlapping searches, and a later one still asks the service', async () => {
    const mf = await worker();
    const before = emb.requests.length;
    emb.delayMs = 600; // slow but healthy: B's query is embedded while A's request is in flight
    const a = search(mf, 'the api service');
    await new Promise((r) => setTimeout(r, 200));
    const b = search(mf, 'the web service');
    expect([await a, await b]).toEqual([
      expect.stringMatching(/^200 \{"results":\[\{/),
      expect.stringMatching(/^200 \{"results":\[\{/),
    ]);
    emb.delayMs = 0;
    expect(await search(mf, 'the db service')).toMatch(/^200 \{"results":\[\{/);
    expect(asked(before)).toEqual(
      expect.arrayContaining(['the api service', 'the web service', 'the db service']),
    );
  }, 120_000);

  it('answers four searches sent at once to a fast service, and one alone after them', async () => {
    const mf = await worker();
    const before = emb.requests.length;
    emb.delayMs = 20;
    const all = await Promise.all([0, 1, 2, 3].map((i) => search(mf, `deploy query ${i}`)));
    expect(all).toEqual(all.map(() => expect.stringMatching(/^200 \{"results":/)));
    emb.delayMs = 0;
    expect(await search(mf, 'the cache service')).toMatch(/^200 \{"results":\[\{/);
    expect(asked(before)).toContain('the cache service');
  }, 120_000);

  // Suspected item 1: continue's turn gives up on its session_search at its deadline (turn.ts untilAborted)
  // while the service holds its query. Before the fix the next search's query waited behind that call in
  // the turn's loop (9 s here) and was never sent; had the turn's request been cut off, never at all.
  it('a search after a continue turn that gave up on its session_search still asks the service', async () => {
    const chat = await startChatServer({
      toolCalls: [
        { name: 'session_search', arguments: { action: 'search', query: 'deploy failure' } },
      ],
    });
    try {
      const mf = await worker({
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_MODEL_TIMEOUT_MS: '2000',
      });
      const created = await mf.dispatchFetch('http://w/v1/sessions', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ task: 'deploy failure notes' }),
      });
      const { id } = (await created.json()) as { id: string };
      const before = emb.requests.length;
      emb.mode = 'hang';
      const turn = await mf.dispatchFetch(`http://w/v1/sessions/${id}/continue`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': 'k-s66b-1' },
        body: JSON.stringify({ message: 'what failed?' }),
      });
      await turn.arrayBuffer();
      expect(turn.status).toBeGreaterThanOrEqual(500);
      expect(asked(before)).toContain('deploy failure');
      emb.mode = 'ok';
      expect(await search(mf, 'failure notes')).toMatch(/^200 \{"results":\[\{/);
      expect(asked(before)).toContain('failure notes');
    } finally {
      await chat.close();
    }
  }, 120_000);
});
