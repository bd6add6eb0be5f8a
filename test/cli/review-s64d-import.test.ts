// Review s64d (F1, F2): re-importing odek files.
// F1: tool-call arguments are a string, so arguments nested 20,000 levels deep are stored. A re-import of a
// file whose deep arguments differ from the stored ones (no secret in them) compared them with the
// recursive sameJson (lib/odek/match.ts), which overflowed V8's stack: RangeError, exit 70, and the files
// after it were never imported. That file now fails with the difference, and `--overwrite` replaces it.
// F2: `--overwrite` of a session the size cap trimmed on import sent the file's whole message list; the
// server took the messages the cap had removed for new ones and refused the PUT (413) on every run, so a
// changed model or task could never be stored. It now sends the stored messages when the file's match them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

let server: RunningServer;
let capped: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
  capped = await startSatchelServer({ env: { SATCHEL_MAX_SESSION_BYTES: '5000' } });
});
afterAll(async () => {
  await server.close();
  await capped.close();
});

const envOf = (s: RunningServer) => ({ SATCHEL_URL: s.url, SATCHEL_TOKEN: '' });
const nested = (n: number, inner: string) => '['.repeat(n) + inner + ']'.repeat(n);

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'satchel-s64d-'));
}

async function stored(s: RunningServer, id: string) {
  const res = await fetch(`${s.url}/v1/sessions/${id}`);
  return (await res.json()) as {
    model: string;
    task: string;
    provider: string;
    revision: number;
    messages: {
      role: string;
      content: string;
      tool_calls?: { function: { arguments: string } }[];
    }[];
  };
}

describe('F1: re-importing deep tool-call arguments that differ from the stored ones', () => {
  const deepFile = (id: string, inner: string) =>
    JSON.stringify({
      id,
      task: 't',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'f', arguments: nested(20_000, inner) },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    });
  const other = (id: string) => JSON.stringify({ id, task: 'later file', messages: [] });

  for (const [name, edited] of [
    ['an edited value', '2'],
    ['only spaces added', ' 1 '],
  ] as const)
    it(`${name}: that file fails with the difference, the next is imported; --overwrite replaces it`, async () => {
      const tag = edited.trim() === '2' ? 'v' : 's';
      const [id, later] = [`f1-deep-${tag}`, `f1-z-${tag}`];
      const folder = dir();
      const file = join(folder, `${id}.json`);
      writeFileSync(file, deepFile(id, '1'));
      const first = await satchel(['import', '-j', '1', file], envOf(server));
      expect(first.code).toBe(0);
      writeFileSync(file, deepFile(id, edited));
      writeFileSync(join(folder, `${later}.json`), other(later));
      const again = await satchel(['import', '-j', '1', folder], envOf(server));
      expect(again.stderr).not.toMatch(/RangeError|unexpected error|stopped/);
      expect(again.code).toBe(4);
      expect(again.stdout).toContain(
        `(${id}): exists with different content (messages[1].tool_calls[0].function.arguments)`,
      );
      expect(again.stdout).toContain('1 created, 0 unchanged, 0 replaced, 1 failed');
      expect((await fetch(`${server.url}/v1/sessions/${later}`)).status).toBe(200);
      const over = await satchel(['import', '--overwrite', '-j', '1', folder], envOf(server));
      expect(over.stderr).not.toMatch(/RangeError|unexpected error/);
      expect(over.code).toBe(0);
      expect(over.stdout).toContain(`replaced   ${id}`);
      const args = (await stored(server, id)).messages[1]!.tool_calls![0]!.function.arguments;
      expect(args).toBe(nested(20_000, edited));
      const last = await satchel(['import', '-j', '1', folder, '--json'], envOf(server));
      expect(last.code).toBe(0);
      expect(JSON.parse(last.stdout)).toMatchObject({ unchanged: 2, failed: 0 });
    }, 120_000);
});

describe('F2: --overwrite of a session the size cap trimmed on import', () => {
  /** 62 messages of some 200 bytes each: a cap of 5,000 bytes keeps 21 of them, its marker among them. */
  function cappedFile(id: string) {
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first' },
      ...Array.from({ length: 60 }, (_, i) => ({
        role: i % 2 ? 'user' : 'assistant',
        content: `m${i} ${'x'.repeat(200)}`,
      })),
    ];
    return { id, task: 'cap', model: 'gpt-4o', provider: 'openai', messages };
  }

  async function importedCapped(id: string) {
    const folder = dir();
    const file = cappedFile(id);
    const path = join(folder, `${id}.json`);
    writeFileSync(path, JSON.stringify(file));
    const first = await satchel(['import', path], envOf(capped));
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/size cap: \d+ oldest message groups dropped/);
    return { file, path, before: await stored(capped, id) };
  }

  for (const field of ['model', 'task', 'provider'] as const)
    it(`a changed ${field} is replaced, the stored messages kept; the next run is unchanged`, async () => {
      const id = `f2-${field}`;
      const { file, path, before } = await importedCapped(id);
      writeFileSync(path, JSON.stringify({ ...file, [field]: 'changed' }));
      const plain = await satchel(['import', path], envOf(capped));
      expect(plain.code).toBe(4);
      expect(plain.stdout).toContain(`exists with different content (${field})`);
      const over = await satchel(['import', '--overwrite', path], envOf(capped));
      expect(over.stdout).not.toContain('413');
      expect(over.code).toBe(0);
      expect(over.stdout).toContain(`replaced   ${id} (it differed in ${field})`);
      const after = await stored(capped, id);
      expect(after[field]).toBe('changed');
      // The stored messages went back: the head, the marker and the newest. The write is capped as any is
      // (its bookkeeping grows), so the marker may count a group or two more than before.
      const kept = after.messages.length - 3;
      expect(after.messages.slice(0, 2)).toEqual(before.messages.slice(0, 2));
      expect(after.messages[2]!.content).toMatch(/^\[satchel\] \d+ message groups were removed/);
      expect(kept).toBeGreaterThan(10);
      expect(after.messages.slice(3)).toEqual(before.messages.slice(-kept));
      const again = await satchel(['import', path, '--json'], envOf(capped));
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 1, failed: 0 });
    }, 60_000);

  it('a difference in the messages still sends the file’s: new turns and a changed model are stored', async () => {
    const id = 'f2-append';
    const { file, path } = await importedCapped(id);
    file.messages.push(
      { role: 'assistant', content: 'new reply' },
      { role: 'user', content: 'new ask' },
    );
    writeFileSync(path, JSON.stringify({ ...file, model: 'gpt-5' }));
    const over = await satchel(['import', '--overwrite', path], envOf(capped));
    expect(over.code).toBe(0);
    expect(over.stdout).toContain(`replaced   ${id}`);
    const after = await stored(capped, id);
    expect(after.model).toBe('gpt-5');
    expect(after.messages.slice(-2).map((m) => m.content)).toEqual(['new reply', 'new ask']);
    const again = await satchel(['import', path, '--json'], envOf(capped));
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 1, failed: 0 });
  }, 60_000);
});
