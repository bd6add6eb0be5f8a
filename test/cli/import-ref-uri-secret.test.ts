// Review s67h F1: a file's external ref that the stored session lacks was named by the file's uri, secret
// and all (`?token=ghp_…`), in the failure line, the --json reason and the `replaced` note, although the
// server stores it redacted (import output ends up in terminals and CI logs). It is named by its place.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

const SECRET = 'ghp_' + 'R8x2Kq9ZtW4mLp7VnB3cY6dF1hJ5sA0eGuTi';

it('a ref the stored session lacks is named by its index, never by its uri', async () => {
  const app = await makeApp();
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const env = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop };
  const cli = (args: string[]) => satchel(args, env, { fetch: fetcher });
  const dir = mkdtempSync(join(tmpdir(), 'satchel-ref-uri-'));
  const file = join(dir, 'ref-1.json');
  const s: Record<string, unknown> = {
    id: 'ref-1',
    task: 't',
    messages: [{ role: 'user', content: 'hi' }],
  };
  writeFileSync(file, JSON.stringify(s));
  expect((await cli(['import', dir])).code).toBe(0);
  s.external_refs = [
    { kind: 'ci', uri: `https://ci.example/run/7?token=${SECRET}`, created_by: 'odek' },
  ];
  writeFileSync(file, JSON.stringify(s));
  const again = await cli(['import', dir]);
  expect(again.stdout).toContain(
    `failed     ${file} (ref-1): exists with different content (external_refs[0]: not stored)`,
  );
  expect(again.code).toBe(4);
  const json = await cli(['import', dir, '--json']);
  expect(JSON.parse(json.stdout).results[0].reason).toContain('external_refs[0]: not stored');
  const over = await cli(['import', dir, '--overwrite']);
  expect(over.stdout).toContain('replaced   ref-1 (it differed in external_refs[0]: not stored)');
  expect(over.code).toBe(0);
  for (const r of [again, json, over]) expect(r.stdout + r.stderr).not.toContain(SECRET);
  // The stored session holds it redacted; a later ref it lacks is named by its index in the file.
  const stored = await app.call('GET', '/v1/sessions/ref-1');
  expect(stored.text).toContain('token=[REDACTED]');
  s.external_refs = [
    ...(s.external_refs as object[]),
    { kind: 'ci', uri: `https://ci.example/run/8?token=${SECRET}`, created_by: 'odek' },
  ];
  writeFileSync(file, JSON.stringify(s));
  const third = await cli(['import', dir]);
  expect(third.stdout).toContain('(external_refs[1]: not stored)');
  expect(third.stdout).not.toContain(SECRET);
});
