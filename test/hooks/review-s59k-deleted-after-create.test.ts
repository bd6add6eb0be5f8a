import { describe, expect, it } from 'vitest';
import { settleAll } from '../http/helpers.js';
import { hookApp } from '../support/hook-turn.js';

// Review s59k, finding 1 (fixed 2026-12-06 in lib/hooks/hooks.ts: noTurnOwed, the lease-busy detail). Commit
// 1b4a97f made deliverOnce take a 404 after this attempt stored the message
// for a DELETE during the turn: the delivery is done. But only for its first `once()`: a fixed-id hook whose
// session does not exist yet takes the other branch (404, createIfMissing, `await once()`), and that second
// call is not guarded. A DELETE during that turn (the common first delivery to a fixed id) makes the
// 404 escape: on Lambda the webhook answers 404 (the contract: "An unknown hook name is 404"; route:
// "No webhook with this name."), on Node the delivery is logged as failed and its marker left `stored`.
describe('fixed-id hook, first delivery creates the session, DELETE during its turn (review s59k)', () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: the delivery is done, answered and logged as such`, async () => {
      const deleted: number[] = [];
      const { app, chat, send, markers, failures } = await hookApp({
        lambda,
        during: async (app) => {
          deleted.push((await app.call('DELETE', '/v1/sessions/ops-log')).status);
        },
      });
      // No session ops-log yet: the delivery creates it.
      const res = await send();
      await settleAll(app);
      expect(deleted).toEqual([204]);
      expect((await app.call('GET', '/v1/sessions/ops-log')).status).toBe(404);
      expect(chat.requests).toHaveLength(1);
      // As the s59j fix does for a session that existed before: done, 202, nothing logged as failed.
      expect({
        status: res.status,
        detail: res.json?.detail,
        failed: failures().length,
        markers: await markers(),
      }).toEqual({ status: 202, detail: undefined, failed: 0, markers: ['done'] });
    }, 60_000);
});
