/**
 * Before 2026-12-05 (found by review): text for people shows stored control characters as escapes
 * (lib/cli/render.ts `inert`), but two outputs printed untrusted text raw: `continue` the model's reply
 * (stored session text, steerable by the webhook payloads and tool output the model read), and `import`
 * its report's file names, field names and reasons, which come from the files. Now both go through
 * `inert`; `--json` keeps the text as it is.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

let server: RunningServer;
let chat: ChatServer;
let work: string;
beforeAll(async () => {
  chat = await startChatServer();
  server = await startSatchelServer({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
  });
  work = mkdtempSync(join(tmpdir(), 'cli-escapes-more-'));
});
afterAll(async () => {
  await server.close();
  await chat.close();
  rmSync(work, { recursive: true, force: true });
});

// ESC, BEL and the C1 CSI/OSC introducers: what makes a terminal act instead of print.
const CONTROL = /[\x07\x1b\x9b\x9d]/;
const REPLY = 'Looks fine.\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J';

it('continue prints the reply inert, and --json as it is', async () => {
  await new SatchelClient({ url: server.url }).create({ id: 'esc-reply', task: 'triage' });
  chat.script({ reply: REPLY });
  const env = { SATCHEL_URL: server.url };
  const r = await satchel(['continue', '--id', 'esc-reply', 'summarise the issue'], env);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe('Looks fine.\\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b[2J\n');
  chat.script({ reply: REPLY });
  const json = await satchel(['continue', '--id', 'esc-reply', 'again', '--json'], env);
  expect(JSON.parse(json.stdout).reply).toBe(REPLY);
});

it("import's report prints file names, field names and reasons inert", async () => {
  const dir = join(work, 'sessions\x1b[2J');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'odd-field.json'),
    JSON.stringify({ id: 'odd-field', task: 'a task', messages: [], '\x1b]0;pwned\x07': 1 }),
  );
  writeFileSync(join(dir, 'bad\x1b[1A.json'), '{');
  const r = await satchel(['import', dir], { SATCHEL_URL: server.url });
  expect(r.code).toBe(4);
  expect(r.stdout).not.toMatch(CONTROL);
  expect(r.stdout).toContain(
    "created    odd-field (imported without field \\u001b]0;pwned\\u0007: not in Satchel's stored format)",
  );
  expect(r.stdout).toContain('sessions\\u001b[2J/bad\\u001b[1A.json: not JSON');
  const json = await satchel(['import', dir, '--json'], { SATCHEL_URL: server.url });
  expect(json.stdout).toContain('\\u001b]0;pwned\\u0007');
  expect(JSON.parse(json.stdout).results[0].source).toBe(join(dir, 'bad\x1b[1A.json'));
});
