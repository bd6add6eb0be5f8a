import { describe, expect, it } from 'vitest';
import { settleAll } from '../http/helpers.js';
import { hookApp } from '../support/hook-turn.js';

// Review s59k, finding 3 (fixed 2026-12-06 in lib/hooks/hooks.ts: noTurnOwed, the lease-busy detail). On Lambda
// a sender that redelivers while the first attempt's model turn still
// runs (GitHub gives up after 10 s; a model turn may take longer, and the first invocation goes on) gets,
// since 5dc6427, a 409 whose detail says "... no reply was stored: send the same delivery again (the same
// delivery id) to run its model turn". The running turn is this delivery's own: its reply is stored a
// moment later, and the redelivery the detail asks for is a no-op. Before 5dc6427 the answer was 202
// (the message is stored). "Every answer must be true ... never 409/500/503 for a write that landed".
describe('Lambda: a redelivery while the first attempt runs its model turn (review s59k)', () => {
  it('is not answered 409 "no reply was stored ... send again to run its turn"', async () => {
    const { app, createOpsLog, chat, send } = await hookApp({
      lambda: true,
      steps: [{ reply: 'looked at it', delayMs: 1500 }, { reply: 'second' }],
      // A model turn longer than the lease wait (5 s by default); 0 here to keep the test short.
      env: { SATCHEL_CONTINUE_WAIT_MS: '0' },
    });
    expect((await createOpsLog()).status).toBe(201);
    const first = send();
    await new Promise((r) => setTimeout(r, 500)); // the first attempt's turn is running
    const second = await send();
    expect((await first).status).toBe(202);
    await settleAll(app);
    const messages = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
      role: string;
    }[];
    // The delivery is whole: its message once, its turn once (by the first attempt).
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
    // The second answer said the turn is owed and no reply stored, while its own turn was running: a
    // true answer is the 202 (as before 5dc6427), or one that says the running turn may be its own.
    if (second.status !== 202)
      expect(second.json?.detail).not.toMatch(/no reply was stored: send the same delivery again/);
    // What the 409 asked for does nothing: the delivery was done.
    const again = await send();
    expect(again.status).toBe(202);
    expect(chat.requests).toHaveLength(1);
  }, 60_000);
});
