import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59m (check, expected to pass): Lambda, a redelivery while the first attempt's turn runs gets the
// lease-busy 409 with Retry-After; sent again after the first attempt's turn FAILED, it runs one turn.
const SECRET = 'ops-hook-secret-s59m-0123456789';
const PAYLOAD = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("Lambda: lease-busy redelivery, the first attempt's turn failing (review s59m)", () => {
  it('409 + Retry-After, then exactly one turn', async () => {
    const chat = await startChatServer(
      async () => {
        await new Promise((r) => setTimeout(r, 1500));
        return { status: 500, body: { error: 'boom' } };
      },
      { reply: 'second' },
      { reply: 'third' },
    );
    servers.push(chat);
    const app = await makeApp({
      shortLived: true,
      answersAfterBackground: true,
      env: {
        SATCHEL_HOOKS: JSON.stringify({
          ci: { secret: SECRET, namespace: 'alice', session: 'ops-log' },
        }),
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_CONTINUE_WAIT_MS: '0',
      },
    });
    expect(
      (await app.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } })).status,
    ).toBe(201);
    const send = () => app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, PAYLOAD, 'd-1'));
    const first = send();
    await new Promise((r) => setTimeout(r, 500));
    const second = await send();
    const firstRes = await first;
    await settleAll(app);
    expect({ s: second.status, ra: second.headers.get('retry-after') !== null }).toEqual({
      s: 409,
      ra: true,
    });
    expect(firstRes.status).toBe(502);
    const third = await send();
    await settleAll(app);
    expect(third.status).toBe(202);
    const roles = (await app.call('GET', '/v1/sessions/ops-log')).json.messages.map(
      (m: { role: string }) => m.role,
    );
    expect(roles).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(2);
    const fourth = await send();
    expect(fourth.status).toBe(202);
    expect(chat.requests).toHaveLength(2);
  }, 60_000);
});
