// Review s56d, finding 1: stopping the Node server during a model turn left the session blocked for the
// turn timeout + 30 s (150 s by default), and the 409 it then answered was untrue.
//
// deploy.md: on SIGTERM or SIGINT the server lets open requests run for up to 10 s, then closes their
// connections. A continue waiting on its model lost its answer that way (cli.md: the CLI then prints the
// same command with its --idempotency-key, "which stores it at most once"), but its lease stayed live in
// storage: after a restart, that exact command waited SATCHEL_CONTINUE_WAIT_MS and failed with 409
// "another continue is running a model turn on session …", which the CLI printed as "once the other turn
// is done (in about 5 s)", while no turn ran anywhere and the lease had up to 150 s left. A webhook's
// redelivery, which the stop's log line asks for, was blocked the same way.
//
// Now the stop cuts off the turns still running 2 s before its 10 s are up: each releases its lease and
// answers 502 saying its message was stored; the printed command runs the turn after a restart. The CLI's
// 409 advice no longer states Retry-After as the time the other turn ends.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { satchel } from '../cli/run.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { listeningUrl, spawnEntry } from '../support/node-entry.js';

const dir = mkdtempSync(join(tmpdir(), 's56d-stop-lease-'));
const chats: ChatServer[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all(chats.splice(0).map((s) => s.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm start` on the folder `dir`, open mode, with the model at `modelUrl`. */
async function startServer(modelUrl: string) {
  const child = spawnEntry({
    SATCHEL_DATA_DIR: dir,
    SATCHEL_MODEL_URL: modelUrl,
    SATCHEL_MODEL: 'test-model',
    SATCHEL_CONTINUE_WAIT_MS: '300',
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => void (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const url = await listeningUrl(child);
  return { child, url, exited, log: () => out };
}

it('a continue cut off by SIGTERM says its message is stored; its printed command runs after a restart', async () => {
  const hanging = await startChatServer({ hang: true });
  chats.push(hanging);
  const first = await startServer(hanging.url);
  const env = { SATCHEL_URL: first.url };
  const created = await satchel(['session', 'create', '--id', 'slow-1', 'slow model'], env);
  expect(created.code).toBe(0);
  const cut = satchel(
    ['continue', '--id', 'slow-1', '--idempotency-key', 'stop-lease-key-1', 'hello slow'],
    env,
  );
  await expect.poll(() => hanging.requests.length, { timeout: 30_000 }).toBe(1);

  // Another device's continue meanwhile: 409, its message stored. Before: "(in about 5 s)", Retry-After's
  // poll hint, said as the time the running turn ends.
  const busy = await satchel(
    ['continue', '--id', 'slow-1', '--idempotency-key', 'other-1', 'me too'],
    env,
  );
  expect(busy.code).not.toBe(0);
  expect(busy.stderr).toContain('another continue is running a model turn on session slow-1');
  expect(busy.stderr).toContain(
    'To run the turn once the other turn is done without storing the message twice:',
  );
  expect(busy.stderr).not.toMatch(/in about \d+ s/);

  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  // Before: the connection was closed without an answer, and the lease stayed live for 150 s.
  const rerun = [
    'continue',
    '--id',
    'slow-1',
    '--idempotency-key',
    'stop-lease-key-1',
    'hello slow',
  ];
  expect(await cut).toEqual({
    code: 1,
    stdout: '',
    stderr:
      'satchel: Bad Gateway: the server is stopping and cut the model turn off; your message was stored ' +
      '(revision 2) and no reply was stored.\n' +
      'To run the turn when the server is back without storing the message twice:\n' +
      `  satchel ${rerun.join(' ').replace('hello slow', "'hello slow'")}\n`,
  });
  expect(first.log()).toContain('model turn cut off: the server is stopping');
  const objects = new LocalStore(dir);
  expect(await objects.get(keys.lease('default', 'slow-1'))).toBeNull();

  // The model is back; the printed command, on the restarted server: the turn runs at once.
  const ok = await startChatServer({ reply: 'the reply' });
  chats.push(ok);
  const second = await startServer(ok.url);
  const again = await satchel(rerun, { SATCHEL_URL: second.url });
  expect(again).toEqual({ code: 0, stdout: 'the reply\n', stderr: '' });
  const shown = await satchel(['session', 'show', 'slow-1', '--json'], { SATCHEL_URL: second.url });
  const { messages } = JSON.parse(shown.stdout) as {
    messages: { role: string; content: string }[];
  };
  // The message once, moved after the other device's to just before its reply (review s60e).
  expect(messages.map((m) => [m.role, m.content])).toEqual([
    ['user', 'me too'],
    ['user', 'hello slow'],
    ['assistant', 'the reply'],
  ]);
  second.child.kill('SIGTERM');
  await second.exited;
}, 120_000);
