/**
 * Before 2026-12-05 (found by review): the client (lib/client/client.ts `json`) took any JSON object as
 * Satchel's answer, so with SATCHEL_URL naming another JSON service (a health endpoint answering every
 * path with `{"status":"ok"}`) `session list` and `import` died with a TypeError and a stack (exit 70)
 * and `session create` printed `undefined` as the new session's id (exit 0). Now the client checks the
 * few fields each answer the CLI uses must have, and such an answer is "not Satchel JSON", exit 3.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient, SatchelResponseError } from '../../lib/client/index.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { satchelProcess } from './process.js';

const closers: (() => Promise<void>)[] = [];
let url: string;
let work: string;
beforeAll(async () => {
  ({ url } = await misbehavingServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  }, closers));
  work = mkdtempSync(join(tmpdir(), 'cli-other-json-'));
});
afterAll(async () => {
  for (const close of closers) await close();
  rmSync(work, { recursive: true, force: true });
});

const NOT_SATCHEL =
  /^satchel: the answer from http:\/\/\S+ is not Satchel JSON: is SATCHEL_URL a Satchel server\?\n$/;

it('session list: exit 3, not a crash', async () => {
  const r = await satchelProcess(['session', 'list'], { SATCHEL_URL: url });
  expect(r).toMatchObject({ code: 3, stdout: '', stderr: expect.stringMatching(NOT_SATCHEL) });
}, 60_000);

it('session create: exit 3, not "undefined" as the id', async () => {
  const r = await satchelProcess(['session', 'create', 'a task'], { SATCHEL_URL: url });
  expect(r.stdout).not.toContain('undefined');
  expect(r.code).toBe(3);
}, 60_000);

it('import: exit 3, not a crash', async () => {
  const file = join(work, 'one.json');
  writeFileSync(file, JSON.stringify({ id: 'one', task: 'a task', messages: [] }));
  const r = await satchelProcess(['import', file, '--json'], { SATCHEL_URL: url });
  expect(r).toMatchObject({ code: 3, stdout: '' });
  expect(JSON.parse(r.stderr)).toMatchObject({ error: 'connection' });
}, 60_000);

it("import: names the file whose create another service's success answered as maybe imported", async () => {
  // The create was sent: whether it reached a Satchel behind that answer is unknown (review s51f).
  const file = join(work, 'two.json');
  writeFileSync(file, JSON.stringify({ id: 'two', task: 'a task', messages: [] }));
  const r = await satchelProcess(['import', file], { SATCHEL_URL: url });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`may have been imported: ${file}`);
}, 60_000);

it('the client throws SatchelResponseError for each answer the CLI reads', async () => {
  const c = new SatchelClient({ url });
  const calls = [
    () => c.list(),
    () => c.get('s'),
    () => c.create({ task: 't' }),
    () => c.append('s', { messages: [{ role: 'user', content: 'hi' }] }),
    () => c.trim('s', 1),
    () => c.cleanup(1),
    () => c.audit('s'),
    () => c.continue('s', { message: 'hi' }),
    () => c.sessionSearch({ action: 'search', query: 'q' }),
  ];
  for (const call of calls) await expect(call()).rejects.toBeInstanceOf(SatchelResponseError);
});
