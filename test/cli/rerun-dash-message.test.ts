/**
 * Fixed on 2026-12-04 (found by review): the "run it again" commands that continue (after a 502 model failure / 409) and session append
 * (after a lost answer) print are built in lib/cli/commands/continue.ts (`again`) and
 * lib/cli/commands/session.ts (append's `again`) with the message as a plain positional after the options.
 * A message that starts with `-` (given on the first run after `--`, e.g. "-v flag is broken",
 * "--force push broke main", "- fix the list") is quoted by shellQuote but still starts with `-`, so the
 * printed command, pasted as the docs tell the user to, is rejected by parseArgs: "Unknown option '-v'".
 *
 * Consequence: the documented recovery path fails (exit 2) exactly when the message was already stored;
 * the user has to work out `--` themselves, or reruns without the key and stores the message twice.
 *
 * Fix: in both `again` arrays put every option first, then `--`, then the message (continue.ts
 * continueCommand.run; session.ts append.run, with refArgs and --role before the `--`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { SatchelClient } from '../../lib/client/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { startFlakyProxy } from '../client/flaky-proxy.js';
import { satchel } from './run.js';

let server: RunningServer;
let chat: ChatServer;
beforeAll(async () => {
  chat = await startChatServer();
  server = await startSatchelServer({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
});
afterAll(async () => {
  await server.close();
  await chat.close();
});

/** The words a POSIX shell makes of a printed command line. */
function shellWords(command: string): string[] {
  return execFileSync('bash', ['-c', `set -- ${command}; printf '%s\\0' "$@"`])
    .toString()
    .split('\0')
    .slice(0, -1);
}

describe('a printed rerun command for a message that starts with a dash', () => {
  it('continue after a failed model turn: the printed command runs the turn', async () => {
    const c = new SatchelClient({ url: server.url });
    const { session } = await c.create({ task: 'dash message' });
    chat.script({ status: 500, body: { error: { message: 'overloaded' } } });
    const env = { SATCHEL_URL: server.url };
    const first = await satchel(['continue', '--id', session.id, '--', '-v flag is broken'], env);
    expect(first.code).toBe(1);
    const printed = first.stderr.trimEnd().split('\n').at(-1)!.trim();
    const argv = shellWords(printed);
    expect(argv[0]).toBe('satchel');
    chat.script({ reply: 'Fixed.' });
    const again = await satchel(argv.slice(1), env);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('Fixed.\n');
    const stored = (await c.get(session.id)).session.messages.map((m) => m.content);
    expect(stored).toEqual(['-v flag is broken', 'Fixed.']);
  });

  it('session append after a lost answer: the printed command is a no-op rerun', async () => {
    const c = new SatchelClient({ url: server.url });
    const { session } = await c.create({ task: 'dash append' });
    const p = await startFlakyProxy(server.url, () => 'forward-then-drop');
    try {
      const first = await satchel(['session', 'append', session.id, '--', '- item one'], {
        SATCHEL_URL: p.url,
      });
      expect(first.code).toBe(3);
      const argv = shellWords(first.stderr.trimEnd().split('\n').at(-1)!.trim());
      const again = await satchel(argv.slice(1), { SATCHEL_URL: server.url });
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect((await c.get(session.id)).session.messages.map((m) => m.content)).toEqual([
        '- item one',
      ]);
    } finally {
      await p.close();
    }
  });
});
