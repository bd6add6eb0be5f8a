// The Worker's own handler over the R2 binding's shape, counting binding operations per invocation and
// failing past Cloudflare's limit as workerd does (review s60b and the cleanup batches of 2026-12-06).
import { workerHandler } from '../../functions/worker-handler.js';
import { PreconditionFailedError, type ObjectStore } from '../../lib/storage/port.js';
import type { R2BucketLike } from '../../lib/storage/r2.js';

/** Cloudflare's limit of R2 binding operations per invocation, waitUntil work included. */
export const LIMIT = 1000;

/**
 * The R2 binding's shape over a local folder (real files): miniflare's binding, reached from Node through
 * its proxy, takes 15 to 30 ms a call, and the 2,500 calls here took 45 s alone and timed out under load.
 * R2's own behaviour is the conformance suite's (test/storage/r2.test.ts); what counts here is calls.
 */
export function r2Over(store: ObjectStore): R2BucketLike {
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
export function limited(bucket: R2BucketLike) {
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

/** One invocation's answer: its status, its JSON body, and the binding operations it and its waitUntil work made. */
export interface Invocation {
  status: number;
  json: Record<string, unknown>;
  used: number;
  retryAfter: string | null;
}

/**
 * A Worker (one isolate: `workerHandler()`) over `store` with the limit, called as `edge` with one token
 * able to write; each call awaits its waitUntil work before it returns. `isolate()` starts a new one.
 */
export function limitedWorker(store: ObjectStore, token = 'tok_worker_limit_0123') {
  const { bucket, state } = limited(r2Over(store));
  let worker = workerHandler();
  const env = { SATCHEL_TOKENS: `edge/w=${token}`, SATCHEL_LOG: 'off', BUCKET: bucket };
  const call = async (method: string, path: string, body?: unknown): Promise<Invocation> => {
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
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      env as never,
      ctx as never,
    );
    const answer = await res.text(); // a 204 has none
    const json = (answer ? JSON.parse(answer) : {}) as Record<string, unknown>;
    while (pending.length) await Promise.allSettled(pending.splice(0));
    return {
      status: res.status,
      json,
      used: state.used,
      retryAfter: res.headers.get('retry-after'),
    };
  };
  return {
    call,
    isolate: () => {
      worker = workerHandler();
    },
  };
}
