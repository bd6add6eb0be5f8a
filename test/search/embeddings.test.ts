import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/server/config.js';
import { createApp } from '../../lib/http/app.js';
import { describeError } from '../../lib/model/log.js';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { listAll } from '../../lib/storage/prefix.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';

const KEY = 'sk-embeddings-secret-0123456789abcdef';
let servers: EmbeddingsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(
  options: {
    model?: string;
    objects?: ObjectStore;
    timeoutMs?: number;
    clock?: { t: number };
    server?: EmbeddingsServer;
    /** SATCHEL_EMBEDDINGS_DIMS (default 64; null: unset). */
    dims?: string | null;
  } = {},
) {
  const server = options.server ?? (await startEmbeddingsServer(64));
  if (!options.server) servers.push(server);
  const objects = options.objects ?? new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-emb-')));
  const env = {
    SATCHEL_EMBEDDINGS_URL: server.url,
    SATCHEL_EMBEDDINGS_MODEL: options.model ?? 'test-model',
    SATCHEL_EMBEDDINGS_KEY: KEY,
    ...(options.dims !== null ? { SATCHEL_EMBEDDINGS_DIMS: options.dims ?? '64' } : {}),
  };
  const config = await loadConfig(env, 'local');
  const lines: string[] = [];
  const log = {
    info: (m: string, f?: object) => lines.push(JSON.stringify({ m, ...f })),
    warn: (m: string, f?: object) => lines.push(JSON.stringify({ m, ...f })),
    error: (m: string, f?: object) => lines.push(JSON.stringify({ m, ...f })),
  };
  const clock = options.clock;
  // Failures reported as lib/http/app.ts reports them, so the log can be checked for the key.
  const embedder = new HttpEmbedder({
    ...config.embeddings!,
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(clock ? { now: () => clock.t } : {}),
    onError: (err) => log.warn('embeddings call failed', { error: describeError(err) }),
  });
  const built = createApp({ config, objects, allowOpen: true, log, embedder });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await built.app.fetch(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
    );
    return { status: res.status, json: (await res.json().catch(() => null)) as any };
  };
  return { server, objects, embedder, built, call, lines };
}

const create = (call: Awaited<ReturnType<typeof setup>>['call'], text: string) =>
  call('POST', '/v1/sessions', { task: 'job', messages: [{ role: 'user', content: text }] });

