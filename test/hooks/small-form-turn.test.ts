import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// Review s52a: with a model configured, a delivery whose message only fit as the shorter (eighth-budget)
// form, and whose model turn then failed, never gets its turn: the redelivery compares the stored message
// with the full-size form (`awaitsReply` in lib/continue/continue.ts), finds it absent, and marks the
// delivery done.
const SECRET = 'ops-hook-secret-0123456789';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('webhook with a model, payload stored in its shorter form (review s52a)', () => {
  it('a redelivery after a failed turn runs the turn the stored message is owed', async () => {
    const chat = await startChatServer({ status: 503 }, { reply: 'on it' });
    servers.push(chat);
    const app = await makeApp({
      env: {
        SATCHEL_HOOKS: JSON.stringify(HOOKS),
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_MAX_SESSION_BYTES: '4096',
      },
    });
    const body = '\u0001'.repeat(6000); // 6 bytes each in stored JSON: the full summary is refused
    const send = () =>
      app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, 'ctl-1', 'text/plain'));
    expect((await send()).status).toBe(202);
    await app.background.drain();
    const first = (await app.call('GET', '/v1/sessions/ops-log')).json.messages;
    expect(first.map((m: { role: string }) => m.role)).toEqual(['user']); // stored, short form
    expect(first[0].content).toMatch(/truncated/);
    const markerKey = keys.hookDelivery('alice', 'ops', await sha256Hex('ctl-1'));
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('stored');
    expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(1);

    // The sender redelivers, as webhooks.md says to: "a redelivery after a failed turn runs the turn".
    expect((await send()).status).toBe(202);
    await app.background.drain();
    const after = (await app.call('GET', '/v1/sessions/ops-log')).json.messages;
    expect(chat.requests).toHaveLength(2); // the model is asked again …
    expect(after.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']); // … and answers
    expect(after[1].content).toBe('on it');
    // The model was asked about the message as stored (its shorter form), not the full one.
    expect(chat.requests[1]!.body.messages.at(-1)!.content).toBe(first[0].content);
    expect(JSON.parse(text((await app.objects.get(markerKey))!.body)).state).toBe('done');
    expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(1);
  });
});
