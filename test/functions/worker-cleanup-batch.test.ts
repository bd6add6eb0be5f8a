// A cleanup on Workers with the R2 binding: an invocation may make 1,000 binding operations, waitUntil
// work included, and a delete costs about 19 with its background work. Until 2026-12-06 a cleanup of more
// than about 55 sessions went past the limit: it answered 503 ("this request reached Cloudflare's limit")
// after deleting most of them, and its background work (log records, tombstones, the purge of the tasks
// from the manifest) failed with it. Now a Worker deletes at most 32 sessions per cleanup, oldest first,
// and says how many are left (`remaining`); the CLI calls again until none is.
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { workerHandler } from '../../functions/worker-handler.js';
import type { R2BucketLike } from '../../lib/storage/r2.js';

const mf = new Miniflare({
  modules: true,
  script: 'export default { fetch() { return new Response("") } }',
  r2Buckets: ['BUCKET'],
});
afterAll(() => mf.dispose());

const LIMIT = 1000;
const TOKEN = 'tok_cleanup_batch_0123';

/**
 * miniflare's R2 bucket with workerd's limit per invocation, which miniflare does not enforce: past 1,000
 * operations every call fails as the binding fails on Cloudflare.
 */
function limited(bucket: R2BucketLike) {
  const state = { used: 0, most: 0 };
  const counted =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      state.used++;
      state.most = Math.max(state.most, state.used);
      if (state.used > LIMIT)
        return Promise.reject(new Error('Too many API requests by single worker invocation.'));
      return f(...args);
    };
  const b = bucket as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const wrapped = {
    get: counted((...a: unknown[]) => b.get!(...a)),
    head: counted((...a: unknown[]) => b.head!(...a)),
    put: counted((...a: unknown[]) => b.put!(...a)),
    delete: counted((...a: unknown[]) => b.delete!(...a)),
    list: counted((...a: unknown[]) => b.list!(...a)),
  };
  return { bucket: wrapped, state };
}

describe('Worker cleanup with the R2 binding', () => {
  it('deletes at most 32 sessions per call within the invocation limit, and says how many are left', async () => {
    const { bucket, state } = limited((await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike);
    const worker = workerHandler();
    const env = { SATCHEL_TOKENS: `edge/w=${TOKEN}`, SATCHEL_LOG: 'off', BUCKET: bucket };
    /** One invocation: its own count, and its waitUntil work done before it ends. */
    const call = async (method: string, path: string, body?: unknown) => {
      state.used = 0;
      const pending: Promise<unknown>[] = [];
      const ctx = {
        waitUntil: (p: Promise<unknown>) => pending.push(p),
        passThroughOnException() {},
        props: {},
      };
      const res = await worker.fetch(
        new Request(`https://w.example${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        env as never,
        ctx as never,
      );
      const json = (await res.json()) as Record<string, unknown>;
      while (pending.length) await Promise.allSettled(pending.splice(0));
      return { status: res.status, json, used: state.used };
    };

    const n = 60;
    for (let i = 0; i < n; i++) {
      const r = await call('POST', '/v1/sessions', {
        id: `s${String(i).padStart(2, '0')}`,
        task: `the zqcleanupbatch${i}x task`,
        messages: [{ role: 'user', content: `hello ${i}` }],
      });
      expect(r.status).toBe(201);
    }

    const first = await call('POST', '/v1/sessions/cleanup', { older_than_days: 0 });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json).toEqual({ deleted: 32, remaining: n - 32 });
    expect(first.used).toBeLessThanOrEqual(LIMIT);
    // Oldest first: the first 32 created are gone.
    const listed = await call('GET', '/v1/sessions?limit=100');
    const ids = (listed.json.sessions as { id: string }[]).map((s) => s.id).sort();
    expect(ids).toEqual(Array.from({ length: n - 32 }, (_, i) => `s${i + 32}`));

    const second = await call('POST', '/v1/sessions/cleanup', { older_than_days: 0 });
    expect(second.json).toEqual({ deleted: n - 32 });
    expect(second.used).toBeLessThanOrEqual(LIMIT);
    expect((await call('GET', '/v1/sessions')).json.sessions).toEqual([]);

    // Deleted means gone: no object holds a task.
    const r2 = (await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike;
    const holding: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await r2.list({ ...(cursor ? { cursor } : {}), limit: 1000 });
      for (const o of page.objects) {
        const got = await r2.get(o.key);
        const text = got ? new TextDecoder().decode(await got.arrayBuffer()) : '';
        if (text.includes('zqcleanupbatch')) holding.push(o.key);
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    expect(holding).toEqual([]);
  });
});
