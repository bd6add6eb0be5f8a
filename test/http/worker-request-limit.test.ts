// Review s53e (2026-12-06): on Workers, past Cloudflare's limit on requests per invocation (50 fetches on the
// Free plan, 1,000 R2 binding operations), workerd refuses every further storage call in the request. That
// answered "storage is unreachable; try again shortly" with Retry-After, which was not true (storage was
// there) and which no retry of the same request helps. The answer now names the limit.
import { expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';

it("a request past the Worker's subrequest limit says so, without Retry-After", async () => {
  let calls = 0;
  const refuse = () => {
    calls++;
    return Promise.reject(new Error('Too many API requests by single Worker invocation.'));
  };
  const bucket = { get: refuse, head: refuse, put: refuse, delete: refuse, list: refuse };
  const objects = new R2Store(bucket as unknown as R2BucketLike, {
    retry: { attempts: 2, baseMs: 1, maxMs: 1, attemptTimeoutMs: 500, deadlineMs: 1000 },
  });
  const app = await makeApp({ objects });
  const r = await app.call('GET', '/v1/sessions');
  expect(r.status).toBe(503);
  expect(r.json.detail).toMatch(/Cloudflare's limit on requests per Worker invocation/);
  expect(r.headers.get('retry-after')).toBeNull();
  // The adapter does not retry it (every attempt in the invocation would meet the limit): one call.
  calls = 0;
  const err = await objects.get('ns/a/sessions/x.json').catch((e: unknown) => e);
  expect(StorageUnavailableError.is(err)).toBe(true);
  expect(calls).toBe(1);
  // Any other storage failure keeps its answer.
  const down = () => Promise.reject(new Error('internal error'));
  const other = new R2Store(
    { get: down, head: down, put: down, delete: down, list: down } as never,
    {
      retry: { attempts: 2, baseMs: 1, maxMs: 1, attemptTimeoutMs: 500, deadlineMs: 1000 },
    },
  );
  const r2 = await (await makeApp({ objects: other })).call('GET', '/v1/sessions');
  expect(r2.status).toBe(503);
  expect(r2.json.detail).toBe('storage is unreachable; try again shortly');
  expect(r2.headers.get('retry-after')).toBe('2');
});