describe('vectors through an OpenAI-compatible embeddings server', () => {
  it('a save stores the vector as raw float32 with vectors_meta.json naming the space; batched calls; the key never stored', async () => {
    const { server, objects, built, call } = await setup();
    const made = await Promise.all(
      [
        'postgres vacuum stalls',
        'redis eviction storm',
        'kafka consumer lag',
        'nginx upstream timeout',
      ].map((t) => create(call, t)),
    );
    expect(made.every((r) => r.status === 201)).toBe(true);
    await built.background.drain();
    expect(
      server.requests.every((r) => r.authorization === `Bearer ${KEY}` && r.model === 'test-model'),
    ).toBe(true);
    const meta = JSON.parse(
      new TextDecoder().decode((await objects.get('ns/default/x/vectors_meta.json'))!.body),
    );
    expect(meta).toMatchObject({ space: 'http/test-model/64', dims: 64 });
    const vecs = (await listAll(objects, `ns/default/x/v/${meta.hash}/d/`)).filter((k) =>
      k.endsWith('.f32'),
    );
    expect(vecs).toHaveLength(4);
    const raw = (await objects.get(vecs[0]!))!.body;
    expect(raw.byteLength).toBe(64 * 4);
    const v = new Float32Array(raw.slice().buffer);
    expect(Math.abs(v.reduce((s, x) => s + x * x, 0) - 1)).toBeLessThan(1e-4);
    for (const k of await listAll(objects, ''))
      expect(Buffer.from((await objects.get(k))!.body).toString('latin1')).not.toContain(KEY);
    const hits = await call('POST', '/v1/session_search', {
      action: 'search',
      query: 'kafka consumer',
    });
    expect(hits.json.results.map((h: { id: string }) => h.id)).toEqual([made[2]!.json.id]);
    expect((await call('GET', '/v1/health')).json.embeddings).toMatchObject({
      configured: true,
      space: 'http/test-model/64',
      state: 'ok',
    });
  });

  it('calls made in the same tick share one request, split by the batch size; a repeated text is served from the cache', async () => {
    const server = await startEmbeddingsServer(64);
    servers.push(server);
    const embedder = new HttpEmbedder({ url: server.url, model: 'm', batchSize: 3 });
    const out = await Promise.all([
      embedder.embed(['a b']),
      embedder.embed(['c d']),
      embedder.embed(['e f', 'g h']),
    ]);
    expect(out.flat()).toHaveLength(4);
    expect(server.requests.map((r) => r.input.length).sort()).toEqual([1, 3]);
    await embedder.embed(['a b']);
    expect(server.requests).toHaveLength(2);
    expect(embedder.space()).toBe('http/m/64'); // dims learned from the first answer
  });

  it("a search's query goes ahead of the saves waiting for a request: it waits for the one in flight at most", async () => {
    const server = await startEmbeddingsServer(64);
    servers.push(server);
    server.delayMs = 100;
    const embedder = new HttpEmbedder({ url: server.url, model: 'm', dims: 64, batchSize: 4 });
    // A burst of saves: 40 texts, 10 requests one after another.
    const saves = embedder.embed(Array.from({ length: 40 }, (_, i) => `session text ${i}`));
    // The first request is in flight (the server has it; its answer waits 100 ms).
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 1));
    const [query] = await embedder.embed(['the query'], true);
    expect(query).toHaveLength(64);
    await saves;
    expect(server.requests).toHaveLength(11);
    expect(server.requests.findIndex((r) => r.input.includes('the query'))).toBe(1);
  });

  it('an answer whose vectors repeat an index is refused, not taken with a vector missing', async () => {
    const server = await startEmbeddingsServer(64);
    servers.push(server);
    server.mode = 'repeat-index';
    const embedder = new HttpEmbedder({ url: server.url, model: 'm', dims: 64 });
    await expect(embedder.embed(['one text', 'another text'])).rejects.toThrow(/repeated index/);
  });

  it('outage: after a failed call no call for 30 s; saves succeed and searches answer lexically; then calls resume', async () => {
    const clock = { t: Date.now() };
    const { server, built, call, lines } = await setup({ clock });
    server.mode = 'fail';
    const first = await create(call, 'terraform state lock');
    expect(first.status).toBe(201);
    await built.background.drain();
    const failedCalls = server.requests.length;
    expect(failedCalls).toBeGreaterThan(0);
    expect((await call('GET', '/v1/health')).json.embeddings.state).toBe('cooldown');
    expect(lines.some((l) => l.includes('embeddings call failed') && l.includes('500'))).toBe(true);
    expect(lines.join('\n')).not.toContain(KEY);
    server.mode = 'ok';
    // Within the cooldown: saves and searches make no call at all, and still work.
    clock.t += 29_000;
    const second = await create(call, 'terraform plan drift');
    expect(second.status).toBe(201);
    const during = await call('POST', '/v1/session_search', {
      action: 'search',
      query: 'terraform lock',
    });
    expect(during.json.results.map((h: { id: string }) => h.id)).toEqual([first.json.id]);
    await built.background.drain();
    expect(server.requests.length).toBe(failedCalls);
    // After it: the next search embeds its query again.
    clock.t += 2_000;
    const after = await call('POST', '/v1/session_search', {
      action: 'search',
      query: 'terraform drift',
    });
    expect(after.json.results.map((h: { id: string }) => h.id)).toEqual([second.json.id]);
    expect(server.requests.length).toBeGreaterThan(failedCalls);
  });

  it('a hanging server: the timeout ends the call, the save and the search still answer', async () => {
    const { server, built, call } = await setup({ timeoutMs: 300 });
    server.mode = 'hang';
    const started = Date.now();
    const made = await create(call, 'grpc deadline exceeded');
    expect(made.status).toBe(201);
    const found = await call('POST', '/v1/session_search', {
      action: 'search',
      query: 'grpc deadline',
    });
    expect(found.json.results.map((h: { id: string }) => h.id)).toEqual([made.json.id]);
    await built.background.drain();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await call('GET', '/v1/health')).json.embeddings.state).toBe('cooldown');
  });

  it('a change of model rebuilds the vectors in the new space and drops the old ones', async () => {
    const first = await setup({ model: 'model-a' });
    await create(first.call, 'helm chart values');
    await first.built.background.drain();
    const oldMeta = JSON.parse(
      new TextDecoder().decode((await first.objects.get('ns/default/x/vectors_meta.json'))!.body),
    );
    const second = await setup({ model: 'model-b', objects: first.objects, server: first.server });
    await second.call('POST', '/v1/session_search', { action: 'search', query: 'helm chart' });
    await second.built.background.drain();
    const meta = JSON.parse(
      new TextDecoder().decode((await first.objects.get('ns/default/x/vectors_meta.json'))!.body),
    );
    expect(meta.space).toBe('http/model-b/64');
    expect(await listAll(first.objects, `ns/default/x/v/${oldMeta.hash}/`)).toEqual([]);
    // The new space was built from the session objects by the compaction the search scheduled.
    expect((await listAll(first.objects, `ns/default/x/v/${meta.hash}/g/`)).length).toBeGreaterThan(
      0,
    );
    expect(first.server.requests.some((r) => r.model === 'model-b')).toBe(true);
  });

  it('without SATCHEL_EMBEDDINGS_DIMS the space is learned from the first answer: saves, searches and deletes use vectors', async () => {
    const texts = ['postgres vacuum stalls', 'redis eviction storm', 'kafka consumer lag'];
    const first = await setup({ dims: null });
    expect(first.embedder.space()).toBeNull();
    const made: string[] = [];
    for (const t of texts) made.push((await create(first.call, t)).json.id as string);
    await first.built.background.drain();
    const meta = JSON.parse(
      new TextDecoder().decode((await first.objects.get('ns/default/x/vectors_meta.json'))!.body),
    );
    expect(meta).toMatchObject({ space: 'http/test-model/64', dims: 64 });
    const vectorKeys = () => listAll(first.objects, `ns/default/x/v/${meta.hash}/`);
    expect((await vectorKeys()).filter((k) => k.endsWith('.f32'))).toHaveLength(3);
    // A new process learns the space from its first search (the query's vector) and ranks with it.
    const second = await setup({ dims: null, objects: first.objects, server: first.server });
    const hits = await second.call('POST', '/v1/session_search', {
      action: 'search',
      query: 'kafka consumer',
    });
    expect(hits.json.results.map((h: { id: string }) => h.id)).toEqual([made[2]]);
    expect(second.embedder.space()).toBe('http/test-model/64');
    // A third, fresh, deletes: its purge finds the vectors too.
    const third = await setup({ dims: null, objects: first.objects, server: first.server });
    expect((await third.call('DELETE', `/v1/sessions/${made[2]}`)).status).toBe(204);
    await third.built.background.drain();
    const left = await Promise.all(
      (await vectorKeys()).map(
        async (k) => k + new TextDecoder().decode((await first.objects.get(k))!.body),
      ),
    );
    expect(left.some((body) => body.includes(made[0]!))).toBe(true);
    expect(left.some((body) => body.includes(made[2]!))).toBe(false);
  });
});
