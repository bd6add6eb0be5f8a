// Review s63d, finding 3 (fixed 2026-12-07; the test failed on the code before the fix). Once the service
// had answered one request, one that answered 400 to everything (a proxy wrapping upstream failures as
// BadRequest, a revoked model) was taken as every input's fault: each batch of 64 became 127 requests,
// every text got zeros, which a save stores as "no vector, not asked again", no cooldown started and
// /v1/health said ok. Now the first input refused alone while none of its batch was taken is followed by
// a one-word request: refused too, the service is failing (a cooldown; no text gets zeros, the vectors lag
// and compaction makes them later); taken, the input is at fault (zeros, as before).
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddingsUnavailableError, HttpEmbedder } from '../../lib/search/embed.js';
import { searchDevice } from '../support/search-device.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';
import { tempLocalStore } from '../support/temp-store.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const zero = (v: Float32Array) => v.every((x) => x === 0);

describe('a service that answers 400 to everything after it once answered', () => {
  it('is failing: a few requests, then a cooldown, and no text gets zeros', async () => {
    stub = await startOpenAiStub(256);
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm' });
    await embedder.embed(['warm up'], false, { ns: 'ns' });
    stub.refuse = () => true;
    const before = stub.requests.length;
    const texts = Array.from({ length: 64 }, (_, i) => `session text ${i}`);
    const out = embedder.embed(texts, false, { ns: 'ns', save: true });
    await expect(out).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    // The batch, its first half, quarter ... down to one input, then one word (127 before the fix).
    expect(stub.requests.length - before).toBe(8);
    expect(embedder.state().state).toBe('cooldown');
  });

  it('a text alone in its request: refused with a one-word request, a cooldown', async () => {
    stub = await startOpenAiStub(256);
    let now = Date.now();
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', now: () => now });
    await embedder.embed(['warm up']);
    stub.refuse = () => true;
    await expect(embedder.embed(['a save text'], false, { save: true })).rejects.toBeInstanceOf(
      EmbeddingsUnavailableError,
    );
    expect(stub.requests.slice(-2).map((r) => r.input)).toEqual([['a save text'], ['satchel']]);
    expect(embedder.state().state).toBe('cooldown');
    // Back after the cooldown: the text gets its vector (before the fix it had zeros at once).
    stub.refuse = () => false;
    now += 31_000;
    const [v] = await embedder.embed(['a save text'], false, { save: true });
    expect(zero(v!)).toBe(false);
  });

  it('texts saved meanwhile lag, and get their vectors once the service is back', async () => {
    stub = await startOpenAiStub(256);
    let now = Date.now();
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', now: () => now });
    const device = searchDevice(tempLocalStore('s63d-embed-400'), {}, embedder);
    const create = async (id: string) => {
      await device.sessions.create(
        'ns',
        { id, task: `postgres vacuum ${id}`, messages: [] },
        device.ctx,
      );
      await device.drainAll();
    };
    await create('before');
    stub.refuse = () => true;
    await create('during');
    expect(embedder.state().state).toBe('cooldown');
    stub.refuse = () => false;
    now += 31_000;
    await device.search('ns', 'postgres', 10); // schedules the compaction that embeds what lags
    await device.drainAll();
    const vectors = (await device.engine.vectors('ns'))!;
    await vectors.compact('ns');
    const live = (await device.sessions.manifest.view('ns')).entries;
    const res = await vectors.resolve('ns', live, false, device.schedule);
    const vectorOf = (id: string) => {
      const ref = res.live.get(id);
      if (!ref) return null;
      return 'doc' in ref ? ref.doc : res.segments[ref.si]!.row(ref.di);
    };
    // Before the fix `during` was stored as zeros (no vector, for good).
    expect(['before', 'during'].map((id) => zero(vectorOf(id)!))).toEqual([false, false]);
  });
});

describe('inputs the service refuses while it takes others (as before the fix)', () => {
  it('get zeros; only an input refused before any other was taken costs a one-word request', async () => {
    stub = await startOpenAiStub(256);
    stub.refuse = (t) => t.includes('poison');
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm' });
    await embedder.embed(['warm up']);
    // One in each half: the halves are refused, but their other inputs are taken.
    const texts = Array.from({ length: 64 }, (_, i) =>
      i === 5 || i === 50 ? 'poison' : `kafka lag report ${i}`,
    );
    const out = await embedder.embed(texts);
    expect(out.flatMap((v, i) => (zero(v) ? [i] : []))).toEqual([5, 50]);
    const probes = () => stub!.requests.filter((r) => r.input[0] === 'satchel').length;
    expect(probes()).toBe(0);
    // Alone in its request (a query too long for the model, say): the one-word request is taken.
    const [alone] = await embedder.embed(['poison query'], true);
    expect(zero(alone!)).toBe(true);
    expect(probes()).toBe(1);
    expect(embedder.state().state).toBe('ok');
  });
});
