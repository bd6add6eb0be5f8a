// Review s58c: the CLI's reader going away. `satchel import <folder> 2>&1 | head -n 1` closes stderr while
// the import writes its progress lines there: only stdout had an EPIPE handler, so the next progress line
// threw an uncaught EPIPE and killed the import half way through its files (exit code 1, as if the server
// had refused). And `satchel import <folder> | head -n 1` exited 0 at stdout's first EPIPE (its handler
// called process.exit(0)), also when a file had failed (exit code 4). Now a closed stream drops what is
// written after it, and the command runs to its end with its own exit code.
//
// The reader's end of the pipe is closed as the CLI starts (before it can write anything), so the first
// write meets EPIPE: no timing is involved.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
}, 60_000);
afterAll(async () => {
  await server.close();
});

/** A folder of `n` odek files with ids `<prefix>-NNN`, and with `broken` one that is not JSON. */
function folder(prefix: string, n: number, broken = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-epipe-'));
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${String(i).padStart(3, '0')}`;
    const session = { id, task: `t ${i}`, messages: [{ role: 'user', content: `m ${i}` }] };
    writeFileSync(join(dir, `${id}.json`), JSON.stringify(session));
  }
  if (broken) writeFileSync(join(dir, 'a-broken.json'), '{"id": "broken", ');
  return dir;
}

/** `satchel <args>` as a process whose `closed` stream's reader is gone; the other stream's text. */
function withClosed(
  closed: 'stdout' | 'stderr',
  args: string[],
): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
      cwd: ROOT,
      env: { ...process.env, SATCHEL_URL: server.url, SATCHEL_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child[closed].destroy();
    let text = '';
    child[closed === 'stdout' ? 'stderr' : 'stdout'].on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, text }));
  });
}

async function countWith(prefix: string): Promise<number> {
  const res = await fetch(`${server.url}/v1/sessions?limit=100`);
  const body = (await res.json()) as { sessions: { id: string }[] };
  return body.sessions.filter((s) => s.id.startsWith(`${prefix}-`)).length;
}

describe('a closed pipe (`| head`)', () => {
  it('on stderr: the import still imports every file, and exits 0', async () => {
    // 20 files: a progress line on stderr every 2 files; before, the first one killed the import.
    const r = await withClosed('stderr', [
      'import',
      folder('stderr-gone', 20),
      '--concurrency',
      '1',
    ]);
    expect({ code: r.code, imported: await countWith('stderr-gone') }).toEqual({
      code: 0,
      imported: 20,
    });
    expect(r.text).toContain('Imported 20 files: 20 created');
  }, 120_000);

  it('on stdout: an import with a failed file still exits 4 (before: 0)', async () => {
    const r = await withClosed('stdout', ['import', folder('stdout-gone', 3, true)]);
    expect(r.code).toBe(4);
    expect(await countWith('stdout-gone')).toBe(3);
  }, 120_000);

  it('on stdout: a listing exits 0, with nothing on stderr', async () => {
    const r = await withClosed('stdout', ['session', 'list']);
    expect(r).toEqual({ code: 0, text: '' });
  }, 120_000);
});
