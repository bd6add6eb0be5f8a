// Review s67h F3: `satchel export` wrote each session file with the default mode, 0644 under the usual umask
// 022, also in place of odek's own 0600 copy: every local user could read the transcript. odek writes its
// session files 0600 (internal/session/session.go, fsatomic.WriteFile(path, data, 0600)); so does export.
import { mkdtempSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

it('an exported session file is 0600, new or in place of one (umask 022)', async () => {
  const old = process.umask(0o022);
  try {
    const app = await makeApp();
    const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
      app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
    const env = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop };
    const cli = (args: string[]) => satchel(args, env, { fetch: fetcher });
    for (const id of ['private-1', 'private-2']) {
      const created = await app.call('POST', '/v1/sessions', {
        body: { id, task: 'my medical question', messages: [{ role: 'user', content: 'private' }] },
      });
      expect(created.status).toBe(201);
    }
    const odek = mkdtempSync(join(tmpdir(), 'satchel-export-mode-'));
    // odek's 0600 copy of one, a 0644 file of the other: both are replaced by 0600 files.
    writeFileSync(join(odek, 'private-1.json'), '{}');
    chmodSync(join(odek, 'private-1.json'), 0o600);
    writeFileSync(join(odek, 'private-2.json'), '{}');
    chmodSync(join(odek, 'private-2.json'), 0o644);
    expect((await cli(['export', 'private-1', 'private-2', odek])).code).toBe(0);
    const fresh = mkdtempSync(join(tmpdir(), 'satchel-export-mode-'));
    expect((await cli(['export', '--all', fresh])).code).toBe(0);
    for (const file of [
      join(odek, 'private-1.json'),
      join(odek, 'private-2.json'),
      join(fresh, 'private-1.json'),
    ])
      expect([file, (statSync(file).mode & 0o777).toString(8)]).toEqual([file, '600']);
  } finally {
    process.umask(old);
  }
});
