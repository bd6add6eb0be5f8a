import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { text, utf8 } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// Review s52a: a webhook's Idempotency-Key (`webhook:<name>:<delivery>` until 2026-12-06) was one any
// client could send, and its marker held no digest of the payload: a signed, acknowledged payload could
// be left unstored with nothing telling the sender or the operator.

const SECRET = 'ops-hook-secret-0123456789';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(
  session = 'ops-log',
  options: { env?: Record<string, string>; answersAfterBackground?: boolean } = {},
) {
  const hooks = { ops: { secret: SECRET, namespace: 'alice', session } };
  const app = await makeApp({
    env: { SATCHEL_HOOKS: JSON.stringify(hooks), ...options.env },
    ...(options.answersAfterBackground ? { answersAfterBackground: true } : {}),
  });
  const deliver = (body: string, delivery: string) =>
    app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, delivery));
  const contents = async (id = 'ops-log') =>
    ((await app.call('GET', `/v1/sessions/${id}`)).json.messages as { content: string }[]).map(
      (m) => m.content,
    );
  const markerKey = async (delivery: string) =>
    keys.hookDelivery('alice', 'ops', await sha256Hex(delivery));
  return { app, deliver, contents, markerKey };
}

const deployFailed = JSON.stringify({ type: 'deploy.failed', service: 'payments-api' });

describe('webhook idempotency keys no client can send (review s52a, finding 1)', () => {
  it('a client append keyed like a delivery does not make a later signed delivery vanish', async () => {
    const { app, deliver, contents } = await setup();
    expect(
      (await app.call('POST', '/v1/sessions', { body: { id: 'ops-log', task: 'ops' } })).status,
    ).toBe(201);
    // A client key that reads like the old form of the delivery's key (any visible-ASCII key is valid).
    const client = await app.call('POST', '/v1/sessions/ops-log/messages', {
      body: { messages: [{ role: 'user', content: 'my own note' }] },
      headers: { 'idempotency-key': 'webhook:ops:deploy-42' },
    });
    expect(client.status).toBe(200);
    expect((await deliver(deployFailed, 'deploy-42')).status).toBe(202);
    await app.background.drain();
    const stored = await contents();
    expect(stored[0]).toBe('my own note');
    expect(stored.filter((c) => c.includes('payments-api'))).toHaveLength(1);
    expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([]);
    // A redelivery still stores nothing twice.
    expect((await deliver(deployFailed, 'deploy-42')).status).toBe(202);
    await app.background.drain();
    expect((await contents()).filter((c) => c.includes('payments-api'))).toHaveLength(1);
  });

  it("a client continue keyed like a delivery does not take the delivery's model turn", async () => {
    const chat = await startChatServer({ reply: 'the client asked' }, { reply: 'looking at it' });
    servers.push(chat);
    const { app, deliver, contents } = await setup('ops-log', {
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
    });
    expect(
      (await app.call('POST', '/v1/sessions', { body: { id: 'ops-log', task: 'ops' } })).status,
    ).toBe(201);
    // Its message is keyed `webhook:ops:deploy-43`, its turn `webhook:ops:deploy-43 turn`: the old keys.
    const client = await app.call('POST', '/v1/sessions/ops-log/continue', {
      body: { message: 'what broke?' },
      headers: { 'idempotency-key': 'webhook:ops:deploy-43' },
    });
    expect(client.status).toBe(200);
    expect((await deliver(deployFailed, 'deploy-43')).status).toBe(202);
    await app.background.drain();
    expect(chat.requests).toHaveLength(2);
    const stored = await contents();
    expect(stored).toHaveLength(4);
    expect(stored[2]).toContain('payments-api');
    expect(stored[3]).toBe('looking at it');
  });

  it('a delivery an earlier Satchel claimed keeps its old key, under which it may be stored', async () => {
    const { app, deliver, contents, markerKey } = await setup();
    // The earlier Satchel stored the message under `webhook:ops:deploy-44` and stopped before `done`.
    expect((await deliver(deployFailed, 'deploy-44')).status).toBe(202);
    await app.background.drain();
    const marker = JSON.parse(text((await app.objects.get(await markerKey('deploy-44')))!.body));
    expect(marker.digest).toMatch(/^[0-9a-f]{64}$/);
    const legacy = await app.call('POST', '/v1/sessions/ops-log/messages', {
      body: { messages: [{ role: 'user', content: 'stored by the earlier Satchel' }] },
      headers: { 'idempotency-key': 'webhook:ops:deploy-45' },
    });
    expect(legacy.status).toBe(200);
    const old = { session: 'ops-log', state: 'claimed', at: new Date().toISOString() };
    await app.objects.put(await markerKey('deploy-45'), utf8(JSON.stringify(old)));
    expect((await deliver(deployFailed, 'deploy-45')).status).toBe(202);
    await app.background.drain();
    // Taken as stored (its key is recorded), not stored a second time under the new key.
    expect(await contents()).toHaveLength(2);
    const after = JSON.parse(text((await app.objects.get(await markerKey('deploy-45')))!.body));
    expect(after).toMatchObject({ session: 'ops-log', state: 'done' });
    expect(after.digest).toBeUndefined();
  });
});

describe('a delivery id reused for another payload (review s52a, finding 2)', () => {
  it('is not stored, and is logged as refused, naming the hook and the id, never the payload', async () => {
    const { app, deliver, contents } = await setup();
    expect((await deliver(deployFailed, 'evt-1')).status).toBe(202);
    await app.background.drain();
    // A sender whose ids repeat (a counter reset, a second sender on the same hook).
    const other = JSON.stringify({ type: 'db.down', service: 'billing-db' });
    // A fixed session on Node: the 202 comes before the work, which then finds the marker.
    expect((await deliver(other, 'evt-1')).status).toBe(202);
    await app.background.drain();
    expect((await contents()).some((c) => c.includes('billing-db'))).toBe(false);
    const refused = app.logs.find('webhook delivery refused', 'warn');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ hook: 'ops', delivery: 'evt-1' });
    expect(JSON.stringify(app.logs.records)).not.toContain('billing-db');
    // A redelivery of the first payload is still a plain no-op.
    expect((await deliver(deployFailed, 'evt-1')).status).toBe(202);
    await app.background.drain();
    expect(await contents()).toHaveLength(1);
    expect(app.logs.find('webhook delivery refused', 'warn')).toHaveLength(1);
  });

  it('answers 422 where the answer waits for the marker: a `new` hook', async () => {
    const { app, deliver } = await setup('new');
    const first = await deliver(deployFailed, 'evt-2');
    expect(first.status).toBe(202);
    await app.background.drain();
    const again = await deliver(deployFailed, 'evt-2');
    expect(again.status).toBe(202);
    expect(again.json.session).toBe(first.json.session);
    const other = await deliver(JSON.stringify({ type: 'db.down' }), 'evt-2');
    await app.background.drain();
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(other.json.detail).toMatch(/another payload.*new delivery id/);
    const listed = await app.call('GET', '/v1/sessions');
    expect(listed.json.sessions ?? listed.json.items).toHaveLength(1);
  });

  it('answers 422 where the answer waits for the work (Lambda)', async () => {
    const { deliver, contents } = await setup('ops-log', { answersAfterBackground: true });
    expect((await deliver(deployFailed, 'evt-3')).status).toBe(202);
    const other = await deliver(
      JSON.stringify({ type: 'db.down', service: 'billing-db' }),
      'evt-3',
    );
    expect(other.status).toBe(422);
    expect((await contents()).some((c) => c.includes('billing-db'))).toBe(false);
  });
});
