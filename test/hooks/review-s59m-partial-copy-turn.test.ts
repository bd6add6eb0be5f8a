import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { hookApp, REPLY } from '../support/hook-turn.js';

// Review s59m (fixed 2026-12-06: appendTurn tests every slot; a "removed" 409 after the message was stored runs
// the turn again as a redelivery does). appendTurn's "was the question removed?" check (lib/sessions/store.ts
// ~519-525) runs
// `cur.messages.some(held)` on what may be a partial copy (an append reads only the delta when the cache
// does not hold the parts: `new Array(held).concat(...)`, lib/sessions/store.ts ~1058). Array#some skips
// holes, so `!m` never answers for an absent message: when the delivery's message lies in the parts (another
// process folded the session into a new base while the model ran), the turn is refused with the
// "removed ... (a pop, trim or replace)" 409. Since c5844c2 noTurnOwed takes that 409 for "no turn owed":
// the delivery is marked done (202, `webhook delivered`), the turn never runs, though the session holds
// the message, unanswered.
const big = (n: number) => ({
  role: 'user',
  content: `note ${n}: ` + 'the quick brown fox jumps over the lazy dog. '.repeat(2300),
});

describe("a large session another process writes to while the delivery's model runs (review s59m)", () => {
  for (const lambda of [true, false])
    it(`${lambda ? 'Lambda' : 'Node'}: the turn is stored, or the delivery is not marked done`, async () => {
      const objects = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s59m-')));
      // Another process (another Node server, Lambda container or Worker) on the same bucket.
      const other = await makeApp({ objects });
      const appends: number[] = [];
      const { app, createOpsLog, chat, send, markers } = await hookApp({
        objects,
        lambda,
        during: async () => {
          for (let i = 0; i < 4; i++)
            appends.push(
              (
                await other.call('POST', '/v1/sessions/ops-log/messages', {
                  body: { messages: [big(100 + i)] },
                })
              ).status,
            );
        },
      });
      expect((await createOpsLog()).status).toBe(201);
      // Over 256 KiB: stored as a delta on a base.
      for (let i = 0; i < 3; i++)
        expect(
          (
            await app.call('POST', '/v1/sessions/ops-log/messages', {
              body: { messages: [big(i)] },
            })
          ).status,
        ).toBe(200);
      const res = await send();
      await settleAll(app);
      await settleAll(other);
      expect(appends).toEqual([200, 200, 200, 200]);
      expect(chat.requests).toHaveLength(1);
      const messages = (await app.call('GET', '/v1/sessions/ops-log')).json.messages as {
        role: string;
        content: string;
      }[];
      const hookAt = messages.findIndex((m) => m.content.includes('quokkaservice'));
      expect(hookAt).toBeGreaterThan(0); // the delivery's message is held, nothing removed it
      const replied = messages.some((m) => m.role === 'assistant' && m.content === REPLY);
      const state = {
        status: res.status,
        delivered: app.logs.find('webhook delivered', 'info').length,
        markers: await markers(),
        replied,
      };
      // Either the turn was stored, or the delivery says it failed (a redelivery runs the turn): never
      // "done" with its message unanswered.
      if (!replied) expect(state).not.toMatchObject({ markers: ['done'] });
      expect(state).toMatchObject({ replied: true });
    }, 120_000);
});
