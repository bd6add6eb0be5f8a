import { describe, expect, it } from 'vitest';
import { healthSchema } from '../../lib/model/responses.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { CountingStore } from '../../lib/storage/counting.js';
import type { ObjectStore, StoragePing } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';

/** A memory store whose backend can be made to hang or fail; `ping` optional like a test double's. */
class FlakyStore extends MemoryStore {
  mode: 'ok' | 'hang' | 'fail' = 'ok';
  override async list(...args: Parameters<ObjectStore['list']>) {
    if (this.mode === 'hang') await new Promise(() => undefined);
    if (this.mode === 'fail') throw new Error('backend said no');
    return super.list(...args);
  }
}

/** Without its own ping: health falls back to a bounded listing. */
function withoutPing(store: ObjectStore): ObjectStore {
  return {
    name: store.name,
    get: (k) => store.get(k),
    put: (k, b, o) => store.put(k, b, o),
    delete: (k) => store.delete(k),
    list: (p, o) => store.list(p, o),
  };
}

async function health(app: Awaited<ReturnType<typeof makeApp>>) {
  const started = Date.now();
  const res = await app.call('GET', '/v1/health', { token: null });
  return { ...res, ms: Date.now() - started };
}

describe('GET /v1/health tells the whole truth, quickly', () => {
  it('ok: backend kind without a local path, probe latency, embeddings, model not configured', async () => {
    const app = await makeApp();
    const res = await health(app);
    expect(res.status).toBe(200);
    expect(healthSchema.parse(res.json)).toEqual(res.json);
    expect(res.json).toMatchObject({
      status: 'ok',
      storage: { backend: 'local', ok: true, latency_ms: expect.any(Number) },
      embeddings: { configured: false, space: 'local/words-v1', state: 'ok' },
      model: { configured: false },
    });
    expect(res.text).not.toContain(app.dir);
    expect(res.text).not.toMatch(/"\/(tmp|home|root|var)\//);
  });

  it('says a model is configured, never its URL or key', async () => {
    const app = await makeApp({
      env: {
        // (A URL with credentials is refused at start: fetch cannot call it.)
        SATCHEL_MODEL_URL: 'https://models.example/v1?key=q-health-secret',
        SATCHEL_MODEL: 'gpt-x',
        SATCHEL_MODEL_KEY: 'sk-health-secret-0123456789',
      },
    });
    const res = await health(app);
    expect(res.json.model).toEqual({ configured: true });
    expect(res.text).not.toMatch(/models\.example|sk-health|q-health/);
  });

  it('storage that never answers: degraded within 2 s, reason timeout; the last error stays after recovery', async () => {
    const store = new FlakyStore();
    const app = await makeApp({ objects: withoutPing(store) });
    store.mode = 'hang';
    const down = await health(app);
    expect(down.ms).toBeLessThan(2000);
    expect(healthSchema.parse(down.json)).toEqual(down.json);
    expect(down.json).toMatchObject({
      status: 'degraded',
      storage: { ok: false, reason: 'timeout', error: 'no answer within 1500 ms' },
    });
    expect(down.json.storage.last_error).toBe('no answer within 1500 ms');
    store.mode = 'ok';
    const up = await health(app);
    expect(up.json.status).toBe('ok');
    expect(up.json.storage).toMatchObject({
      ok: true,
      last_error: 'no answer within 1500 ms',
      last_error_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(up.json.storage.error).toBeUndefined();
  });

  it("uses the store's own probe (through CountingStore too), and shows its reason", async () => {
    const store = new FlakyStore();
    const failing: StoragePing = {
      ok: false,
      latencyMs: 3,
      reason: 'denied',
      error: 'HTTP 403 AccessDenied',
    };
    store.ping = async () => failing;
    const counted = new CountingStore(store);
    expect(counted.ping).toBeDefined();
    const app = await makeApp({ objects: counted });
    const res = await health(app);
    expect(res.json).toMatchObject({
      status: 'degraded',
      storage: { backend: 'memory', ok: false, reason: 'denied', error: 'HTTP 403 AccessDenied' },
    });
    expect(counted.counts.list).toBe(0);
  });
});
