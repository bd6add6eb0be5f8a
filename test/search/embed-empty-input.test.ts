// Review s53a, finding 1: a session whose embedded text is empty (task "" and no user or assistant text,
// which the API allows) was sent to the embeddings service as `""`, in one batch with other sessions'
// texts. OpenAI's API refuses a batch holding an empty string with 400: the whole batch failed, the
// process cooled down for 30 s (every namespace's search lexical), and every vector compaction sent `""`
// again, so vector search never recovered. Now a blank text is never sent (the session has no vector, and
// does not lag), and a 400 to a batch of several inputs splits it instead of cooling down.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { unattended } from '../../lib/model/context.js';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { loadConfig } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { captureLogs } from '../support/logs.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const env = (url: string) => ({
  SATCHEL_EMBEDDINGS_URL: url,
  SATCHEL_EMBEDDINGS_MODEL: 'text-embedding-3-small',
  SATCHEL_EMBEDDINGS_DIMS: '64',
});

describe('an empty embedding text', () => {
  it('is never sent; the other sessions get their vectors, and the empty one does not lag', async () => {
    stub = await startOpenAiStub(64);
    const app = await makeApp({ env: env(stub.url) });
    const made = await Promise.all([
      app.call('POST', '/v1/sessions', { body: { task: '' } }),
      app.call('POST', '/v1/sessions', {
        body: { task: '   ', messages: [{ role: 'user', content: ' ' }] },
      }),
      app.call('POST', '/v1/sessions', {
        body: {
          task: 'postgres vacuum stalls',
          messages: [{ role: 'user', content: 'autovacuum is stuck' }],
        },
      }),
      app.call('POST', '/v1/sessions', {
        body: {
          task: 'kafka consumer lag',
          messages: [{ role: 'user', content: 'lag grows at night' }],
        },
      }),
    ]);
    expect(made.map((m) => m.status)).toEqual([201, 201, 201, 201]);
    await settleAll(app);

    const sent = stub.requests.flatMap((r) => r.input);
    expect(sent.filter((t) => t.trim() === '')).toEqual([]);
    expect((await app.call('GET', '/v1/health', { token: null })).json.embeddings.state).toBe('ok');
    const records = (await listAll(app.objects, '')).filter((k) => /\/x\/v\/[^/]+\/d\//.test(k));
    for (const m of made.slice(2))
      expect(records.some((k) => k.includes(`/d/${m.json.id}/`))).toBe(true);
    // A search, then its compaction: no session is left lagging, so the next search builds nothing.
    const found = await app.call('POST', '/v1/session_search', {
      body: { action: 'search', query: 'postgres vacuum' },
    });
    expect(found.json.results.map((h: { id: string }) => h.id)).toEqual([made[2]!.json.id]);
    await settleAll(app);
    const vectors = (await app.search.vectors('alice'))!;
    const live = (await app.sessions.manifest.view('alice')).entries;
    expect(live).toHaveLength(4);
    expect((await vectors.resolve('alice', live, false, unattended)).missing).toEqual([]);
    expect(stub.requests.flatMap((r) => r.input).filter((t) => t.trim() === '')).toEqual([]);
  });

  it('leaves vector search working after the cooldown: compaction never resends it', async () => {
    stub = await startOpenAiStub(64);
    const clock = { t: Date.now() };
    const config = await loadConfig(env(stub.url), 'local');
    const embedder = new HttpEmbedder({ ...config.embeddings!, now: () => clock.t });
    const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-empty-')));
    const app = createApp({ config, objects, allowOpen: true, log: captureLogs(), embedder });
    const call = async (path: string, body: unknown) => {
      const res = await app.app.fetch(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      return { status: res.status, json: (await res.json()) as any };
    };
    const a = await call('/v1/sessions', {
      task: 'postgres vacuum stalls',
      messages: [{ role: 'user', content: 'autovacuum is stuck' }],
    });
    await settleAll(app);
    const e = await call('/v1/sessions', { task: '' });
    expect([a.status, e.status]).toEqual([201, 201]);
    await settleAll(app);
    const rounds: { sentBlank: boolean; state: string }[] = [];
    for (let round = 0; round < 3; round++) {
      clock.t += 31_000;
      const before = stub.requests.length;
      const res = await call('/v1/session_search', { action: 'search', query: 'postgres vacuum' });
      expect(res.status).toBe(200);
      await settleAll(app);
      rounds.push({
        sentBlank: stub.requests.slice(before).some((r) => r.input.some((t) => t.trim() === '')),
        state: embedder.state().state,
      });
    }
    expect(rounds).toEqual([0, 1, 2].map(() => ({ sentBlank: false, state: 'ok' })));
  });
});

describe('a batch the service refuses (400)', () => {
  it('is split: the refused input alone gets no vector, the others theirs, and no cooldown', async () => {
    stub = await startOpenAiStub(64);
    stub.refuse = (t) => t.includes('poison');
    const errors: unknown[] = [];
    const embedder = new HttpEmbedder({
      url: stub.url,
      model: 'm',
      dims: 64,
      onError: (err) => errors.push(err),
    });
    const texts = Array.from({ length: 20 }, (_, i) => (i === 13 ? 'poison text' : `text ${i}`));
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(20);
    const zero = (v: Float32Array) => v.every((x) => x === 0);
    expect(vectors.map(zero)).toEqual(texts.map((_, i) => i === 13));
    expect(vectors.every((v) => v.length === 64)).toBe(true);
    expect(embedder.state().state).toBe('ok');
    expect(errors).toEqual([]);
    // Halves, then single inputs: about 2 log2(n) requests for one refused input, not one per input.
    expect(stub.requests.length).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(20)));
    // Each text that got a vector went in exactly one accepted request.
    const sentOk = stub.requests.filter((r) => !r.input.some((t) => t.includes('poison')));
    expect(sentOk.flatMap((r) => r.input).sort()).toEqual(
      texts.filter((t) => t !== 'poison text').sort(),
    );
    // Blank texts cost no request at all.
    const before = stub.requests.length;
    const blank = await embedder.embed(['', '  \n ']);
    expect(blank.map(zero)).toEqual([true, true]);
    expect(stub.requests.length).toBe(before);
  });

  it('when it refuses every input, the service is failing: a cooldown after a few requests', async () => {
    stub = await startOpenAiStub(64);
    stub.refuse = () => true; // a model that does not take `dimensions`, say
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', dims: 64 });
    const texts = Array.from({ length: 64 }, (_, i) => `text ${i}`);
    await expect(embedder.embed(texts)).rejects.toThrow(/400/);
    expect(embedder.state().state).toBe('cooldown');
    expect(stub.requests.length).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(64)));
  });
});
