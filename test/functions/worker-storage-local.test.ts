// Review s56b, finding 3.
import { describe, expect, it } from 'vitest';
import { workerHandler } from '../../functions/worker-handler.js';
import { captureConsole } from '../support/logs.js';

/**
 * Contract, Configuration: `SATCHEL_STORAGE` is `local` (the local server's folder), `s3`, or `r2` (Workers
 * binding `BUCKET`); the team's standard: invalid values are refused clearly at start. On Workers,
 * SATCHEL_STORAGE=local (copied from a .env of the local server) with a correct R2 binding is refused with
 * "BUCKET is a binding, not an R2 binding: bind the bucket under [[r2_buckets]]…" (functions/worker-handler.ts
 * lines 43-49): it blames a binding that is right, and never names SATCHEL_STORAGE, the actual mistake.
 */
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} };
captureConsole(); // the configuration error is logged: kept out of the output

/** Shaped as Cloudflare's R2Bucket binding (an instance of its own class, with the bucket's methods). */
class R2Bucket {
  async get() {
    return null;
  }
  async head() {
    return null;
  }
  async put() {
    return null;
  }
  async list() {
    return { objects: [], truncated: false, delimitedPrefixes: [] };
  }
  async delete() {}
}

describe('Worker: SATCHEL_STORAGE=local', () => {
  it('is refused naming SATCHEL_STORAGE, not blaming a correct R2 binding', async () => {
    const worker = workerHandler();
    const env = {
      SATCHEL_TOKENS: 'edge/w=tok_storage_local_0123',
      SATCHEL_LOG: 'off',
      SATCHEL_STORAGE: 'local',
      BUCKET: new R2Bucket(),
    };
    const res = await worker.fetch(
      new Request('https://w.example/v1/sessions', {
        headers: { authorization: 'Bearer tok_storage_local_0123' },
      }),
      env as never,
      ctx as never,
    );
    const body = JSON.parse(await res.text());
    expect(res.status).toBe(500);
    expect(body.title).toBe('Configuration Error');
    expect(body.detail).toMatch(/SATCHEL_STORAGE=?\W*local|local\W.*SATCHEL_STORAGE/);
    expect(body.detail).not.toMatch(/not an R2 binding/);
  });
});
