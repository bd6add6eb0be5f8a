// Review s67h F2: an odek file with created_at and no updated_at (old odek files) gets the time of the
// import as updated_at; the CLI took it from its own clock, so on a machine whose clock is more than 5
// minutes ahead of the server's the create was refused ("updated_at is in the future", exit 4) although the
// file has no updated_at, and on one behind it the session got a time before its import. The time of the
// import is the server's, as the Date header of its answers tells it.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeApp, TOKENS } from '../http/helpers.js';
import type { RunResult } from './run.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('./cli-entry.mts', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./clock-skew.mjs', import.meta.url));

/** `satchel <args>` as a process whose clock is `skewMs` off. */
function skewedCli(args: string[], env: Record<string, string>, skewMs: number) {
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', PRELOAD, '--import', 'tsx', ENTRY, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, ...env, SATCHEL_TEST_CLOCK_SKEW_MS: String(skewMs) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let app: Awaited<ReturnType<typeof makeApp>>;
let server: ReturnType<typeof serve>;
let env: Record<string, string>;
beforeAll(async () => {
  app = await makeApp();
  server = serve({ fetch: app.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  env = { SATCHEL_URL: `http://127.0.0.1:${port}`, SATCHEL_TOKEN: TOKENS.laptop };
});
afterAll(() => void server.close());

const oldFile = (id: string) => ({
  id,
  created_at: '2026-03-02T09:00:00Z',
  task: 't',
  messages: [{ role: 'user', content: 'hi' }],
});

/** The stored session's created_at kept, and an updated_at of the server's time during the import. */
async function importedNow(id: string, before: number) {
  const stored = JSON.parse((await app.call('GET', `/v1/sessions/${id}`)).text);
  expect(stored.created_at).toBe('2026-03-02T09:00:00Z');
  // The Date header counts whole seconds.
  expect(Date.parse(stored.updated_at)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(stored.updated_at)).toBeLessThanOrEqual(Date.now());
}

it("a file without updated_at imports on a machine whose clock is 10 minutes ahead: the refusal's answer tells the server's time", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-client-clock-'));
  writeFileSync(join(dir, 'old-ahead.json'), JSON.stringify(oldFile('old-ahead')));
  const before = Date.now();
  const r = await skewedCli(['import', dir], env, 10 * 60_000);
  expect(r.stdout).toBe('Imported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n');
  expect(r.code).toBe(0);
  await importedNow('old-ahead', before);
});

it("on a machine whose clock is 10 minutes behind, once an answer told the server's time", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-client-clock-'));
  const first = { ...oldFile('a-first-behind'), updated_at: '2026-03-02T09:30:00Z' };
  writeFileSync(join(dir, 'a-first-behind.json'), JSON.stringify(first));
  writeFileSync(join(dir, 'old-behind.json'), JSON.stringify(oldFile('old-behind')));
  const before = Date.now();
  const r = await skewedCli(['import', '-j', '1', dir], env, -10 * 60_000);
  expect(r.stdout).toBe('Imported 2 files: 2 created, 0 unchanged, 0 replaced, 0 failed\n');
  await importedNow('old-behind', before);
});
