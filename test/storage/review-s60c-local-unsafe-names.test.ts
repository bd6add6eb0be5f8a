// Review s60c, finding 1: the local store listed files whose names the key rules refuse (a backslash, a
// control character), which S3 and R2 leave out (review s58f). One such file beside the sessions made every
// list of the namespace answer 500 after a manifest rebuild (the rebuild's get of the listed key threw),
// and one in a session's audit folder made its DELETE answer 503 on every retry (delete of the listed key
// threw). Files Satchel never wrote: a copied folder, a file made on Windows or by a script.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp, settleAll, twoSessionsManifestGone } from '../http/helpers.js';

describe('local store: files with names no key can have (review s60c)', () => {
  for (const name of ['win\\copy.json', 'bad\u0001.json']) {
    it(`GET /v1/sessions rebuilds the manifest past ${JSON.stringify(name)} beside the sessions`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'satchel-s60c-'));
      const store = new LocalStore(dir);
      // The manifest gone (the next list rebuilds it from the session objects), and the stray file.
      const ids = await twoSessionsManifestGone(store);
      writeFileSync(join(dir, 'ns', 'alice', 'sessions', name), '{}');
      const app = await makeApp({ objects: new LocalStore(dir) });
      const res = await app.call('GET', '/v1/sessions?limit=20');
      expect(res.status).toBe(200);
      expect(res.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(ids.sort());
    });
  }

  it('DELETE of a session answers 204 with a stray file in its audit folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-s60c-'));
    const app = await makeApp({ objects: new LocalStore(dir) });
    const made = await app.call('POST', '/v1/sessions', { body: { task: 'one' } });
    expect(made.status).toBe(201);
    const id = made.json.id as string;
    await settleAll(app);
    writeFileSync(join(dir, 'ns', 'alice', 'audit', id, 'copy\\1.json'), '{}');
    const res = await app.call('DELETE', `/v1/sessions/${id}`);
    expect(res.status).toBe(204);
    await settleAll(app);
    expect((await app.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
    expect((await app.call('GET', '/v1/sessions?limit=20')).json.sessions).toEqual([]);
  });
});
