// Review s56d, finding 1: a Node server's stop (functions/node.ts) closed the connections of the model
// turns still running and left their continue leases live in storage for the turn timeout + 30 s, so a
// webhook's redelivery (which the stop's own log line asks for) and the CLI's printed retry waited and
// answered 409 after a restart, while no turn ran anywhere. The stop now calls `continuer.stopTurns()`
// before its grace period ends: each turn is cut off, releases its lease and fails as a model turn does
// (502 for a continue, a logged failure for a delivery), saying why. (The whole stop, with SIGTERM, is in
// test/functions/review-s56d-stop-turn-lease.test.ts.)
import { afterEach, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const SECRET = 'stop-turns-hook-secret';
const servers: ChatServer[] = [];

/** A hook on session ops-log with the chat server as its model. */
const hookEnv = (chat: ChatServer) => ({
  SATCHEL_HOOKS: JSON.stringify({
    ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' },
  }),
  SATCHEL_MODEL_URL: chat.url,
  SATCHEL_MODEL: 'test-model',
  SATCHEL_CONTINUE_WAIT_MS: '200',
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it("a webhook delivery's turn cut off by stopTurns releases the lease; its redelivery runs the turn", async () => {
  const chat = await startChatServer({ hang: true });
  servers.push(chat);
  const app = await makeApp({
    env: hookEnv(chat),
  });
  const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
  const deliver = () => app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, 'd-stop'));
  expect((await deliver()).status).toBe(202);
  await expect.poll(() => chat.requests.length).toBe(1);
  expect(await app.objects.get(keys.lease('alice', 'ops-log'))).not.toBeNull();

  app.continuer.stopTurns();
  await app.background.drain();
  // Before: nothing ended the turn; the lease stayed for 150 s.
  expect(await app.objects.get(keys.lease('alice', 'ops-log'))).toBeNull();
  expect(app.logs.find('model turn cut off: the server is stopping', 'warn')).toHaveLength(1);
  expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([
    expect.objectContaining({
      hook: 'ops',
      error: expect.stringContaining(
        'the server is stopping and cut the model turn off; your message was stored (revision 2) ' +
          'and no reply was stored',
      ),
    }),
  ]);

  // The redelivery (here, in the same process: a server started again shares only the bucket).
  chat.script({ reply: 'looking into it' });
  const later = await makeApp({
    objects: app.objects,
    env: hookEnv(chat),
  });
  expect(
    (await later.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, 'd-stop'))).status,
  ).toBe(202);
  await later.background.drain();
  expect(later.logs.find('webhook delivery failed', 'warn')).toEqual([]);
  const stored = (await later.call('GET', '/v1/sessions/ops-log')).json.messages as {
    role: string;
    content: string;
  }[];
  expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
  expect(stored[1]!.content).toBe('looking into it');
});

it('a continue cut off by stopTurns answers 502: its message stored, no reply; the lease is released', async () => {
  const chat = await startChatServer({ hang: true });
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
      SATCHEL_CONTINUE_WAIT_MS: '200',
    },
  });
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 't' } })).json.id as string;
  const asked = app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: 'q' },
    headers: { 'idempotency-key': 'k-1' },
  });
  await expect.poll(() => chat.requests.length).toBe(1);
  app.continuer.stopTurns();
  const cut = await asked;
  expect([cut.status, cut.json.detail]).toEqual([
    502,
    'the server is stopping and cut the model turn off; your message was stored (revision 2) and no ' +
      'reply was stored. Retry with the same Idempotency-Key to run the turn without storing the message again.',
  ]);
  expect(await app.objects.get(keys.lease('alice', id))).toBeNull();
  // A turn that would start after the stop is cut off at once, before the model answers.
  chat.script({ reply: 'never sent back' });
  const after = await app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: 'q' },
    headers: { 'idempotency-key': 'k-1' },
  });
  expect(after.status).toBe(502);
  expect(await app.objects.get(keys.lease('alice', id))).toBeNull();
});
