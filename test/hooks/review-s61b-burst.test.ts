import { describe, expect, it } from 'vitest';
import { Continuer } from '../../lib/continue/continue.js';
import { Leases } from '../../lib/continue/lease.js';
import { keys } from '../../lib/model/keys.js';
import { settleAll } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { HOOK_SECRET, hookApp } from '../support/hook-turn.js';

// Review s61b, finding 2: webhook deliveries that arrive together on one session, with a model. After the
// 202 no client waits, yet each delivery's turn waited for the session's lease SATCHEL_CONTINUE_WAIT_MS
// (5 s) like a client's continue: every delivery of a burst after the first gave up, its turn owed and
// nothing to retry it (the sender had its 202). And the failure's log line named the marker's key (a
// hash of the delivery id) and advised an Idempotency-Key that no sender has.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const body = (n: number) => JSON.stringify({ type: 'check_run.completed', check: `check-${n}` });
type Msg = { role: string; content: string };

describe('a burst of webhook deliveries on one session (review s61b, finding 2)', () => {
  it('each delivery of a burst gets its own model turn, one after the other', async () => {
    const h = await hookApp({
      env: { SATCHEL_CONTINUE_WAIT_MS: '300' },
      steps: [
        { reply: 'first reply', delayMs: 1200 },
        { reply: 'second reply', delayMs: 300 },
        { reply: 'third reply' },
      ],
    });
    expect((await h.createOpsLog()).status).toBe(201);
    const send = (n: number) =>
      h.app.call('POST', '/v1/hooks/ci', signedDelivery(HOOK_SECRET, body(n), `burst-${n}`));
    const answers = await Promise.all([1, 2, 3].map(send));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    await settleAll(h.app);

    expect(h.failures()).toEqual([]);
    expect(await h.markers()).toEqual(['done', 'done', 'done']);
    // One turn at a time (the lease), each for its own delivery: the model saw it last.
    expect(h.chat.maxConcurrent).toBe(1);
    const asked = h.chat.requests.map(
      (r) => /check-(\d)/.exec(r.body.messages.at(-1)!.content!)![1],
    );
    expect(asked.toSorted()).toEqual(['1', '2', '3']);
    // Each delivery's message is answered by the reply right after it.
    const messages: Msg[] = (await h.app.call('GET', '/v1/sessions/ops-log')).json.messages;
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    const replies = ['first reply', 'second reply', 'third reply'];
    for (const [i, n] of asked.entries()) {
      const at = messages.findIndex((m) => m.content.includes(`check-${n}`));
      expect(messages[at + 1]).toMatchObject({ role: 'assistant', content: replies[i] });
    }
  });

  it('waits for a turn another process runs past SATCHEL_CONTINUE_WAIT_MS, then runs its own', async () => {
    const h = await hookApp({ env: { SATCHEL_CONTINUE_WAIT_MS: '200' } });
    expect((await h.createOpsLog()).status).toBe(201);
    // Another server's turn on the session: its lease, held here for a while.
    const other = new Leases(h.app.objects, { ttlMs: 60_000, waitMs: 0 });
    const held = await other.take(keys.lease('alice', 'ops-log'));
    expect((await h.send('d-1')).status).toBe(202);
    await sleep(1000);
    expect(h.chat.requests).toHaveLength(0);
    await other.release(held);
    await settleAll(h.app);
    expect(h.failures()).toEqual([]);
    expect(h.chat.requests).toHaveLength(1);
    expect(await h.markers()).toEqual(['done']);
  });

  it('a failure after the 202 is logged with the delivery id, and what the sender does, not a key', async () => {
    const h = await hookApp({ steps: [{ status: 500, body: { error: 'down' } }] });
    expect((await h.createOpsLog()).status).toBe(201);
    expect((await h.send('deploy-42')).status).toBe(202);
    await settleAll(h.app);
    const [line, ...more] = h.failures() as unknown as { delivery?: string; error: string }[];
    expect(more).toEqual([]);
    expect(line).toMatchObject({ hook: 'ci', delivery: 'deploy-42' });
    expect(line!.error).toMatch(/HTTP 500/);
    expect(line!.error).toMatch(
      /Send the same delivery again \(the same delivery id\) to run its model turn/,
    );
    expect(line!.error).not.toMatch(/Idempotency-Key/);
  });

  it("a stopping server ends a delivery's wait for the lease; its turn is owed, run on redelivery", async () => {
    const h = await hookApp({ env: { SATCHEL_CONTINUE_WAIT_MS: '200' } });
    expect((await h.createOpsLog()).status).toBe(201);
    const other = new Leases(h.app.objects, { ttlMs: 60_000, waitMs: 0 });
    const held = await other.take(keys.lease('alice', 'ops-log'));
    expect((await h.send('deploy-7')).status).toBe(202);
    await sleep(600);
    expect(h.failures()).toEqual([]); // still waiting, past SATCHEL_CONTINUE_WAIT_MS
    const stopped = Date.now();
    h.app.continuer.stopTurns();
    await settleAll(h.app);
    expect(Date.now() - stopped).toBeLessThan(2000);
    const [line] = h.failures() as unknown as { delivery?: string; error: string }[];
    expect(line).toMatchObject({ hook: 'ci', delivery: 'deploy-7' });
    expect(line!.error).toMatch(/another continue is running a model turn on session ops-log/);
    expect(line!.error).toMatch(
      /ran no turn for it. Send the same delivery again \(the same delivery id\)/,
    );
    expect(line!.error).not.toMatch(/Idempotency-Key/);
    expect(await h.markers()).toEqual(['stored']);
    // The other turn ends; the operator redelivers (to a server that runs turns): the owed turn runs.
    await other.release(held);
    const later = await hookApp({ objects: h.app.objects });
    expect((await later.send('deploy-7')).status).toBe(202);
    await settleAll(later.app);
    expect(later.chat.requests).toHaveLength(1);
    expect(await later.markers()).toEqual(['done']);
  });

  it("where the runtime bounds the work (Workers' waitUntil), the wait and the turn end within it", async () => {
    const h = await hookApp({
      env: { SATCHEL_CONTINUE_WAIT_MS: '200', SATCHEL_MODEL_TIMEOUT_MS: '60000' },
      steps: [{ hang: true }],
    });
    expect((await h.createOpsLog()).status).toBe(201);
    const { sessions, objects, config, log } = h.app;
    // A budget of 17 s: the turn must end 5 s before it (to store it), the wait 10 s before that.
    const continuer = new Continuer({
      sessions,
      objects,
      model: config.model,
      log,
      search: async () => ({}),
      backgroundMs: 17_000,
    });
    const message = { role: 'user' as const, content: 'the deploy failed' };
    const other = new Leases(objects, { ttlMs: 60_000, waitMs: 0 });
    const held = await other.take(keys.lease('alice', 'ops-log'));
    let started = Date.now();
    const busy = await continuer.deliver('alice', 'ops-log', message, {}).catch((e: unknown) => e);
    expect(busy).toMatchObject({ kind: 'conflict' });
    expect(Date.now() - started).toBeGreaterThan(1500); // about 2 s: longer than a client's 200 ms
    expect(Date.now() - started).toBeLessThan(4000);
    await other.release(held);
    // A turn whose model hangs is cut off by the budget (not at 60 s), its message stored, and says so.
    started = Date.now();
    const cut = await continuer.deliver('alice', 'ops-log', message, {}).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(14_000);
    expect(cut).toMatchObject({ kind: 'upstream_failed' });
    expect((cut as Error).message).toMatch(
      /before the runtime's time limit; your message was stored/,
    );
    await h.chat.close();
  }, 30_000);
});
