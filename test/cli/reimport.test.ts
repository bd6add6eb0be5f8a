import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { main } from '../../lib/cli/main.js';
import { makeApp, TOKENS } from '../http/helpers.js';

// Re-importing a file changes nothing, also where the store changed what came in: the size cap removed
// groups (Satchel's marker in their place), or redaction made two external refs one (review).

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

it('re-importing a file whose ref uris redaction made one is unchanged', async () => {
  const { app, cli } = await harness();
  const ref = (token: string) => ({
    kind: 'doc',
    uri: `https://ci.example.com/run?token=ghp_${token}`,
    created_by: 'odek',
    read_only: false,
    created_at: '2025-01-10T08:00:00Z',
  });
  const file = odekFile('refs-collapse', {
    external_refs: [
      ref('aaaaBBBBccccDDDDeeeeFFFFgggg11112222'),
      ref('zzzzYYYYxxxxWWWWvvvvUUUUtttt99998888'),
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'satchel-refs-'));
  writeFileSync(join(dir, 'refs-collapse.json'), JSON.stringify(file));
  expect((await cli(['import', dir])).code).toBe(0);
  const stored = (await app.call('GET', '/v1/sessions/refs-collapse')).json;
  expect(stored.external_refs).toHaveLength(1);
  expect(stored.external_refs[0].uri).toContain('[REDACTED]');
  const again = await cli(['import', dir]);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/0 created, 1 unchanged, 0 replaced, 0 failed/);
});
