import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

/** The real `satchel` launcher (bin/satchel.js running the built dist/cli.js), as npx runs it: output, exit codes. */

let server: RunningServer;
beforeAll(async () => {
  // The build `npm install` made may predate the code under test.
  await buildCli();
  server = await startSatchelServer();
}, 60_000);
afterAll(async () => {
  await server.close();
});

function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, SATCHEL_URL: server.url, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('bin/satchel.js', () => {
  it('runs commands and exits with their codes', async () => {
    const created = await run('node', ['bin/satchel.js', 'session', 'create', 'from the launcher']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const id = created.stdout.trim();
    expect(id).toMatch(/^\d{8}-[0-9a-f]{32}$/);
    const list = await run('node', ['bin/satchel.js', 'session', 'list']);
    expect(list.stdout).toContain(`${id}  0      -      from the launcher`);
    const missing = await run('node', ['bin/satchel.js', 'session', 'show', 'nope']);
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: 'satchel: Not Found: session nope does not exist\n',
    });
    const usage = await run('node', ['bin/satchel.js', 'session', 'trim', id, 'x']);
    expect(usage.code).toBe(2);
    const down = await run('node', ['bin/satchel.js', 'session', 'list'], {
      SATCHEL_URL: 'http://127.0.0.1:9',
    });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('cannot reach http://127.0.0.1:9');
  });

  it('says how to build the CLI when dist/cli.js is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-unbuilt-'));
    try {
      mkdirSync(join(dir, 'bin'));
      copyFileSync('bin/satchel.js', join(dir, 'bin', 'satchel.js'));
      const r = await run('node', [join(dir, 'bin', 'satchel.js'), '--help']);
      expect(r.code).toBe(70);
      expect(r.stderr).toContain(
        'satchel: the CLI is not built (dist/cli.js is missing). Run `npm run build:cli`',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is what `npx satchel` runs in this repository', async () => {
    const r = await run('npx', ['--no-install', 'satchel', 'session', 'show', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: satchel session show/);
  });
});
