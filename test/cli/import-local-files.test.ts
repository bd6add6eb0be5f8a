/**
 * Before 2026-12-05 (found by review): `satchel import` read every file twice, once for the shared-id
 * check and again to import it, so a file that can be read only once (`cat f | satchel import
 * /dev/stdin`, `<(gunzip -c backup.json.gz)`) was empty the second time and reported `not JSON`. And a
 * file too large to read whole (over 2 GiB: ERR_FS_FILE_TOO_LARGE; over ~512 MiB: ERR_STRING_TOO_LONG,
 * errors with a code but no syscall) ended the import as "unexpected error", exit 70. Now the text of a
 * file that cannot be read again is kept from the first read, and any failure to read a file is that
 * file's: it is listed as failed with its reason, and the others are imported (exit 4).
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchelPiped, satchelProcess } from './process.js';

let server: RunningServer;
let work: string;
beforeAll(async () => {
  server = await startSatchelServer();
  work = mkdtempSync(join(tmpdir(), 'cli-local-files-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

it('imports a session piped in as /dev/stdin', async () => {
  const file = join(work, 'piped-1.json');
  writeFileSync(file, JSON.stringify({ id: 'piped-1', task: 'from a pipe', messages: [] }));
  // `cat piped-1.json | satchel import /dev/stdin`
  const r = await satchelPiped(file, ['import', '/dev/stdin'], { SATCHEL_URL: server.url });
  expect(r).toMatchObject({
    code: 0,
    stdout: 'Imported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n',
  });
  const { session } = await new SatchelClient({ url: server.url }).get('piped-1');
  expect(session.task).toBe('from a pipe');
}, 60_000);

it('lists a file too large to read as failed and imports the rest', async () => {
  const dir = join(work, 'big');
  mkdirSync(dir);
  // A sparse file: 3 GiB long without using the disk.
  writeFileSync(join(dir, 'a-huge.json'), '');
  truncateSync(join(dir, 'a-huge.json'), 3 * 1024 ** 3);
  for (const id of ['b-1', 'b-2'])
    writeFileSync(join(dir, `${id}.json`), JSON.stringify({ id, task: id, messages: [] }));
  const r = await satchelProcess(['import', dir, '-j', '1'], { SATCHEL_URL: server.url });
  expect(r.stderr).not.toContain('unexpected error');
  expect(r.code).toBe(4);
  expect(r.stdout).toContain(
    `failed     ${join(dir, 'a-huge.json')}: cannot read: too large to read whole ` +
      '(File size (3221225472) is greater than 2 GiB)\n',
  );
  expect(r.stdout).toContain('Imported 3 files: 2 created, 0 unchanged, 0 replaced, 1 failed');
}, 60_000);

it('lists a folder named *.json as failed, as any file it cannot read', async () => {
  const dir = join(work, 'odd');
  mkdirSync(join(dir, 'not-a-file.json'), { recursive: true });
  writeFileSync(join(dir, 'c-1.json'), JSON.stringify({ id: 'c-1', task: 'c', messages: [] }));
  const r = await satchelProcess(['import', dir], { SATCHEL_URL: server.url });
  expect(r.code).toBe(4);
  expect(r.stdout).toMatch(/^failed {5}\S*not-a-file\.json: cannot read: EISDIR/m);
  expect(r.stdout).toContain('1 created');
}, 60_000);
