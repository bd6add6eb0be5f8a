// Review s59d (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// An embeddings answer whose numbers are finite doubles but beyond float32's range (|x| > 3.4e38) passed
// the answer check (Number.isFinite), became Infinity in Float32Array.from and NaN after normalize: the NaN
// vector was taken as a good one (no cooldown) and stored in the index, and every cosine with it was NaN,
// which rankVectors' sort has no consistent order for. docs/design.md ("Vectors"): after an answer it
// cannot use, no call is made for 30 s and search is lexical meanwhile. Now such an answer is refused as
// malformed (EmbeddingsUnavailableError, so the cooldown applies), and rankVectors skips a NaN vector
// stored before the fix.
import { describe, expect, it } from 'vitest';
import { HttpEmbedder, normalize } from '../../lib/search/embed.js';
import { rankVectors } from '../../lib/search/engine.js';
import type { VecSegment } from '../../lib/search/segment.js';

function answering(embedding: number[]): HttpEmbedder {
  return new HttpEmbedder({
    url: 'http://embeddings.invalid',
    model: 'm',
    dims: embedding.length,
    fetch: (async () =>
      new Response(JSON.stringify({ data: [{ index: 0, embedding }] }), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      })) as typeof fetch,
  });
}

async function outcome(embedder: HttpEmbedder) {
  return embedder.embed(['hello world']).then(
    (vs) => ({ vector: Array.from(vs[0]!) }),
    (err: Error) => ({ error: err.name, message: err.message }),
  );
}

describe('an embeddings answer beyond float32', () => {
  it('is an answer it cannot use: refused as malformed (cooldown), never a NaN vector', async () => {
    for (const big of [1e39, -1e39, 3.5e38]) {
      const embedder = answering([big, 0.5, 0.1, 0]);
      expect(await outcome(embedder)).toEqual({
        error: 'EmbeddingsUnavailableError',
        message: 'embeddings answer holds a malformed vector',
      });
      expect(embedder.state().state).toBe('cooldown');
    }
  });

  it('the largest float32 values are still a vector', async () => {
    const embedder = answering([3.4e38, -3.4e38, 0, 0]);
    const got = await outcome(embedder);
    expect(got).toEqual({ vector: [Math.fround(Math.SQRT1_2), -Math.fround(Math.SQRT1_2), 0, 0] });
    expect(embedder.state().state).not.toBe('cooldown');
  });

  it('rankVectors leaves out a NaN vector stored before the fix', () => {
    const unit = (xs: number[]) => ({ doc: normalize(Float32Array.from(xs)) });
    const live = new Map([
      ['a-nan', { doc: Float32Array.from([NaN, NaN, NaN, NaN]) }],
      ['b-near', unit([1, 0.1, 0, 0])],
      ['c-far', unit([0, 1, 0, 0])],
    ]);
    const q = normalize(Float32Array.from([1, 0, 0, 0]));
    const res = { segments: [] as VecSegment[], live, missing: [] };
    expect(rankVectors(res, q, 10).map((h) => h.id)).toEqual(['b-near', 'c-far']);
  });
});
