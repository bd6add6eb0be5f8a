// Review s66d F1: odek (since 2026-06) keeps its session vector index in the sessions folder, and
// vectors_meta.json ({"fingerprint":"rp/256"}) was imported as a session: it failed, and every
// `satchel import ~/.odek/sessions` exited 4 although every session was imported. It is skipped as odek's
// own file now, and so is any other file of a folder that holds a JSON object with neither id nor messages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

/** The CLI's main() against an in-process server. */
async function harness() {
  const app = await makeApp();
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const env = { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop };
  return (args: string[]) => satchel(args, env, { fetch: fetcher });
}

const session = {
  id: '20260518-0123456789abcdef0123456789abcdef',
  created_at: '2026-05-18T10:00:00.123456789+02:00',
  updated_at: '2026-05-18T10:05:00.5+02:00',
  model: 'gpt-4o',
  turns: 1,
  task: 'rename loadCfg',
  sandbox: false,
  messages: [
    { role: 'user', content: 'rename loadCfg to loadConfig' },
    { role: 'assistant', content: 'Done.' },
  ],
};

/** A folder of `files` (name: text). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s66d-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** An odek sessions folder as odek leaves it after `odek continue`: one session, its index, its vectors. */
const odekFolder = () =>
  folder({
    [`${session.id}.json`]: JSON.stringify(session),
    'index.json': JSON.stringify([{ id: session.id, title: session.task, turns: 1 }]),
    'vectors_meta.json': JSON.stringify({ fingerprint: 'rp/256' }),
    'vectors.gob': 'binary',
    'embedder.gob': 'binary',
  });

describe("odek's vectors_meta.json", () => {
  it("is skipped as odek's own file: exit 0 on every run", async () => {
    const cli = await harness();
    const dir = odekFolder();
    const own = (name: string) => `skipped    ${join(dir, name)}: odek's own file, not a session\n`;
    for (const counts of ['1 created, 0 unchanged', '0 created, 1 unchanged']) {
      const r = await cli(['import', dir]);
      expect(r.stdout).toBe(
        own('index.json') +
          own('vectors_meta.json') +
          `Imported 1 file: ${counts}, 0 replaced, 0 failed\n`,
      );
      expect(r.code).toBe(0);
    }
    const json = JSON.parse((await cli(['import', '--json', dir])).stdout);
    expect([json.failed, json.unchanged, json.skipped]).toEqual([
      0,
      1,
      [join(dir, 'index.json'), join(dir, 'vectors_meta.json')],
    ]);
  });

  it('is skipped when named as a file too (a shell glob)', async () => {
    const cli = await harness();
    const dir = odekFolder();
    const glob = [`${session.id}.json`, 'index.json', 'vectors_meta.json'].map((n) => join(dir, n));
    const r = await cli(['import', ...glob]);
    expect(r.stdout).toContain(`skipped    ${glob[2]}: odek's own file, not a session\n`);
    expect(r.code).toBe(0);
  });

  it('--help names it', async () => {
    const cli = await harness();
    expect((await cli(['import', '--help'])).stdout.replace(/\s+/g, ' ')).toContain(
      "odek's index.json, latest.json and vectors_meta.json are skipped",
    );
  });
});

describe('a JSON object with neither id nor messages', () => {
  const other = JSON.stringify({ fingerprint: 'rp/512', dims: 512 });

  it('in a folder, is skipped as not a session (exit 0)', async () => {
    const cli = await harness();
    const dir = odekFolder();
    writeFileSync(join(dir, 'settings.json'), other);
    const r = await cli(['import', dir]);
    expect(r.stdout).toContain(`skipped    ${join(dir, 'settings.json')}: not a session\n`);
    expect(r.stdout).toContain('Imported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n');
    expect(r.code).toBe(0);
    const json = JSON.parse((await cli(['import', '--json', dir])).stdout);
    expect(json.skipped).toContain(join(dir, 'settings.json'));
    expect(json.failed).toBe(0);
  });

  it('named as a file, still fails (exit 4)', async () => {
    const cli = await harness();
    const dir = folder({ 'settings.json': other });
    const file = join(dir, 'settings.json');
    // Also when its folder is named too, before it or after it.
    for (const args of [[file], [dir, file], [file, dir]]) {
      const r = await cli(['import', ...args]);
      expect(r.stdout).toContain(`failed     ${file}: not an odek session`);
      expect(r.stdout).not.toContain('skipped');
      expect(r.code).toBe(4);
    }
  });

  it('a folder of nothing else has no session files (exit 2)', async () => {
    const cli = await harness();
    const dir = folder({ 'vectors_meta.json': '{"fingerprint":"rp/256"}', 'settings.json': other });
    const r = await cli(['import', dir]);
    expect(r.stderr).toContain(`no odek session files (*.json) in ${dir}`);
    expect(r.code).toBe(2);
  });

  it('a broken session (messages without an id, an array, null) still fails', async () => {
    const cli = await harness();
    const dir = folder({
      'no-id.json': JSON.stringify({ messages: session.messages }),
      'id-null.json': JSON.stringify({ id: null }),
      'list.json': '[]',
      'null.json': 'null',
    });
    const r = await cli(['import', '--json', dir]);
    const json = JSON.parse(r.stdout);
    expect([json.failed, json.skipped]).toEqual([4, []]);
    expect(r.code).toBe(4);
  });
});
