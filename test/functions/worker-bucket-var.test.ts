import { describe, expect, it } from 'vitest';
import { workerHandler } from '../../functions/worker-handler.js';
import { captureConsole } from '../support/logs.js';

// Review s52c: wrangler.toml's `BUCKET` must be an R2 binding; a var named BUCKET (a bucket's name under
// [vars], or a JSON table) is truthy, so the handler wrapped it in an R2Store and every request failed
// on `bucket.get is not a function`: a 500 naming nothing. It is the configuration error now.
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} };
const logged = captureConsole();

class KvNamespace {
  async get() {
    return null;
  }
  async put() {}
}

async function answer(bucket: unknown) {
  const worker = workerHandler();
  const env = { SATCHEL_TOKENS: 'edge/w=tok_bucketvar_0123', SATCHEL_LOG: 'off', BUCKET: bucket };
  const res = await worker.fetch(
    new Request('https://w.example/v1/sessions', {
      headers: { authorization: 'Bearer tok_bucketvar_0123' },
    }),
    env as never,
    ctx as never,
  );
  return { res, body: await res.text() };
}

describe('Worker: BUCKET that is not an R2 binding', () => {
  it.each([
    ['a var string', 'my-satchel-bucket'],
    ['a JSON var', { name: 'my-satchel-bucket' }],
    ['a number var', 7],
  ])('BUCKET as %s is a configuration error naming BUCKET', async (_label, bucket) => {
    const { res, body } = await answer(bucket);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.status).toBe(500);
    expect(JSON.parse(body)).toMatchObject({
      title: 'Configuration Error',
      detail: expect.stringMatching(/BUCKET is a var, not an R2 binding/),
    });
    expect(logged.find(/^satchel: BUCKET is a var, not an R2 binding/)).not.toHaveLength(0);
  });

  it('another kind of binding (a KV namespace) is named as such', async () => {
    const { res, body } = await answer(new KvNamespace());
    expect(res.status).toBe(500);
    expect(JSON.parse(body).detail).toMatch(/BUCKET is a binding, not an R2 binding/);
  });

  it('no BUCKET at all keeps its own message', async () => {
    const { body } = await answer(undefined);
    expect(JSON.parse(body).detail).toMatch(
      /bind an R2 bucket as BUCKET, or set SATCHEL_STORAGE=s3/,
    );
  });
});
