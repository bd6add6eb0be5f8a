// Review s67f: the Workers S3 variant (functions/worker.ts: S3Store through the SDK's fetch handler, no
// wire) past Cloudflare's limit on fetches per invocation (50 on the Free plan). workerd's fetch then
// rejects with `Error: Too many subrequests.`, which S3Store passed on as a plain error: a bare 500 and
// "unhandled error" in the log, where docs/deploy.md promises a 503 that names the limit, as R2 answers
// (test/http/worker-request-limit.test.ts). Mimicked as test/support/worker-limit.ts does for R2, on the
// SDK's real FetchHttpHandler against the run's radosgw.
import { S3Client } from '@aws-sdk/client-s3';
import { FetchHttpHandler } from '@smithy/fetch-http-handler';
import { expect, inject, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { S3Store } from '../../lib/storage/s3.js';

it('S3 over fetch past the per-invocation limit: 503 naming the limit, no Retry-After, no retry', async () => {
  const s3 = inject('s3');
  const state = { used: 0, limit: Infinity };
  const limitedFetch = (async (input: RequestInfo, init?: RequestInit) => {
    state.used++;
    if (state.used > state.limit) throw new Error('Too many subrequests.');
    return fetch(input, init);
  }) as typeof fetch;
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    maxAttempts: 1,
    requestHandler: new FetchHttpHandler({ customFetch: limitedFetch }),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const objects = new S3Store({
    bucket: s3.bucket,
    prefix: `s67f-limit-${Date.now()}/`,
    client,
    retry: { attempts: 3, baseMs: 1, maxMs: 1, attemptTimeoutMs: 2000, deadlineMs: 4000 },
  });
  const app = await makeApp({ objects, shortLived: true });
  const created = await app.call('POST', '/v1/sessions', { body: { task: 'before the limit' } });
  expect(created.status).toBe(201);
  // The next invocation has used up its fetches: every storage call is refused.
  state.used = 0;
  state.limit = 0;
  const answers = [
    await app.call('GET', '/v1/sessions'),
    await app.call('GET', `/v1/sessions/${created.json.id}`),
    await app.call('POST', `/v1/sessions/${created.json.id}/messages`, {
      body: { messages: [{ role: 'user', content: 'after the limit' }] },
    }),
  ].map((r) => ({
    status: r.status,
    limit: /Cloudflare's limit on requests per Worker invocation/.test(String(r.json?.detail)),
    retryAfter: r.headers.get('retry-after'),
  }));
  expect(answers).toEqual(Array(3).fill({ status: 503, limit: true, retryAfter: null }));
  // Not retried (every attempt in the invocation would meet the limit): one fetch for one call, whatever
  // words the key holds ("network" reads as a lost connection to isTransient).
  state.used = 0;
  const err = await objects.get('ns/network/sessions/x.json').catch((e: unknown) => e);
  expect(StorageUnavailableError.is(err)).toBe(true);
  expect(state.used).toBe(1);
});
