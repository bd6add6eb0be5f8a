import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Review s59c: with an IPv6 HOST, functions/node.ts printed `satchel listening on http://::1:<port>`, which
// is not a URL (it needs brackets: http://[::1]:<port>). Runs the entry as `npm start` does, in its own
// process, on the loopback address ::1 and any free port, and reads the banner's first line.
const root = join(import.meta.dirname, '..', '..');

/** The first line functions/node.ts prints with `env`, then stops it. */
function firstLine(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/node.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        SATCHEL_DATA_DIR: mkdtempSync(join(tmpdir(), 'satchel-ipv6-')),
        SATCHEL_LOG: 'pretty',
        PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', () =>
      stdout.includes('\n') ? resolve(stdout.split('\n')[0]!) : reject(new Error(stderr)),
    );
  });
}

describe('functions/node.ts start banner with an IPv6 HOST (review s59c)', () => {
  it('prints a URL with the address in brackets, one that parses', async () => {
    const line = await firstLine({ HOST: '::1', SATCHEL_TOKENS: 'a=tok_aaaaaaaaaaaa1' });
    const m = /^satchel listening on (\S+)$/.exec(line);
    expect(m, line).not.toBeNull();
    const url = new URL(m![1]!);
    expect(url.hostname).toBe('[::1]');
    expect(Number(url.port)).toBeGreaterThan(0);
  });

  it('an IPv4 HOST is printed as before', async () => {
    const line = await firstLine({ HOST: '127.0.0.1', SATCHEL_TOKENS: 'a=tok_aaaaaaaaaaaa1' });
    expect(line).toMatch(/^satchel listening on http:\/\/127\.0\.0\.1:\d+$/);
  });
});
