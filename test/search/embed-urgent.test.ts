// A search whose embeddings space is still unknown (no SATCHEL_EMBEDDINGS_DIMS, no answer yet) learns it
// from its own query, sent `urgent` (ahead of the saves waiting for a request; review s50a): the probe
// went without it, and the search waited behind every queued save (minutes after an import).
import { describe, expect, it } from 'vitest';
import { SearchEngine } from '../../lib/search/engine.js';
import type { Embedder } from '../../lib/search/embed.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { searchProcess } from '../support/search-process.js';

/** An embedder that learns its space from its first answer, and records each call's urgency. */
function recording(): Embedder & { calls: { texts: string[]; urgent: boolean }[] } {
  let space: string | null = null;
  const calls: { texts: string[]; urgent: boolean }[] = [];
  return {
    calls,
    calibrated: true,
    space: () => space,
    available: () => true,
    embed: async (texts, urgent = false) => {
      calls.push({ texts, urgent });
      space = 'http/m/4';
      return texts.map(() => Float32Array.from([0.5, 0.5, 0.5, 0.5]));
    },
    state: () => ({ configured: true, space, state: 'ok' }),
  };
}

describe('a search in a space not yet known', () => {
  it("sends its probe urgent, ahead of the saves' texts", async () => {
    const objects = new MemoryStore();
    const { sessions, settle, engine: first } = searchProcess(objects);
    await sessions.create('ns', {
      task: 'kafka lag',
      messages: [{ role: 'user', content: 'kafka lag again' }],
    });
    await settle();
    await first.search('ns', 'kafka', 5); // the lexical index is built
    await settle();
    const embedder = recording();
    const errors: unknown[] = [];
    const engine = new SearchEngine(searchProcess(objects).sessions, embedder, {
      freshnessMs: 0,
      onError: (what, err) => errors.push([what, String(err)]),
    });
    const hits = await engine.search('ns', 'kafka lag', 5);
    expect(errors).toEqual([]);
    expect(hits.map((h) => h.task)).toEqual(['kafka lag']);
    expect(embedder.calls[0]).toEqual({ texts: ['kafka lag'], urgent: true });
    expect(embedder.calls.every((c) => c.urgent)).toBe(true);
  });
});
