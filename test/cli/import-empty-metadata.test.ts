/**
 * Before 2026-12-05 (found by review): `satchel import` compared a file's `metadata` with the stored
 * session's whenever the file had the key (lib/odek/match.ts), `{}` included, while the create and the
 * replace send metadata only when it has keys. A file with `"metadata": {}` next to a session with
 * metadata was "exists with different content (metadata …)", and `--overwrite` reported `replaced` on
 * every run, though the PUT left the metadata as it was. Now empty metadata is no metadata: such a file
 * is `unchanged`, as docs/cli.md says ("`metadata` only when the file has some").
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
  work = mkdtempSync(join(tmpdir(), 'cli-empty-metadata-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

it('a file with empty metadata is no difference, and --overwrite replaces nothing', async () => {
  const c = new SatchelClient({ url: server.url });
  await c.create({ id: 'meta-1', task: 'tagged', messages: [], metadata: { team: 'infra' } });
  const dir = join(work, 'sessions');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'meta-1.json'),
    JSON.stringify({ id: 'meta-1', task: 'tagged', messages: [], metadata: {} }),
  );
  const env = { SATCHEL_URL: server.url };
  const plain = await satchel(['import', dir, '--json'], env);
  const first = await satchel(['import', dir, '--overwrite', '--json'], env);
  const second = await satchel(['import', dir, '--overwrite', '--json'], env);
  const statuses = [plain, first, second].map((r) => JSON.parse(r.stdout).results[0].status);
  expect(statuses).toEqual(['unchanged', 'unchanged', 'unchanged']);
  const { session } = await c.get('meta-1');
  expect(session.metadata).toEqual({ team: 'infra' });
  expect(session.revision).toBe(1);
});
