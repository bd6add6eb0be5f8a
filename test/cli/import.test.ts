import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import {
  newFormat,
  oldFormat,
  tainted,
  toolHeavy,
  withSecrets,
  type OdekFile,
} from '../support/odek-files.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

const TOKENS = {
  a: 'tok_import_a_0123456789',
  b: 'tok_import_b_0123456789',
  c: 'tok_import_c_0123456789',
  d: 'tok_import_d_0123456789',
  e: 'tok_import_e_0123456789',
  f: 'tok_import_f_0123456789',
  g: 'tok_import_g_0123456789',
  h: 'tok_import_h_0123456789',
  i: 'tok_import_i_0123456789',
};
let server: RunningServer;
let work: string;

beforeAll(async () => {
  server = await startSatchelServer({
    env: {
      SATCHEL_TOKENS: Object.entries(TOKENS)
        .map(([ns, t]) => `${ns}/laptop=${t}`)
        .join(','),
    },
  });
  work = mkdtempSync(join(tmpdir(), 'satchel-import-'));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const env = (ns: keyof typeof TOKENS) => ({ SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKENS[ns] });
const client = (ns: keyof typeof TOKENS) =>
  new SatchelClient({ url: server.url, token: TOKENS[ns] });

/** A folder of odek files as odek leaves it: sessions, plus its own index.json. */
function odekFolder(name: string, files: OdekFile[], extra: Record<string, string> = {}): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, `${f.id}.json`), JSON.stringify(f));
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
  return dir;
}

const FIXTURES = () => [oldFormat(), newFormat(), toolHeavy(), tainted(), withSecrets()];

/** A file's messages as the stored format has them: `content: null` is "" (nothing else changes). */
function normalised(messages: Record<string, unknown>[]) {
  return messages.map((m) => ({ ...m, content: m.content ?? '' }));
}

