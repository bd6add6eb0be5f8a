// A search on Workers after many writes with no search in between (review s60b, finding 2). An invocation
// may make 1,000 R2 binding operations, waitUntil work included (docs/deploy.md). Until 2026-12-07 the
// lexical index was compacted only after 64 writes of one isolate (Cloudflare spreads requests over many)
// or by a search; once more than 512 records lagged, a search read every session object (DeepSearch, one
// operation each) and answered 503 past the limit, and the compaction it scheduled had to read every
// lagging record in one invocation, so it never finished. Now a short-lived runtime's write compacts the
// index once its records pile up, each compaction folds a bounded slice of them, and a search too far
// behind folds slices inline and answers 503 with Retry-After while it catches up.
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { LIMIT, limitedWorker, type Invocation } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const n = 1100;
const idOf = (i: number) => `s${String(i).padStart(4, '0')}`;
const rare = (i: number) => (i === 3 ? ' zqoldestrare' : i === n - 5 ? ' zqnewestrare' : '');

/** Searches from new isolates until one answers 200 (at most `tries`): every call within the limit. */
async function searchUntilFound(
  call: () => Promise<Invocation>,
  tries: number,
): Promise<{ ids: string[]; statuses: number[] }> {
  const statuses: number[] = [];
  for (let k = 0; k < tries; k++) {
    const r = await call();
    statuses.push(r.status);
    expect(r.used, `call ${k}: ${JSON.stringify(r.json).slice(0, 300)}`).toBeLessThanOrEqual(LIMIT);
    if (r.status === 200)
      return { ids: (r.json.results as { id: string }[]).map((h) => h.id), statuses };
    expect(r.status, JSON.stringify(r.json)).toBe(503);
    expect(r.retryAfter).toBe('1');
    expect(String(r.json.detail)).toMatch(/search index is catching up/);
  }
  return { ids: [], statuses };
}

describe('a search on Workers after 1,100 writes with no search in between', () => {
  it('finds a rare word of an old and of a new session within a few calls, never past 1,000 operations', async () => {
    const dir = tempDir('search-backlog');
    const { call, isolate } = limitedWorker(new LocalStore(dir));
    /** A call from a new isolate. */
    const fresh = (method: string, path: string, body?: unknown) => {
      isolate();
      return call(method, path, body);
    };
    for (let i = 0; i < n; i++) {
      if (i % 20 === 0) isolate(); // Cloudflare spreads requests over isolates
      const r = await call('POST', '/v1/sessions', {
        id: idOf(i),
        task: `task ${i}`,
        messages: [{ role: 'user', content: `hello common words ${i}${rare(i)}` }],
      });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      expect(r.used, `create ${i}`).toBeLessThanOrEqual(LIMIT);
      // The manifest kept compact by lists (its own backlog is finding 1's): only the index lags.
      if (i % 100 === 99) expect((await fresh('GET', '/v1/sessions?limit=1')).status).toBe(200);
    }
    for (const [word, i] of [
      ['zqoldestrare', 3],
      ['zqnewestrare', n - 5],
    ] as const) {
      const found = await searchUntilFound(
        () =>
          fresh('POST', '/v1/session_search', {
            action: 'search',
            query: word,
            limit: 5,
          }),
        4,
      );
      expect(found.ids, `${word}: statuses ${found.statuses.join(',')}`).toEqual([idOf(i)]);
    }
    // A query most sessions match: 20 results, within the limit.
    const common = await fresh('POST', '/v1/session_search', {
      action: 'search',
      query: 'hello common',
      limit: 20,
    });
    expect(common.status, JSON.stringify(common.json)).toBe(200);
    expect((common.json.results as unknown[]).length).toBe(20);
    expect(common.used).toBeLessThanOrEqual(LIMIT);
  }, 300_000);
});
