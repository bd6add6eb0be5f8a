import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from './helpers.js';

// A data folder the server cannot use (a file in its place, no permission) answers 503 with Retry-After,
// as the start-up banner and /v1/health say, never 500 (found by a first-hour review, 2026-12-04: the
// reads and writes passed ENOTDIR and EACCES through as errors of the server).
describe('an unusable local data folder', () => {
  it('a file where the folder should be: list, create and get answer 503, naming no path', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'satchel-unusable-')), 'not-a-folder');
    writeFileSync(file, 'x');
    const app = await makeApp({ objects: new LocalStore(file) });
    for (const [method, path, body] of [
      ['GET', '/v1/sessions', undefined],
      ['POST', '/v1/sessions', { task: 'stored nowhere' }],
      ['GET', '/v1/sessions/some-id', undefined],
      ['GET', '/v1/sessions/latest', undefined],
    ] as const) {
      const res = await app.call(method, path, body ? { body } : {});
      expect([method, path, res.status]).toEqual([method, path, 503]);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(JSON.stringify(res.json)).not.toContain(file);
    }
  });

  it('a folder that refuses writes (sysfs: EPERM even for root): a create answers 503', async () => {
    const app = await makeApp({ objects: new LocalStore(`/sys/satchel-test-${process.pid}`) });
    const res = await app.call('POST', '/v1/sessions', { body: { task: 'stored nowhere' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
