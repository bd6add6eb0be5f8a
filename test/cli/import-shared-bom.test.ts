/**
 * Before 2026-12-05 (found by review): the shared-id check of `satchel import` (sharedIds in
 * lib/cli/commands/transfer.ts) parsed each file without dropping a UTF-8 byte order mark, which
 * docs/cli.md allows, so a BOM copy of a session next to a different file of the same id escaped it and
 * one of the two versions was imported, whichever request landed first. Now the mark is dropped there
 * too: both files fail with "has the same id" and neither is imported.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

let server: RunningServer;
let work: string;
beforeAll(async () => {
  server = await startSatchelServer();
  work = mkdtempSync(join(tmpdir(), 'cli-shared-bom-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const session = (task: string) =>
  JSON.stringify({
    id: 'shared-1',
    created_at: '2026-03-02T09:00:00Z',
    updated_at: '2026-03-02T09:30:00Z',
    model: 'gpt-4o',
    task,
    messages: [{ role: 'user', content: task }],
  });

it('refuses two different files of one id when one of them starts with a byte order mark', async () => {
  const dir = join(work, 'sessions');
  mkdirSync(dir);
  writeFileSync(join(dir, 'shared-1.json'), '\ufeff' + session('the original'));
  writeFileSync(join(dir, 'shared-1.backup.json'), session('an older backup'));
  const r = await satchel(['import', dir, '--json'], { SATCHEL_URL: server.url });
  expect(r.code).toBe(4);
  const report = JSON.parse(r.stdout);
  expect(report.results.map((x: { reason?: string }) => x.reason)).toEqual([
    `${join(dir, 'shared-1.json')} has the same id: import one file per id (none of them was imported)`,
    `${join(dir, 'shared-1.backup.json')} has the same id: import one file per id (none of them was imported)`,
  ]);
  expect(report.created).toBe(0);
  await expect(new SatchelClient({ url: server.url }).get('shared-1')).rejects.toMatchObject({
    status: 404,
  });
});

it('imports a BOM copy and a plain copy of the same session as one session', async () => {
  const dir = join(work, 'same');
  mkdirSync(dir);
  const text = session('the same').replace('shared-1', 'same-1');
  writeFileSync(join(dir, 'same-1.json'), '\ufeff' + text);
  writeFileSync(join(dir, 'same-1.copy.json'), text);
  const r = await satchel(['import', dir, '--json', '-j', '1'], { SATCHEL_URL: server.url });
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ created: 1, unchanged: 1, failed: 0 });
});
