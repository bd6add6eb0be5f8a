// Review s60d (F4): a write to stdout that fails with anything but EPIPE (a full disk: ENOSPC, as /dev/full
// answers every write) was rethrown from the stream's 'error' handler: an uncaught exception, so Node
// printed the minified source line and a stack and exited 1 ("the server answered an error" in
// docs/cli.md). Now it is one line on stderr and exit 5, a local file that could not be written.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

const ENTRY = fileURLToPath(new URL('./cli-entry.mts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
  const res = await fetch(`${server.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'full-disk',
      task: 't',
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  expect(res.status).toBe(201);
}, 60_000);
afterAll(() => server.close());

/** `satchel <args>` as a process with `stream` on /dev/full (a full disk); the other stream's text. */
function onFullDisk(
  stream: 'stdout' | 'stderr',
  args: string[],
): Promise<{ code: number; text: string }> {
  const full = openSync('/dev/full', 'w');
  return new Promise<{ code: number; text: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
      cwd: ROOT,
      env: { ...process.env, SATCHEL_URL: server.url, SATCHEL_TOKEN: '' },
      stdio: ['ignore', stream === 'stdout' ? full : 'pipe', stream === 'stderr' ? full : 'pipe'],
    });
    let text = '';
    child[stream === 'stdout' ? 'stderr' : 'stdout']!.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, text }));
  }).finally(() => closeSync(full));
}

describe('stdout on a full disk', () => {
  it.each([[['session', 'list']], [['session', 'show', 'full-disk', '--json']]])(
    'satchel %j: one line on stderr, exit 5 (before: a stack, exit 1)',
    async (args) => {
      const r = await onFullDisk('stdout', args);
      expect(r).toEqual({ code: 5, text: 'satchel: cannot write to stdout: ENOSPC\n' });
    },
    60_000,
  );

  it('an import still imports every file, and says its report could not be written', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'satchel-full-'));
    for (let i = 0; i < 3; i++) {
      const session = { id: `full-${i}`, task: 't', messages: [{ role: 'user', content: 'hi' }] };
      writeFileSync(join(folder, `${i}.json`), JSON.stringify(session));
    }
    const r = await onFullDisk('stdout', ['import', folder]);
    expect(r.code).toBe(5);
    expect(r.text.trimEnd().split('\n').at(-1)).toBe('satchel: cannot write to stdout: ENOSPC');
    const listed = await fetch(`${server.url}/v1/sessions?limit=100`);
    const { sessions } = (await listed.json()) as { sessions: { id: string }[] };
    expect(sessions.filter((s) => s.id.startsWith('full-')).length).toBe(4);
  }, 60_000);
});

describe('stderr on a full disk', () => {
  it("progress lines lost are no failure: the import's report on stdout, exit 0", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'satchel-full-'));
    for (let i = 0; i < 20; i++) {
      const session = {
        id: `err-full-${i}`,
        task: 't',
        messages: [{ role: 'user', content: 'hi' }],
      };
      writeFileSync(join(folder, `${i}.json`), JSON.stringify(session));
    }
    const r = await onFullDisk('stderr', ['import', '-j', '1', folder]);
    expect(r).toEqual({
      code: 0,
      text: 'Imported 20 files: 20 created, 0 unchanged, 0 replaced, 0 failed\n',
    });
  }, 120_000);
});
