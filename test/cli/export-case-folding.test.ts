// Review s67k: on a folder that does not tell case apart (macOS and Windows by default), `export` of the
// session `Index` wrote Index.json, which is odek's index.json there, and ids differing only in case
// (`Foo`, `foo`) shared one file, the second export replacing the first. This machine's file systems tell
// case apart, so the folded folder is shown to FolderNames as such a folder shows itself: the file at
// `Index.json` is odek's index, the file at `Foo.json` holds session foo.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FolderNames, foldsCase } from '../../lib/cli/commands/transfer.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

const lower = (name: string) => name.toLowerCase();

it('a folder that does not tell case apart: odek’s files and another case’s session are not written over', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-case-'));
  writeFileSync(join(dir, 'Index.json'), '{"sessions":[]}');
  writeFileSync(join(dir, 'Foo.json'), '{"id":"foo","messages":[]}');
  const names = new FolderNames(lower);
  expect(await names.refusal(join(dir, 'Index.json'), 'Index')).toBe(
    `${join(dir, 'Index.json')} is odek's own file, not a session: not written over`,
  );
  expect(await names.refusal(join(dir, 'Foo.json'), 'Foo')).toBe(
    `${join(dir, 'Foo.json')} is session foo's file too, in a folder that does not tell case apart: ` +
      'not written over',
  );
  // Two ids of one folded name in one export: the first is written, the second refused.
  expect(await names.refusal(join(dir, 'Bar.json'), 'Bar')).toBeUndefined();
  expect(await names.refusal(join(dir, 'BAR.json'), 'BAR')).toBe(
    `${join(dir, 'BAR.json')} is session Bar's file too, in a folder that does not tell case apart: ` +
      'not written over',
  );
  // The same id again, and a session's own file: written.
  expect(await names.refusal(join(dir, 'Bar.json'), 'Bar')).toBeUndefined();
  writeFileSync(join(dir, 'baz.json'), '{"id":"baz","messages":[]}');
  expect(await names.refusal(join(dir, 'baz.json'), 'baz')).toBeUndefined();
});

it('a folder that tells case apart is found so, and keeps every id’s file', async () => {
  const app = await makeApp();
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const env = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop };
  for (const id of ['Index', 'Foo', 'foo']) {
    const created = await app.call('POST', '/v1/sessions', {
      body: { id, task: `task of ${id}`, messages: [{ role: 'user', content: id }] },
    });
    expect(created.status).toBe(201);
  }
  const dir = mkdtempSync(join(tmpdir(), 'satchel-case-'));
  expect((await foldsCase(dir))('Index.json')).toBe('Index.json');
  writeFileSync(join(dir, 'index.json'), '{"sessions":[]}');
  const out = await satchel(['export', '--all', dir], env, { fetch: fetcher });
  expect(out.code).toBe(0);
  expect(readdirSync(dir).sort()).toEqual(['Foo.json', 'Index.json', 'foo.json', 'index.json']);
  expect(readFileSync(join(dir, 'index.json'), 'utf8')).toBe('{"sessions":[]}');
  expect(JSON.parse(readFileSync(join(dir, 'foo.json'), 'utf8')).id).toBe('foo');
  expect(JSON.parse(readFileSync(join(dir, 'Foo.json'), 'utf8')).id).toBe('Foo');
});
