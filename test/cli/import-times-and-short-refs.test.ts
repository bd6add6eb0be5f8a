// Review s53d (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// 1. docs/cli.md, Import → Kept: a file's time the import cannot read "gets the time of the import". An
//    unreadable (or missing) updated_at beside a readable created_at was left to the create route, whose
//    rule made it the created_at: a session imported a minute ago listed as months old, and
//    `satchel session cleanup 30` right after the import deleted it.
// 2. docs/cli.md, --external-ref: a `,name=` one edit from a field's name is refused (exit 2). The check ran
//    only for the long form: `kind=uri,read_only=true` stored the uri "uri,read_only=true", writable.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { createBody } from '../../lib/odek/format.js';
import { parseExternalRef } from '../../lib/cli/args.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

let server: RunningServer;
let work: string;
beforeAll(async () => {
  server = await startSatchelServer();
  work = mkdtempSync(join(tmpdir(), 'satchel-import-times-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

it('an updated_at the import cannot read becomes the time of the import, and a cleanup keeps it', async () => {
  const dir = join(work, 'sessions');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'odd-time.json'),
    JSON.stringify({
      id: 'odd-time',
      created_at: '2026-03-02T09:00:00Z',
      updated_at: '2026-03-02 09:30:00', // no T, no offset: not RFC 3339
      model: 'gpt-4o',
      task: 'a session whose updated_at the import cannot read',
      messages: [{ role: 'user', content: 'hello' }],
    }),
  );
  const before = Date.now();
  const r = await satchel(['import', dir], { SATCHEL_URL: server.url });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('updated_at not kept');
  const { session } = await new SatchelClient({ url: server.url }).get('odd-time');
  expect(session.created_at).toBe('2026-03-02T09:00:00Z');
  expect(Date.parse(session.updated_at)).toBeGreaterThanOrEqual(before - 1000);
  const c = await satchel(['session', 'cleanup', '30', '--json'], { SATCHEL_URL: server.url });
  expect(JSON.parse(c.stdout).deleted).toBe(0);
});

it('the create body: a missing updated_at is the import time too; an unreadable created_at follows updated_at', () => {
  const base = { id: 'x', task: 't', messages: [], external_refs: [] };
  const now = Date.now();
  const a = createBody({ ...base, created_at: '2026-03-02T09:00:00Z' } as never);
  expect(a.created_at).toBe('2026-03-02T09:00:00Z');
  expect(Date.parse(String(a.updated_at))).toBeGreaterThanOrEqual(now);
  const b = createBody({
    ...base,
    created_at: 'yesterday',
    updated_at: '2026-03-02T09:30:00Z',
  } as never);
  expect(b.created_at).toBeUndefined();
  expect(b.updated_at).toBe('2026-03-02T09:30:00Z');
  const c = createBody({
    ...base,
    created_at: '2026-03-02T09:00:00Z',
    updated_at: '2026-03-02T09:30:00Z',
  } as never);
  expect([c.created_at, c.updated_at]).toEqual(['2026-03-02T09:00:00Z', '2026-03-02T09:30:00Z']);
  const d = createBody(base as never);
  expect([d.created_at, d.updated_at]).toEqual([undefined, undefined]);
});

for (const ref of [
  'file=/src/a.ts,readonly=true',
  'file=/src/a.ts,read_only=true',
  'file=/a,created_by=ci',
]) {
  it(`--external-ref ${ref} is refused (exit 2), never folded into the uri`, async () => {
    await new SatchelClient({ url: server.url })
      .create({ id: 'refs', task: 'refs' })
      .catch(() => undefined);
    const r = await satchel(['session', 'append', 'refs', 'note', '--external-ref', ref], {
      SATCHEL_URL: server.url,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not a field \(kind, uri, .*nor part of a uri/);
    const { session } = await new SatchelClient({ url: server.url }).get('refs');
    expect(session.external_refs).toEqual([]);
  });
}

it('a short-form uri keeps other `,name=` pairs, and the long form still reads every field', () => {
  expect(parseExternalRef('file=/src/a.ts?x=1,line=42').uri).toBe('/src/a.ts?x=1,line=42');
  const long = parseExternalRef('kind=file,uri=/src/a.ts,read_only=true');
  expect([long.kind, long.uri, long.read_only]).toEqual(['file', '/src/a.ts', true]);
});
