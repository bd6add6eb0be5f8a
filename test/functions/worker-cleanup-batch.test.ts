// A cleanup on Workers with the R2 binding: an invocation may make 1,000 binding operations, waitUntil
// work included, and a delete costs about 19 with its background work. Until 2026-12-06 a cleanup of more
// than about 55 sessions went past the limit: it answered 503 ("this request reached Cloudflare's limit")
// after deleting most of them, and its background work (log records, tombstones, the purge of the tasks
// from the manifest) failed with it. Now a Worker deletes at most 32 sessions per cleanup, oldest first,
// and says how many are left (`remaining`); the CLI calls again until none is.
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { holders } from '../support/holders.js';
import { LIMIT, limitedWorker } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

describe('Worker cleanup with the R2 binding', () => {
  it('deletes at most 32 sessions per call within the invocation limit, and says how many are left', async () => {
    const dir = tempDir('worker-cleanup');
    const { call } = limitedWorker(new LocalStore(dir));

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
