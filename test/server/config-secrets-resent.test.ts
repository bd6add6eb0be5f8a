// A PUT (or an import) resending a stored history that holds a configured secret, stored by a process
// without it, redacts it: the resent copies are proven scanned by their digest, so the configured pipeline
// scans them again when they hold one (found by review, 2026-12-04: the secret stayed).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';

const MODEL_KEY = 'Corvid4Lantern9Harbor';
const SECRETS: Env = {
  SATCHEL_MODEL_URL: 'http://127.0.0.1:9/v1',
  SATCHEL_MODEL: 'm',
  SATCHEL_MODEL_KEY: MODEL_KEY,
};
const stored = (dir: string, id: string) =>
  readFileSync(join(dir, 'ns', 'alice', 'sessions', `${id}.json`), 'utf8');

describe('configured secrets in a resent history', () => {
  it('a PUT replace carrying a configured secret (stored by a process without it) redacts it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-rv2-'));
    const plain = await makeApp({ objects: new LocalStore(dir) });
    const app = await makeApp({ env: SECRETS, objects: new LocalStore(dir) });
    const created = await plain.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'user', content: `we met at ${MODEL_KEY} today` }] },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(stored(dir, id)).toContain(MODEL_KEY); // the plain process knows nothing of it
    const got = await app.call('GET', `/v1/sessions/${id}`);
    const put = await app.call('PUT', `/v1/sessions/${id}`, {
      headers: { 'if-match': got.headers.get('etag')! },
      body: {
        ...got.json,
        messages: [...got.json.messages, { role: 'assistant', content: 'ok' }],
      },
    });
    expect(put.status).toBe(200);
    // The write carries the secret (its body holds it): the old holdsSecret pre-scan redacted it.
    expect(JSON.stringify(put.json)).not.toContain(MODEL_KEY);
    expect(stored(dir, id)).not.toContain(MODEL_KEY);
  });
});
