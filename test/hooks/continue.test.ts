import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type Step } from '../support/chat-server.js';

// Webhooks when a model is configured: the delivery is a continue (message, then one model turn), still
// exactly once per delivery, and a redelivery after a failed turn runs the missing turn.
const SECRET = 'hook-with-model-secret';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };
const hmac = (data: string) => createHmac('sha256', SECRET).update(data).digest('hex');

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(steps: Step[]) {
  const chat = await startChatServer(...steps);
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_HOOKS: JSON.stringify(HOOKS),
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'test-model',
    },
  });
  const deliver = (body: string, delivery: string) => {
    const t = Math.floor(Date.now() / 1000);
    return app.call('POST', '/v1/hooks/ops', {
      token: null,
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-satchel-signature': `t=${t},v1=${hmac(`${t}.${body}`)}`,
        'x-satchel-delivery': delivery,
      },
    });
  };
  const messages = async () =>
    (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
      role: string;
      content: string;
    }[];
  return { chat, app, deliver, messages };
}

describe('webhooks with a model configured', () => {
  it('a delivery is stored as the untrusted user message, then answered by one model turn', async () => {
    const { chat, app, deliver, messages } = await setup([{ reply: 'looking into the deploy' }]);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    expect((await deliver(body, 'd-1')).status).toBe(202);
    await app.background.drain();
    const stored = await messages();
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[0]!.content).toMatch(/^<untrusted_content_[0-9a-f]{16} source="webhook:ops">/);
    expect(stored[1]!.content).toBe('looking into the deploy');
    expect(chat.requests).toHaveLength(1);
    // A redelivery of a finished delivery neither stores nor calls the model.
    await deliver(body, 'd-1');
    await app.background.drain();
    expect(await messages()).toHaveLength(2);
    expect(chat.requests).toHaveLength(1);
  });

  it("the payload's secrets count once: in the message's audit record, not again in the turn's", async () => {
    const { app, deliver, messages } = await setup([{ reply: 'rotating it' }]);
    const body = JSON.stringify({ type: 'leak', password: 'Hunter2-Ocelot' });
    expect((await deliver(body, 'd-secret')).status).toBe(202);
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user', 'assistant']);
    const audit = (await app.call('GET', '/v1/sessions/ops-log/audit')).json.records;
    expect(audit.map((r: { op: string; redactions: number }) => [r.op, r.redactions])).toEqual([
      ['create', 0],
      ['continue', 1],
      ['continue', 0],
    ]);
  });

  it('a redelivery after a failed model turn runs the missing turn; the message is stored once', async () => {
    const { chat, app, deliver, messages } = await setup([
      { status: 503 },
      { reply: 'second attempt' },
    ]);
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    await deliver(body, 'd-2');
    await app.background.drain();
    expect((await messages()).map((m) => m.role)).toEqual(['user']);
    const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('d-2'));
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('claimed');
    expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([
      expect.objectContaining({ hook: 'ops', error: expect.stringContaining('HTTP 503') }),
    ]);
    await deliver(body, 'd-2');
    await app.background.drain();
    const stored = await messages();
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[1]!.content).toBe('second attempt');
    expect(chat.requests).toHaveLength(2);
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('done');
  });
});
