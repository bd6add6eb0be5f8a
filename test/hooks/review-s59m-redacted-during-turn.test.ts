import { describe, expect, it } from 'vitest';
import { settleAll } from '../http/helpers.js';
import { hookApp } from '../support/hook-turn.js';

// Review s59m (fixed 2026-12-06: appendTurn tests every slot; a "removed" 409 after the message was stored runs
// the turn again as a redelivery does). A write whose `Satchel-Secrets` redacts text already stored
// (docs/api.md: "a PUT or a pop
// does" read the stored messages for them) changes the delivery's stored message while the model runs; it
// does not remove it. appendTurn compares the question by content and throws its "removed ... (a pop,
// trim or replace)" 409, which noTurnOwed (c5844c2) takes for "no turn owed": the delivery is done, 202,
// marker `done`, and its turn never runs. Yet the session holds the message, unanswered, and the
// receiver's own test of that (continue.ts heldMessage, by the wrapper's opening tag) says a turn is owed:
// before c5844c2 the failure kept the marker `stored` and a redelivery ran the turn.
const PAYLOAD = JSON.stringify({
  type: 'deploy.failed',
  service: 'quokkaservice',
  build: 'b-77812',
});

describe('a delivery whose stored message a Satchel-Secrets pop redacts while its turn runs (review s59m)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: the message is held, so the delivery is not done without its turn`, async () => {
      const writes: number[] = [];
      const { app, createOpsLog, send, markers } = await hookApp({
        lambda,
        payload: PAYLOAD,
        during: async (app) => {
          // Another device appends a note and pops it again, declaring a value as secret.
          writes.push(
            (
              await app.call('POST', '/v1/sessions/ops-log/messages', {
                body: { messages: [{ role: 'user', content: 'scratch note' }] },
              })
            ).status,
          );
          writes.push(
            (
              await app.call('POST', '/v1/sessions/ops-log/pop', {
                body: { count: 1 },
                headers: { 'satchel-secrets': btoa(JSON.stringify(['b-77812'])) },
              })
            ).status,
          );
        },
      });
      expect((await createOpsLog()).status).toBe(201);
      const res = await send();
      await settleAll(app);
      expect(writes).toEqual([200, 200]);
      const messages = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
        role: string;
        content: string;
      }[];
      // The delivery's message is held (redacted), unanswered.
      expect(messages.map((m) => m.role)[0]).toBe('user');
      expect(messages[0]!.content).toContain('quokkaservice');
      expect(messages[0]!.content).not.toContain('b-77812'); // the pop redacted it
      const replied = messages.some((m) => m.role === 'assistant');
      const state = { status: res.status, markers: await markers(), replied };
      if (!replied) expect(state.markers).not.toEqual(['done']);
      // A redelivery then runs the owed turn.
      await send();
      await settleAll(app);
      const after = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
        role: string;
      }[];
      expect(after.map((m) => m.role)).toEqual(['user', 'assistant']);
    }, 60_000);
});
