import { describe, expect, it } from 'vitest';
import { settleAll } from '../http/helpers.js';
import { hookApp } from '../support/hook-turn.js';

// Review s59k, finding 2 (fixed 2026-12-06 in lib/hooks/hooks.ts: noTurnOwed, the lease-busy detail). A
// delivery's message is stored, then (while the model runs) a pop removes it:
// appendTurn refuses the reply with a 409 conflict "the message this turn answered was removed ...". No
// turn is owed (docs/design.md webhooks step 1: "trimmed or popped since, owes none"), exactly as for the
// DELETE that 1b4a97f now marks done with a 202. Yet on Lambda the webhook answers 409 (a status its
// OpenAPI does not list, for a delivery whose write landed: "never 409/500/503 for a write that landed"),
// and on Node the delivery is logged `webhook delivery failed` with its marker left `stored`.
describe('a delivery whose message is popped while its model turn runs (review s59k)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: no turn is owed, the delivery is done`, async () => {
      const popped: number[] = [];
      const { app, createOpsLog, chat, send, markers, failures } = await hookApp({
        lambda,
        during: async (app) => {
          popped.push(
            (await app.call('POST', '/v1/sessions/ops-log/pop', { body: { count: 1 } })).status,
          );
        },
      });
      expect((await createOpsLog()).status).toBe(201);
      const res = await send();
      await settleAll(app);
      expect(popped).toEqual([200]);
      expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toEqual([]);
      expect(chat.requests).toHaveLength(1);
      expect({
        status: res.status,
        failed: failures().length,
        markers: await markers(),
      }).toEqual({ status: 202, failed: 0, markers: ['done'] });
    }, 60_000);
});
