import { describe, expect, it } from 'vitest';
import { settleAll } from '../http/helpers.js';
import { hookApp } from '../support/hook-turn.js';

// Review s59m (check, expected to pass): Lambda, a redelivery while the first attempt's turn runs gets the
// lease-busy 409 with Retry-After; sent again after the first attempt's turn FAILED, it runs one turn.

describe("Lambda: lease-busy redelivery, the first attempt's turn failing (review s59m)", () => {
  it('409 + Retry-After, then exactly one turn', async () => {
    const { app, createOpsLog, chat, send } = await hookApp({
      lambda: true,
      steps: [
        async () => {
          await new Promise((r) => setTimeout(r, 1500));
          return { status: 500, body: { error: 'boom' } };
        },
        { reply: 'second' },
        { reply: 'third' },
      ],
      env: { SATCHEL_CONTINUE_WAIT_MS: '0' },
    });
    expect((await createOpsLog()).status).toBe(201);
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
