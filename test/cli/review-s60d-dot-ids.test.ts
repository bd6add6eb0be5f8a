// Review s60d (F1): a session id of `.` or `..` passed the CLI's check (only '' was refused), and the
// client's seg() then threw a plain TypeError (fetch would resolve such a segment as the path's own): the
// CLI printed it with its stack as an "unexpected error" and exited 70. docs/cli.md: a bad command line,
// an empty session id among others, is one line and exit 2; an id no request can carry is one too.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchelProcess } from './process.js';
import { satchel } from './run.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
});
afterAll(() => server.close());

describe('a session id of "." or ".."', () => {
  it.each([
    [['session', 'show', '..']],
    [['session', 'show', '.', '--json']],
    [['session', 'delete', '.']],
    [['session', 'append', '..', 'hi']],
    [['session', 'trim', '..', '3']],
    [['session', 'create', 'task', '--id', '.']],
    [['continue', '--id', '.', 'hi']],
  ])('satchel %j: one line, exit 2', async (args) => {
    const r = await satchel(args, { SATCHEL_URL: server.url });
    expect(r.code).toBe(2);
    // With --json the line is {"error":"usage","detail":…}: the quotes escaped.
    expect(r.stderr).toContain('(no session has such an id)');
    expect(r.stderr.trimEnd().split('\n')[0]).not.toMatch(/TypeError|unexpected error/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });

  it('export: exit 2 before it makes the folder', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'satchel-dot-ids-')), 'out');
    const r = await satchel(['export', '..', folder], { SATCHEL_URL: server.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/must not be "\." or "\.\."/);
    expect(r.stderr).not.toContain('export stopped');
    expect(existsSync(folder)).toBe(false);
  });

  it('the real process: the usage error, no stack, exit 2 (before: exit 70)', async () => {
    const r = await satchelProcess(['session', 'show', '..'], { SATCHEL_URL: server.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^satchel: session show: <id> must not be "\." or "\.\."/);
    expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
  }, 60_000);

  it('`session cleanup .` still says what is wrong with <days>', async () => {
    const r = await satchel(['session', 'cleanup', '.'], { SATCHEL_URL: server.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('<days>');
    expect(r.stderr).not.toContain('no session has such an id');
  });
});
