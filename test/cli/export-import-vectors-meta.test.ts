// Review s67h F4: the id `vectors_meta` is a valid session id, and `export` wrote it as vectors_meta.json,
// which `import` skipped by its name alone (also named as a file: exit 2, "no odek session files"): the
// round trip lost the session. Exported into an odek sessions folder, the file replaced odek's own vector
// index metadata. Now import skips a vectors_meta.json only when it holds no session, and export never
// writes over one that holds none.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

it('a session with id vectors_meta round-trips, and odek’s vectors_meta.json is never written over', async () => {
  const app = await makeApp();
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const laptop = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop };
  const bob = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.bob };
  const created = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'vectors_meta',
      task: 'vector search notes',
      messages: [{ role: 'user', content: 'hi' }],
    },
  });
  expect(created.status).toBe(201);
  const out = mkdtempSync(join(tmpdir(), 'satchel-vectors-meta-'));
  expect((await satchel(['export', '--all', out], laptop, { fetch: fetcher })).code).toBe(0);
  const file = join(out, 'vectors_meta.json');
  // Named alone, then its folder: created, then unchanged.
  const named = await satchel(['import', file], bob, { fetch: fetcher });
  expect(named.stdout).toBe('Imported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n');
  expect(named.code).toBe(0);
  const folder = await satchel(['import', out], bob, { fetch: fetcher });
  expect(folder.stdout).toBe('Imported 1 file: 0 created, 1 unchanged, 0 replaced, 0 failed\n');
  expect(folder.code).toBe(0);
  const got = await app.call('GET', '/v1/sessions/vectors_meta', { token: TOKENS.bob });
  expect(got.status).toBe(200);
  // Exported again over the session's own file: replaced. Over odek's vector index metadata: refused.
  expect((await satchel(['export', 'vectors_meta', out], laptop, { fetch: fetcher })).code).toBe(0);
  const odek = mkdtempSync(join(tmpdir(), 'satchel-vectors-meta-odek-'));
  const meta = join(odek, 'vectors_meta.json');
  writeFileSync(meta, '{"fingerprint":"rp/256"}');
  const over = await satchel(['export', 'vectors_meta', odek], laptop, { fetch: fetcher });
  expect(over.stdout).toContain(
    `failed     vectors_meta: ${meta} is odek's own file, not a session`,
  );
  expect(over.code).toBe(4);
  expect(readFileSync(meta, 'utf8')).toBe('{"fingerprint":"rp/256"}');
  // And an import of that folder still skips odek's file as its own.
  const odd = await satchel(['import', meta, out], bob, { fetch: fetcher });
  expect(odd.stdout).toContain(`skipped    ${meta}: odek's own file, not a session\n`);
  expect(odd.code).toBe(0);
});
