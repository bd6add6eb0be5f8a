// The CLI review's notes (2026-12-04), each a behaviour that misled a user:
// - any parse error was blamed on a `-<digit>` argument anywhere on the line ("-5 degrees is a negative
//   number" for `--bogus -- "-5 degrees"`), hiding the real mistake;
// - a SATCHEL_TOKEN holding "€" was refused as holding "a line break or another control character";
// - a token the server refuses (401/403) failed every file of an import, one line each, with exit 4;
// - a file that is not JSON was reported with the engine's message, which quotes the text around the
//   error (part of a key, in a broken session file), printed to the terminal and CI logs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oldFormat } from '../support/odek-files.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

const TOKEN = 'tok_review_notes_0123456789';
let server: RunningServer;
let work: string;

beforeAll(async () => {
  server = await startSatchelServer({ env: { SATCHEL_TOKENS: `r/laptop=${TOKEN}` } });
  work = mkdtempSync(join(tmpdir(), 'satchel-cli-notes-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const env = (token = TOKEN) => ({ SATCHEL_URL: server.url, SATCHEL_TOKEN: token });

describe('usage errors name the argument at fault', () => {
  it('an unknown option is named, though a later argument starts with a minus and a digit', async () => {
    for (const argv of [
      ['session', 'append', 'x', '--bogus', '--', '-5 degrees'],
      ['session', 'list', '--bogus', '-5'],
    ]) {
      const r = await satchel(argv, env());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("'--bogus'");
      expect(r.stderr).not.toContain('negative number');
    }
  });

  it('a negative number is still named as one, as a value or alone', async () => {
    for (const [argv, named] of [
      [['session', 'cleanup', '-12'], '-12'],
      [['session', 'list', '--limit', '-5'], '-5'],
    ] as const) {
      const r = await satchel([...argv], env());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${named} is a negative number`);
    }
  });

  it('a token with a character beyond Latin-1 is refused for that, without echoing it', async () => {
    const r = await satchel(['session', 'list'], env('tok€secret_0123456789'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a character an HTTP header cannot carry');
    expect(r.stderr).not.toContain('control character');
    expect(r.stderr).not.toContain('secret_0123456789');
    const control = await satchel(['session', 'list'], env('tok\u0007bell_0123456789'));
    expect(control.stderr).toContain('control character');
  });
});

describe('import', () => {
  it('stops at a refused token with one error and exit 1, instead of failing every file', async () => {
    const dir = join(work, 'refused');
    mkdirSync(dir);
    for (let i = 0; i < 5; i++)
      writeFileSync(join(dir, `s${i}.json`), JSON.stringify(oldFormat(`refused-${i}`)));
    const r = await satchel(['import', dir], env('tok_wrong_0123456789abc'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Unauthorized: the token is not known');
    expect(r.stderr.match(/Unauthorized/g)).toHaveLength(1);
    expect(r.stdout).not.toContain('failed ');
  });

  it('a file that is not JSON is reported without its text', async () => {
    const dir = join(work, 'broken');
    mkdirSync(dir);
    const key = 'sk-proj-' + 'Ab3dE5gH7jK9mN'.repeat(4);
    writeFileSync(join(dir, 'broken.json'), `{"task": "x", "API_KEY": ${key}}`);
    const r = await satchel(['import', '--json', dir], env());
    expect(r.code).toBe(4);
    const report = JSON.parse(r.stdout);
    expect(report.results[0].reason).toBe('not JSON');
    expect(r.stdout + r.stderr).not.toContain('sk-proj-');
  });
});

describe('import of files that share an id', () => {
  it('refuses every one of them, the same way each run, and imports the rest', async () => {
    const dir = join(work, 'same-id');
    mkdirSync(dir);
    const original = oldFormat('same-id-1');
    writeFileSync(join(dir, 'same-id-1.json'), JSON.stringify(original));
    writeFileSync(
      join(dir, 'same-id-1.bak.json'),
      JSON.stringify({ ...original, task: 'an older task' }),
    );
    writeFileSync(join(dir, 'other.json'), JSON.stringify(oldFormat('same-id-other')));
    for (const run of [1, 2]) {
      const r = await satchel(['import', '--json', dir], env());
      expect(r.code).toBe(4);
      const report = JSON.parse(r.stdout);
      expect(report).toMatchObject({ created: run === 1 ? 1 : 0, failed: 2 });
      const failed = report.results.filter((x: { status: string }) => x.status === 'failed');
      expect(failed.map((x: { source: string; reason: string }) => [x.source, x.reason])).toEqual([
        [join(dir, 'same-id-1.bak.json'), expect.stringMatching(/same-id-1\.json has the same id/)],
        [
          join(dir, 'same-id-1.json'),
          expect.stringMatching(/same-id-1\.bak\.json has the same id/),
        ],
      ]);
    }
    const got = await satchel(['session', 'show', 'same-id-1'], env());
    expect(got.code).toBe(1);
    expect(got.stderr).toContain('Not Found');
  });

  it('imports copies with the same bytes as one session', async () => {
    const dir = join(work, 'same-bytes');
    mkdirSync(dir);
    const text = JSON.stringify(oldFormat('same-bytes-1'));
    writeFileSync(join(dir, 'a.json'), text);
    writeFileSync(join(dir, 'b.json'), text);
    const r = await satchel(['import', '--json', dir], env());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 1, unchanged: 1, failed: 0 });
  });
});
