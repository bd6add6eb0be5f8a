// A cleanup on Workers with the R2 binding: an invocation may make 1,000 binding operations, waitUntil
// work included, and a delete costs about 19 with its background work. Until 2026-12-06 a cleanup of more
// than about 55 sessions went past the limit: it answered 503 ("this request reached Cloudflare's limit")
// after deleting most of them, and its background work (log records, tombstones, the purge of the tasks
// from the manifest) failed with it. Now a Worker deletes at most 32 sessions per cleanup, oldest first,
// and says how many are left (`remaining`); the CLI calls again until none is.
import { describe, expect, it } from 'vitest';
import { workerHandler } from '../../functions/worker-handler.js';
import { LocalStore } from '../../lib/storage/local.js';
import { PreconditionFailedError, type ObjectStore } from '../../lib/storage/port.js';
import type { R2BucketLike } from '../../lib/storage/r2.js';
import { holders } from '../support/holders.js';
import { tempDir } from '../sessions/unlogged-common.js';

const LIMIT = 1000;
const TOKEN = 'tok_cleanup_batch_0123';

/**
 * The R2 binding's shape over a local folder (real files): miniflare's binding, reached from Node through
 * its proxy, takes 15 to 30 ms a call, and the 2,500 calls here took 45 s alone and timed out under load.
 * R2's own behaviour is the conformance suite's (test/storage/r2.test.ts); what counts here is calls.
 */
function r2Over(store: ObjectStore): R2BucketLike {
  return {
    get: async (key) => {
      const found = await store.get(key);
      if (!found) return null;
      const { body, etag } = found;
      const uploaded = new Date(Date.now() - (found.age ?? 0));
      return { etag, uploaded, arrayBuffer: async () => body.slice().buffer };
    },
    head: (key) => store.head!(key),
    put: async (key, value, options) => {
      const body = value instanceof Uint8Array ? value : new Uint8Array(value);
      const only = options?.onlyIf;
      try {
        return await store.put(key, body, {
          ...(only?.etagMatches ? { ifMatch: only.etagMatches } : {}),
          ...(only?.etagDoesNotMatch === '*' ? { ifNoneMatch: '*' as const } : {}),
        });
      } catch (err) {
        if (PreconditionFailedError.is(err)) return null; // as R2 answers a failed onlyIf
        throw err;
      }
    },
    delete: (keys) => store.delete(keys),
    list: async (options) => {
      const page = await store.list(options.prefix ?? '', {
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.startAfter ? { cursor: options.startAfter } : {}),
      });
      return { objects: page.objects, truncated: page.cursor !== undefined };
    },
  };
}

/** Workerd's limit per invocation: past 1,000 operations every binding call fails as it does on Cloudflare. */
function limited(bucket: R2BucketLike) {
  const state = { used: 0 };
  const counted =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      state.used++;
      if (state.used > LIMIT)
        return Promise.reject(new Error('Too many API requests by single worker invocation.'));
      return f(...args);
    };
  const wrapped: R2BucketLike = {
    get: counted((key: string) => bucket.get(key)),
    head: counted((key: string) => bucket.head(key)),
    put: counted(
      (key: string, v: ArrayBuffer | Uint8Array, o?: Parameters<R2BucketLike['put']>[2]) =>
        bucket.put(key, v, o),
    ),
    delete: counted((keys: string | string[]) => bucket.delete(keys)),
    list: counted((o: Parameters<R2BucketLike['list']>[0]) => bucket.list(o)),
  };
  return { bucket: wrapped, state };
}

describe('Worker cleanup with the R2 binding', () => {
  it('deletes at most 32 sessions per call within the invocation limit, and says how many are left', async () => {
    const dir = tempDir('worker-cleanup');
    const { bucket, state } = limited(r2Over(new LocalStore(dir)));
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
    expect(holders(dir, ['zqcleanupbatch'])).toEqual([]);
  });
});
