// Review s62d, `satchel import`:
// - F1: a file ref that matches a stored ref on (kind, uri, created_by) but has another read_only or
//   created_at counted as missing: a plain import failed on every run (exit 4), and each --overwrite said
//   "replaced" (the stored session "keeps 1 external ref the file lacks") and wrote a revision that changed
//   nothing, since a stored ref never changes. Now it matches, as the store deduplicates, with a note.
// - F3: fields odek's own files carry (buffer, pinned, token counts) were left out as fields "odek does not
//   define"; they are not in Satchel's stored format.
// - F4: odek's index.json (and latest.json) named as files (a shell glob of the folder) failed, exit 4.
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
  const cli = (args: string[]) => satchel(args, env, { fetch: fetcher });
  const show = async (id: string) =>
    JSON.parse((await cli(['session', 'show', id, '--json'])).stdout) as {
      revision: number;
      external_refs: unknown[];
      messages: { content: string }[];
    };
  return { cli, show };
}

const times = { created_at: '2026-03-02T09:00:00Z', updated_at: '2026-03-02T09:30:00Z' };
const tempDir = () => mkdtempSync(join(tmpdir(), 'satchel-s62d-'));

describe('F1: a ref whose read_only or created_at the file changed', () => {
  const ref = {
    kind: 'file',
    uri: '/a.ts',
    created_by: 'odek',
    read_only: false,
    created_at: times.created_at,
  };
  const fileOf = (refs: unknown[], content = 'hi') => ({
    id: 'ref-1',
    ...times,
    task: 'refs',
    messages: [{ role: 'user', content }],
    external_refs: refs,
  });

  it.each([
    ['read_only', { read_only: true }, 'read_only false'],
    ['created_at', { created_at: '2026-04-01T00:00:00Z' }, 'created_at 2026-03-02T09:00:00Z'],
  ])('%s: unchanged with a note; --overwrite writes nothing', async (_, change, kept) => {
    const { cli, show } = await harness();
    const dir = tempDir();
    const path = join(dir, 'ref-1.json');
    writeFileSync(path, JSON.stringify(fileOf([ref])));
    expect((await cli(['import', dir])).code).toBe(0);

    writeFileSync(path, JSON.stringify(fileOf([{ ...ref, ...change }])));
    const note = `unchanged  ref-1 (ref file /a.ts kept as stored (${kept}): a stored ref does not change)\n`;
    const plain = await cli(['import', dir]);
    expect(plain.stdout).toBe(
      `${note}Imported 1 file: 0 created, 1 unchanged, 0 replaced, 0 failed\n`,
    );
    expect(plain.code).toBe(0);
    for (let run = 0; run < 2; run++) {
      const overwrite = await cli(['import', '--overwrite', dir]);
      expect(overwrite.stdout).toContain(note);
      expect(overwrite.stdout).not.toContain('the file lacks');
      expect(overwrite.code).toBe(0);
    }
    const stored = await show('ref-1');
    expect(stored.revision).toBe(1);
    expect(stored.external_refs).toEqual([ref]);

    const json = JSON.parse((await cli(['import', '--json', dir])).stdout);
    expect(json.results[0].notes).toEqual([
      `ref file /a.ts kept as stored (${kept}): a stored ref does not change`,
    ]);
  });

  it('a file that differs in a message too is replaced once, then unchanged', async () => {
    const { cli, show } = await harness();
    const dir = tempDir();
    const path = join(dir, 'ref-1.json');
    writeFileSync(path, JSON.stringify(fileOf([ref])));
    expect((await cli(['import', dir])).code).toBe(0);

    writeFileSync(path, JSON.stringify(fileOf([{ ...ref, read_only: true }], 'hello')));
    const first = await cli(['import', '--overwrite', dir]);
    expect(first.stdout).toContain(
      'replaced   ref-1 (it differed in messages[0].content; ' +
        'ref file /a.ts kept as stored (read_only false): a stored ref does not change)\n',
    );
    const second = await cli(['import', '--overwrite', dir]);
    expect(second.stdout).toContain('0 replaced');
    expect(second.stdout).toContain('1 unchanged');
    const stored = await show('ref-1');
    expect([stored.revision, stored.messages[0]!.content]).toEqual([2, 'hello']);
  });
});

describe("F3: fields odek's files carry that Satchel does not store", () => {
  it("are named as not in Satchel's stored format, not as fields odek does not define", async () => {
    const { cli } = await harness();
    const dir = tempDir();
    const odek = {
      id: '20260518-0123456789abcdef0123456789abcdef',
      ...times,
      model: 'gpt-4o',
      turns: 1,
      task: 'rename the loader',
      sandbox: false,
      messages: [{ role: 'user', content: 'rename loadCfg' }],
      buffer: ['turn 1: renamed loadCfg to loadConfig'],
      pinned: true,
      input_tokens: 1234,
      output_tokens: 56,
    };
    writeFileSync(join(dir, 'odek.json'), JSON.stringify(odek));
    const r = await cli(['import', dir]);
    expect(r.stdout).toContain(
      `created    ${odek.id} (imported without fields buffer, pinned, input_tokens, output_tokens: ` +
        "not in Satchel's stored format)",
    );
    expect(r.stdout).not.toContain('odek does not define');

    writeFileSync(join(dir, 'odek.json'), JSON.stringify({ ...odek, pinned: undefined }));
    const json = JSON.parse((await cli(['import', '--json', dir])).stdout);
    expect(json.results[0].notes).toEqual([
      "not imported: fields buffer, input_tokens, output_tokens (not in Satchel's stored format)",
    ]);

    const help = await cli(['import', '--help']);
    expect(help.stdout).toContain("Left out: top-level fields not in Satchel's stored format");
    expect(help.stdout).not.toContain('odek does not define');
  });
});

describe("F4: odek's own files named as files (a shell glob)", () => {
  it('are skipped as in the folder, exit 0', async () => {
    const { cli } = await harness();
    const dir = tempDir();
    const session = {
      id: '20260518-aa',
      ...times,
      task: 't',
      messages: [{ role: 'user', content: 'hi' }],
    };
    writeFileSync(join(dir, '20260518-aa.json'), JSON.stringify(session));
    writeFileSync(
      join(dir, 'index.json'),
      JSON.stringify([{ id: session.id, title: 't', turns: 1 }]),
    );
    writeFileSync(join(dir, 'latest.json'), JSON.stringify(session));
    const glob = ['20260518-aa.json', 'index.json', 'latest.json'].map((n) => join(dir, n));
    const r = await cli(['import', ...glob]);
    expect(r.stdout).toBe(
      `skipped    ${glob[1]}: odek's own file, not a session\n` +
        `skipped    ${glob[2]}: odek's own file, not a session\n` +
        'Imported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n',
    );
    expect(r.code).toBe(0);
    const json = JSON.parse((await cli(['import', '--json', ...glob])).stdout);
    expect([json.unchanged, json.failed, json.skipped]).toEqual([1, 0, glob.slice(1)]);
  });
});
