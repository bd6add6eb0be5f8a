import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { main } from '../../lib/cli/main.js';
import { makeApp, TOKENS } from '../http/helpers.js';

// Re-importing a file changes nothing, also where the size cap removed groups as it came in (Satchel's
// marker in their place); a file that differs from what is stored still fails (review).

/** An app with `env`, and the CLI talking to it in process. */
async function harness(env: Record<string, string> = {}) {
  const app = await makeApp({ env });
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  const cli = async (args: string[]) => {
    let stdout = '';
    const code = await main(args, {
      stdout: { write: (s: string) => void (stdout += s), isTTY: false, columns: 120 },
      stderr: { write: () => undefined, isTTY: false },
      env: { SATCHEL_URL: 'http://satchel.test', SATCHEL_TOKEN: TOKENS.laptop },
      fetch: fetcher,
    });
    return { code, stdout };
  };
  return { app, cli };
}

const odekFile = (id: string, extra: Record<string, unknown>) => ({
  id,
  created_at: '2025-01-10T08:00:00Z',
  updated_at: '2025-01-10T09:30:00Z',
  model: 'gpt-4o',
  provider: 'openai',
  task: `task ${id}`,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

it('re-importing a session the size cap trimmed is unchanged; one that differs still fails', async () => {
  const { app, cli } = await harness({ SATCHEL_MAX_SESSION_BYTES: '8192' });
  const messages = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'first' },
    ...Array.from({ length: 40 }, (_, i) => ({
      role: 'user',
      content: `m${i} ${'y'.repeat(300)}`,
    })),
  ];
  const file = odekFile('capped', { messages });
  const dir = mkdtempSync(join(tmpdir(), 'satchel-capped-'));
  writeFileSync(join(dir, 'capped.json'), JSON.stringify(file));
  const first = await cli(['import', dir]);
  expect(first.code).toBe(0);
  const stored = (await app.call('GET', '/v1/sessions/capped')).json;
  expect(stored.messages.length).toBeLessThan(messages.length);
  expect(stored.messages[2].content).toMatch(/^\[satchel\] \d+ message groups were removed/);
  const again = await cli(['import', dir]);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/0 created, 1 unchanged, 0 replaced, 0 failed/);
  // A newest message that is not the stored one is a difference still.
  messages[messages.length - 1] = { role: 'user', content: 'something else' };
  writeFileSync(join(dir, 'capped.json'), JSON.stringify(file));
  const changed = await cli(['import', dir]);
  expect(changed.code).toBe(4);
  expect(changed.stdout).toMatch(/exists with different content \(messages\[\d+\]\.content\)/);
});

/** A file in a folder of its own, for `satchel import`. */
function folderWith(id: string, file: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-reimport-'));
  writeFileSync(join(dir, `${id}.json`), JSON.stringify(file));
  return dir;
}

it('a session the cap cut by one message (as many messages as the file) re-imports as unchanged', async () => {
  const { app, cli } = await harness({ SATCHEL_MAX_SESSION_BYTES: '8192' });
  const messages = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'first' },
    { role: 'user', content: 'big ' + 'y'.repeat(8000) },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'u2' },
  ];
  const dir = folderWith('one', odekFile('one', { messages }));
  expect((await cli(['import', dir])).code).toBe(0);
  const stored = (await app.call('GET', '/v1/sessions/one')).json;
  expect(stored.messages).toHaveLength(messages.length); // head, marker, a1, u2
  expect(stored.messages[2].content).toMatch(/^\[satchel\] 1 message group was removed/);
  const again = await cli(['import', dir]);
  expect(again.stdout).toMatch(/0 created, 1 unchanged, 0 replaced, 0 failed/);
});

it('a file whose middle is not what the marker counts is a difference, not unchanged', async () => {
  const { app, cli } = await harness({ SATCHEL_MAX_SESSION_BYTES: '8192' });
  const head = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'first' },
  ];
  const tail = [
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'u2' },
  ];
  const big = (n: number) => ({ role: 'user', content: `big${n} ` + 'y'.repeat(7900) });
  expect(
    (
      await cli([
        'import',
        folderWith('mid', odekFile('mid', { messages: [...head, big(1), big(2), ...tail] })),
      ])
    ).code,
  ).toBe(0);
  const stored = (await app.call('GET', '/v1/sessions/mid')).json;
  expect(stored.messages[2].content).toMatch(/^\[satchel\] 2 message groups were removed/);
  // Five small messages in the middle would all be stored: not what the marker stands for.
  const small = Array.from({ length: 5 }, (_, i) => ({ role: 'user', content: `other ${i}` }));
  const other = await cli([
    'import',
    folderWith('mid', odekFile('mid', { messages: [...head, ...small, ...tail] })),
  ]);
  expect(other.code).toBe(4);
  expect(other.stdout).toMatch(/exists with different content/);
});
