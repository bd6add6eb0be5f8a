// Review s53a, finding 7: a search's query went ahead of the save texts waiting for a request, but shared
// its request with up to 63 of them (6,000 characters each): a search waited for a large request it did
// not need. A query now goes in a request of its own (with the other queries waiting, if any).
import { afterEach, describe, expect, it } from 'vitest';
import { HttpEmbedder } from '../../lib/search/embed.js';
import { startOpenAiStub, type OpenAiStub } from '../support/openai-embeddings-stub.js';

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

describe("a search's query", () => {
  it("goes in a request of its own, not with the saves' texts", async () => {
    stub = await startOpenAiStub(64);
    stub.delayMs = 50;
    const embedder = new HttpEmbedder({ url: stub.url, model: 'm', dims: 64 });
    const long = (i: number) => `session ${i} `.repeat(500).slice(0, 6000);
    const saves = embedder.embed(
      Array.from({ length: 100 }, (_, i) => long(i)),
      false,
      { ns: 'a' },
    );
    while (stub.requests.length === 0) await new Promise((r) => setTimeout(r, 1));
    const queries = Promise.all([
      embedder.embed(['the query'], true, { ns: 'a' }),
      embedder.embed(['another query'], true, { ns: 'b' }),
    ]);
    const [[q1], [q2]] = await queries;
    expect([q1!.length, q2!.length]).toEqual([64, 64]);
    await saves;
    const withQuery = stub.requests.filter((r) => r.input.some((t) => t.includes('query')));
    expect(withQuery.map((r) => r.input.sort())).toEqual([['another query', 'the query']]);
    // It went right after the request in flight, ahead of the saves still waiting.
    expect(stub.requests.indexOf(withQuery[0]!)).toBe(1);
    expect(stub.requests.flatMap((r) => r.input)).toHaveLength(102);
  });
});