describe('import', () => {
  it('imports old and new odek files through the save pipeline, keeping ids, messages and fields', async () => {
    const dir = odekFolder('first', FIXTURES(), {
      'index.json': '{"sessions":["old-session-1"]}',
      'broken.json': '{"id": "broken", "messages": [',
      'robot.json': JSON.stringify({
        ...oldFormat('robot'),
        messages: [{ role: 'robot', content: 'beep' }],
      }),
      'extra.json': JSON.stringify({ ...oldFormat('extra'), colour: 'blue' }),
      'notes.txt': 'not a session',
    });
    const r = await satchel(['import', dir, '--json'], env('a'));
    expect(r.code).toBe(4); // two files failed
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      created: 6,
      unchanged: 0,
      replaced: 0,
      failed: 2,
      skipped: [join(dir, 'index.json')],
    });
    const by = (id: string) =>
      report.results.find(
        (x: { id?: string; source: string }) => x.id === id || x.source.endsWith(`/${id}.json`),
      );
    expect(by('broken')).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^not JSON( \(at character \d+\))?$/),
    });
    expect(by('robot')).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^not an odek session: messages\.0\.role: /),
    });
    expect(by('extra')).toMatchObject({
      status: 'created',
      notes: ["not imported: field colour (not in Satchel's stored format)"],
    });
    expect(by('with-secrets')).toMatchObject({ status: 'created', notes: ['3 secrets redacted'] });
    expect(by('tool-heavy')).toMatchObject({ status: 'created', notes: [] });

    const c = client('a');
    for (const file of [oldFormat(), newFormat(), toolHeavy(), tainted()]) {
      const { session } = await c.get(file.id);
      expect(session.id).toBe(file.id);
      expect(session.task).toBe(file.task);
      expect(session.model).toBe(file.model);
      expect(session.provider).toBe(file.provider ?? '');
      expect(session.messages).toEqual(normalised(file.messages));
      expect(session.turns).toBe(file.messages.filter((m) => m.role === 'user').length);
      expect(session.sandbox).toBe(file.sandbox ?? false);
      expect(session.untrusted_ingested).toBe(file.untrusted_ingested ?? false);
      expect(session.episode_untrusted).toBe(file.episode_untrusted ?? false);
      expect(session.external_refs).toEqual(
        (file.external_refs as unknown[] | null | undefined) ?? [],
      );
    }
    // Secrets are redacted on the way in, in content and in tool-call arguments (which stay JSON).
    const secret = (await c.get('with-secrets')).session;
    expect(JSON.stringify(secret)).not.toMatch(/sk-proj|hunter2|AKIA/);
    expect(secret.messages[0]!.content).toBe('Use export OPENAI_API_KEY=[REDACTED] for the run.');
    expect(JSON.parse(secret.messages[1]!.tool_calls![0]!.function.arguments)).toEqual({
      user: 'deploy',
      password: '[REDACTED]',
    });

    const text = await satchel(['import', dir], env('a'));
    expect(text.code).toBe(4);
    expect(text.stdout).toContain(
      `skipped    ${join(dir, 'index.json')}: odek's own file, not a session\n`,
    );
    expect(text.stdout).toContain(`failed     ${join(dir, 'broken.json')}: not JSON`);
    expect(text.stdout).toMatch(
      /Imported 8 files: 0 created, 6 unchanged, 0 replaced, 2 failed\n$/,
    );
    // A note next to a created session reads as what it is: imported, with a field left out.
    const fresh = await satchel(['import', join(dir, 'extra.json')], env('f'));
    expect(fresh).toEqual({
      code: 0,
      stdout:
        "created    extra (imported without field colour: not in Satchel's stored format)\nImported 1 file: 1 created, 0 unchanged, 0 replaced, 0 failed\n",
      stderr: '',
    });
  });

  it('is idempotent: a second import changes nothing', async () => {
    const dir = odekFolder('again', FIXTURES());
    expect((await satchel(['import', dir], env('b'))).stdout).toMatch(
      /Imported 5 files: 5 created, 0 unchanged, 0 replaced, 0 failed\n$/,
    );
    const c = client('b');
    const before = await Promise.all(FIXTURES().map((f) => c.get(f.id)));
    const again = await satchel(['import', dir], env('b'));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /Imported 5 files: 0 created, 5 unchanged, 0 replaced, 0 failed\n$/,
    );
    const after = await Promise.all(FIXTURES().map((f) => c.get(f.id)));
    expect(after).toEqual(before);
    for (const f of FIXTURES()) expect((await c.audit(f.id)).map((a) => a.op)).toEqual(['create']);
  });

  it('leaves a session that exists with different content alone, unless --overwrite', async () => {
    const dir = odekFolder('conflict', [newFormat()]);
    await satchel(['import', dir], env('c'));
    const edited = newFormat();
    edited.messages[3] = { role: 'user', content: 'Keep it open after all.' };
    writeFileSync(join(dir, `${edited.id}.json`), JSON.stringify(edited));
    const r = await satchel(['import', dir], env('c'));
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(
      `failed     ${join(dir, `${edited.id}.json`)} (${edited.id}): exists with different content (messages[3].content); --overwrite replaces it\n`,
    );
    const c = client('c');
    expect((await c.get(edited.id)).session.messages[3]!.content).toBe('Close it then.');

    const o = await satchel(['import', dir, '--overwrite'], env('c'));
    expect(o.code).toBe(0);
    expect(o.stdout).toContain(`replaced   ${edited.id} (it differed in messages[3].content)\n`);
    const replaced = (await c.get(edited.id)).session;
    expect(replaced.messages[3]!.content).toBe('Keep it open after all.');
    expect(replaced.revision).toBe(2);
    expect((await satchel(['import', dir], env('c'))).stdout).toMatch(
      /0 created, 1 unchanged, 0 replaced, 0 failed/,
    );
  });

  it("--overwrite makes the model and provider the file's, even empty; then it is unchanged (review)", async () => {
    const c = client('i');
    const file = { ...newFormat(), id: 'model-emptied' };
    await c.create({ id: file.id, task: 'emptied', model: 'gpt-4o', provider: 'openai' });
    const dir = odekFolder('model-emptied', [{ ...file, model: '', provider: '' }]);
    const o = await satchel(['import', dir, '--overwrite'], env('i'));
    expect(o.code).toBe(0);
    expect(o.stdout).toMatch(/0 created, 0 unchanged, 1 replaced, 0 failed/);
    const stored = (await c.get(file.id)).session;
    expect({ model: stored.model, provider: stored.provider }).toEqual({ model: '', provider: '' });
    const again = await satchel(['import', dir], env('i'));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/0 created, 1 unchanged, 0 replaced, 0 failed/);
  });

  it('keeps times written with a lower-case t and z, and says when a time cannot be kept (review)', async () => {
    const lower = { ...newFormat(), id: 'lower-times' };
    Object.assign(lower, {
      created_at: '2025-01-10t08:00:00z',
      updated_at: '2025-01-10t09:30:00.5z',
    });
    const naive = { ...newFormat(), id: 'naive-times' };
    Object.assign(naive, { created_at: '2025-01-10T08:00:00', updated_at: '2025-01-10T09:30:00Z' });
    const dir = odekFolder('times', [lower, naive]);
    const r = await satchel(['import', dir, '--json'], env('i'));
    expect(r.code).toBe(0);
    const results = JSON.parse(r.stdout).results as { id: string; notes: string[] }[];
    const c = client('i');
    const kept = (await c.get('lower-times')).session;
    expect([kept.created_at, kept.updated_at]).toEqual([
      '2025-01-10T08:00:00Z',
      '2025-01-10T09:30:00.5Z',
    ]);
    expect(results.find((x) => x.id === 'lower-times')!.notes).toEqual([]);
    expect(results.find((x) => x.id === 'naive-times')!.notes).toEqual([
      'created_at not kept (not an RFC 3339 time with an offset)',
    ]);
    expect((await c.get('naive-times')).session.updated_at).toBe('2025-01-10T09:30:00Z');
  });

  it('reads null optional message fields as absent (a Go writer without omitempty) (review)', async () => {
    const file = newFormat();
    const withNulls = {
      ...file,
      id: 'null-fields',
      messages: file.messages.map((m) => ({
        name: null,
        tool_call_id: null,
        tool_calls: null,
        reasoning_content: null,
        ...m,
      })),
    };
    const dir = odekFolder('null-fields', [withNulls]);
    const r = await satchel(['import', dir], env('i'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1 created/);
    const stored = (await client('i').get('null-fields')).session;
    expect(stored.messages).toEqual(normalised(file.messages));
  });

  it('round trip: import → export → import keeps every message and field', async () => {
    const originals = FIXTURES();
    const src = odekFolder('trip-src', originals);
    await satchel(['import', src], env('d'));
    const out = join(work, 'trip-out');
    const exported = await satchel(['export', '--all', out], env('d'));
    expect(exported).toMatchObject({ code: 0, stdout: `Exported 5 sessions to ${out}\n` });
    expect(readdirSync(out).sort()).toEqual(originals.map((f) => `${f.id}.json`).sort());

    const c = client('d');
    for (const original of originals) {
      const text = readFileSync(join(out, `${original.id}.json`), 'utf8');
      expect(text).not.toContain('\n');
      const file = JSON.parse(text);
      const stored = (await c.get(original.id)).session;
      // odek's fields, in odek's order, without Satchel's revision.
      expect(Object.keys(file)).toEqual([
        'id',
        'created_at',
        'updated_at',
        'model',
        'provider',
        'turns',
        'task',
        'sandbox',
        'messages',
        'external_refs',
        'untrusted_ingested',
        'episode_untrusted',
        'episode_taint_tracked',
      ]);
      // An export leaves out what odek does not have: the revision, and metadata when there is none.
      const { revision: _r, metadata, ...rest } = stored;
      expect(metadata).toEqual({});
      expect(file).toEqual(rest);
      if (original.id !== 'with-secrets') {
        expect(file.messages).toEqual(normalised(original.messages));
        for (const key of ['id', 'task', 'model', 'created_at', 'updated_at'] as const)
          if (original[key] !== undefined) expect(file[key]).toBe(original[key]);
      }
    }

    // The exported files import into another namespace as they are, and back into this one unchanged.
    const back = await satchel(['import', out, '--json'], env('d'));
    expect(JSON.parse(back.stdout)).toMatchObject({ created: 0, unchanged: 5, failed: 0 });
    const fresh = await satchel(['import', out, '--json'], env('e'));
    expect(JSON.parse(fresh.stdout)).toMatchObject({ created: 5, failed: 0 });
    for (const f of originals) {
      const strip = ({ created_at: _c, updated_at: _u, ...s }: Record<string, unknown>) => s;
      expect(strip((await client('e').get(f.id)).session)).toEqual(
        strip((await c.get(f.id)).session),
      );
    }
    const out2 = join(work, 'trip-out-2');
    await satchel(['export', ...originals.map((f) => f.id), out2], env('d'));
    for (const f of originals)
      expect(readFileSync(join(out2, `${f.id}.json`), 'utf8')).toBe(
        readFileSync(join(out, `${f.id}.json`), 'utf8'),
      );
  });

  it('round trip of a session with content parts and metadata: unchanged when it comes back (review)', async () => {
    const parts = [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
    ];
    const made = await client('g').create({
      task: 'parts',
      messages: [
        { role: 'user', content: parts },
        { role: 'assistant', content: 'A cat.' },
      ],
      metadata: { team: 'infra' },
    });
    const id = made.session.id;
    const out = join(work, 'parts-out');
    expect((await satchel(['export', id, out], env('g'))).code).toBe(0);
    const file = JSON.parse(readFileSync(join(out, `${id}.json`), 'utf8'));
    expect(file.metadata).toEqual({ team: 'infra' });
    // Back into the same namespace: the same content, with or without --overwrite; no new revision.
    for (const args of [[], ['--overwrite']]) {
      const back = await satchel(['import', out, '--json', ...args], env('g'));
      expect(JSON.parse(back.stdout)).toMatchObject({ unchanged: 1, replaced: 0, failed: 0 });
    }
    expect((await client('g').get(id)).session.revision).toBe(1);
    // Into another namespace: the parts and the metadata arrive.
    const fresh = await satchel(['import', out, '--json'], env('h'));
    expect(JSON.parse(fresh.stdout)).toMatchObject({ created: 1, failed: 0 });
    const copy = (await client('h').get(id)).session;
    expect(copy.messages[0]!.content).toEqual(parts);
    expect(copy.metadata).toEqual({ team: 'infra' });
    // Different metadata in the file is a difference.
    writeFileSync(join(out, `${id}.json`), JSON.stringify({ ...file, metadata: { team: 'web' } }));
    const differs = await satchel(['import', out], env('h'));
    expect(differs.stdout).toContain('exists with different content (metadata.team)');
  });

  it('export reports a missing session and refuses bad command lines', async () => {
    const out = join(work, 'partial');
    const r = await satchel(['export', 'tool-heavy', 'no-such-id', out], env('d'));
    expect(r.code).toBe(4);
    expect(r.stdout).toBe(
      `failed     no-such-id: 404 Not Found: session no-such-id does not exist\nExported 1 session to ${out} (1 failed)\n`,
    );
    expect(readdirSync(out)).toEqual(['tool-heavy.json']);
    for (const args of [
      ['export'],
      ['export', out],
      ['export', '--all', 'x', out],
      ['export', '--all', out, '--concurrency', '0'],
    ]) {
      expect((await satchel(args, env('d'))).code).toBe(2);
    }
  });

  it('refuses paths that do not exist and folders without sessions', async () => {
    const missing = await satchel(['import', join(work, 'nowhere')], env('a'));
    expect(missing).toEqual({
      code: 5,
      stdout: '',
      stderr: `satchel: no such file or folder: ${join(work, 'nowhere')}\n`,
    });
    const empty = odekFolder('empty', [], { 'index.json': '{}' });
    expect((await satchel(['import', empty], env('a'))).code).toBe(2);
    expect((await satchel(['import'], env('a'))).code).toBe(2);
    // An export into a path that is a file says so (first-hour review: "mkdir …: EEXIST").
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    expect(await satchel(['export', '--all', file], env('a'))).toEqual({
      code: 5,
      stdout: '',
      stderr: `satchel: ${file} is a file, not a folder: name a folder to export into\n`,
    });
    // A folder under that file names the file, not the folder asked for.
    expect(await satchel(['export', '--all', join(file, 'sub', 'deeper')], env('a'))).toEqual({
      code: 5,
      stdout: '',
      stderr:
        `satchel: ${file} is a file, so ${join(file, 'sub', 'deeper')} cannot be made: ` +
        'name a folder to export into\n',
    });
    // Where mkdir answers ENOENT under a folder that exists, the export ends (Node 20's recursive
    // mkdir retried for ever under /proc) and says which folder it could not make.
    if (existsSync('/proc/self')) {
      expect(await satchel(['export', '--all', '/proc/satchel-export/x'], env('a'))).toEqual({
        code: 5,
        stdout: '',
        stderr: 'satchel: mkdir /proc/satchel-export: ENOENT\n',
      });
    }
  });

  it('shows a progress bar on a terminal, count lines otherwise', async () => {
    const many = Array.from({ length: 12 }, (_, i) => oldFormat(`progress-${i}`));
    const dir = odekFolder('progress', many);
    const plain = await satchel(['import', dir], env('b'));
    const lines = plain.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^import: 2\/12 \(2 created\)$/);
    expect(lines).toHaveLength(6);
    expect(lines.at(-1)).toBe('import: 12/12 (12 created)');
    const tty = await satchel(['import', dir], env('b'), { tty: true });
    expect(tty.stderr).toMatch(/^\r\[#+-*\] \d+\/12 import/);
    expect(
      tty.stderr.endsWith(
        '\r[########################] 12/12 import · 0 created, 12 unchanged\x1b[K\n',
      ),
    ).toBe(true);
  });
});
