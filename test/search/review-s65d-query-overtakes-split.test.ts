// Review s65d, finding 1 (fixed 2026-12-07; the tests failed on the code before the fix). A save batch the
// service refused (a model with a short context: each long text refused alone) was split into halves, then
// single inputs, then a one-word request: up to 2n requests, and a search's query waited behind all of them,
// although docs/design.md promised "the request in flight and its own". Queries waiting now overtake a split
// in progress: each next request of the split goes after them.
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
const long = (i: number) => `session ${i} ` + 'word '.repeat(400);

/** Resolves once `done` holds of the requests the stub has received. */
async function until(done: (requests: { input: string[] }[]) => boolean): Promise<void> {
  while (!done(stub!.requests)) await new Promise((r) => setTimeout(r, 1));
}

/** Resolves once the stub has received `n` requests (the last one is then in flight: the stub delays). */
const received = (n: number) => until((requests) => requests.length >= n);

/** The index of the request that holds `text`, from `from` on. */
function requestOf(text: string, from = 0): number {
  return stub!.requests.findIndex((r, i) => i >= from && r.input.includes(text));
}

/** An embedder (batches of 8) with a batch of 8 save texts sent, each of which the service refuses alone. */
async function splitting(onError?: (e: unknown) => void) {
  stub = await startOpenAiStub(64);
  stub.delayMs = 100;
  const embedder = new HttpEmbedder({ url: stub.url, model: 'm', batchSize: 8, onError });
  await embedder.embed(['warm up']);
  stub.refuse = (t) => t.length > 1000;
  const before = stub.requests.length;
  const texts = Array.from({ length: 8 }, (_, i) => long(i));
  return { embedder, before, saves: embedder.embed(texts, false, { save: true }) };
}

describe("a search's query while a refused save batch is being split", () => {
  it('goes right after the request in flight, at any step of the split', async () => {
    const { embedder, before, saves } = await splitting();
    // The whole batch is in flight (it will be refused).
    await received(before + 1);
    const first = embedder.embed(['postgres vacuum'], true);
    // Another query while that one is in flight goes next too, not after a request of the split.
    await received(before + 2);
    const [[v1], [v2]] = await Promise.all([first, embedder.embed(['redis eviction'], true)]);
    // Later, deep in the split (halves, quarters, single inputs).
    await received(before + 7);
    const [v3] = await embedder.embed(['kafka lag'], true);
    expect([v1!, v2!, v3!].map(zero)).toEqual([false, false, false]);
    // Before the fix: after the whole split, 15 requests and the one-word probe.
    expect(requestOf('postgres vacuum', before)).toBe(before + 1);
    expect(requestOf('redis eviction', before)).toBe(before + 2);
    expect(requestOf('kafka lag', before)).toBe(before + 7);
    // The rest as before: every text refused alone gets zeros, the probe is made once.
    const out = await saves;
    expect(out.filter(zero)).toHaveLength(8);
    expect(stub!.requests.length - before).toBe(2 * 8 - 1 + 1 + 3);
    expect(requestOf('satchel', before)).toBeGreaterThan(before);
    expect(embedder.state().state).toBe('ok');
  });

  it('a query failing meanwhile starts one cooldown and ends the split', async () => {
    const errors: unknown[] = [];
    const { embedder, before, saves } = await splitting((e) => errors.push(e));
    const savesSettled = saves.then(
      () => null,
      (e: unknown) => e,
    );
    await received(before + 1);
    const query = embedder.embed(['postgres vacuum'], true);
    const querySettled = query.then(
      () => null,
      (e: unknown) => e,
    );
    // The query's request is in flight: it fails (500).
    await received(before + 2);
    stub!.mode = 'fail';
    expect(stub!.requests[before + 1]!.input).toEqual(['postgres vacuum']);
    expect(await querySettled).toBeInstanceOf(EmbeddingsUnavailableError);
    stub!.mode = 'ok';
    expect(await savesSettled).toBeInstanceOf(EmbeddingsUnavailableError);
    // No request of the split during the cooldown, and the failure reported once.
    expect(stub!.requests.length).toBe(before + 2);
    expect(errors).toHaveLength(1);
    expect(embedder.state().state).toBe('cooldown');
  });

  it('a search answers after at most the request in flight and its own', async () => {
    stub = await startOpenAiStub(64);
    stub!.delayMs = 100;
    const embedder = new HttpEmbedder({ url: stub!.url, model: 'm' });
    const d = searchDevice(tempLocalStore('s65d-overtake'), {}, embedder);
    await d.sessions.create('ns', { id: 'first', task: 'postgres vacuum', messages: [] }, d.ctx);
    await d.drainAll();
    stub!.refuse = (t) => t.length > 1000;
    const before = stub!.requests.length;
    await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        d.sessions.create(
          'ns',
          {
            id: `s${i}`,
            task: `task ${i}`,
            messages: [{ role: 'user', content: 'word '.repeat(400) }],
          },
          d.ctx,
        ),
      ),
    );
    // A large batch of the saves' texts is refused, and its split is under way (28 requests or more to go).
    await until((requests) => {
      const big = requests.findIndex((r, i) => i >= before && r.input.length >= 16);
      return big >= 0 && requests.length >= big + 3;
    });
    // The requests received when the search hands its query to the embedder (the real one, watched).
    let at = -1;
    const embed = embedder.embed.bind(embedder);
    embedder.embed = (texts, urgent, options) => {
      if (urgent && texts.includes('vacuum of postgres')) at = stub!.requests.length;
      return embed(texts, urgent, options);
    };
    const hits = await d.search('ns', 'vacuum of postgres', 5);
    expect(hits.map((h) => h.id)).toContain('first');
    // Right after the request in flight (or one on its way to the service when the query came).
    // Before the fix the query went after the whole split: about 60 requests later.
    const query = requestOf('vacuum of postgres', before);
    expect(at).toBeGreaterThan(before);
    expect(query).toBeGreaterThanOrEqual(at);
    expect(query).toBeLessThanOrEqual(at + 1);
    await d.drainAll();
  });
});
