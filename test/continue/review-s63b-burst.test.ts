import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LeaseBusyError, Leases, type Lease } from '../../lib/continue/lease.js';
import { LocalStore } from '../../lib/storage/local.js';
import { settleAll } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { HOOK_SECRET, hookApp } from '../support/hook-turn.js';

// Review s63b: a burst of webhook deliveries on one session runs its turns one after another, but each
// delivery's wait for the lease (one lease lifetime, SATCHEL_MODEL_TIMEOUT_MS + 30 s) was counted from its
// arrival, so it also counted the turns queued ahead of it in its own process. Once those added up to more,
// the later deliveries gave up, and their turns were owed until someone sent them again by hand (16 check
// runs with a 10 s model did it on the defaults), while docs/webhooks.md says each gets its turn.
const KEY = 'ns/alice/lease/s1.json';

describe('a take that counts its wait from the head of its line', () => {
  it('outwaits the holders ahead of it, one wait each', async () => {
    let t = 1_000_000;
    // Fake time moves as the waiters sleep, up to `cap`, where it stands until the test moves it on (each
    // sleeping waiter moves it: on a loaded machine it ran past the release the test meant to make at
    // 45 s, and the second waiter gave up before it, CI of 20ce645).
    let cap = t;
    const leases = new Leases(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s63b-'))), {
      ttlMs: 600_000,
      waitMs: 60_000,
      now: () => t,
      sleep: (ms) => new Promise((r) => setTimeout(() => r(void (t = Math.min(t + ms, cap))), 1)),
    });
    // At most 10 s of real time (no waiter left: it stands still).
    const passed = async (ms: number) => {
      cap = t + ms;
      const until = Date.now() + 10_000;
      while (t < cap && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
    };
    const first = await leases.take(KEY);
    const second = leases.take(KEY, { fromHead: true }).catch((err: unknown) => err);
    const third = leases.take(KEY, { fromHead: true }).catch((err: unknown) => err);
    const plain = leases.take(KEY).catch((err: unknown) => err);
    await passed(45_000);
    await leases.release(first);
    const got2 = await second;
    expect(LeaseBusyError.is(got2)).toBe(false);
    await passed(45_000);
    await leases.release(got2 as Lease);
    // 90 s after they came: the third waited 45 s at the head, the plain one gave up at 60 s.
    const got3 = await third;
    expect(LeaseBusyError.is(got3)).toBe(false);
    expect(LeaseBusyError.is(await plain)).toBe(true);
    await leases.release(got3 as Lease);
  });
});

describe('a webhook burst longer than one lease lifetime (review s63b)', () => {
  it('runs every delivery its turn', async () => {
    // A lease lives 32.5 s (2.5 s + 30 s); 30 turns of 1.3 s take 39 s one after another (each turn's
    // deadline 1.2 s past its model's answer, for a loaded machine).
    const n = 30;
    const h = await hookApp({
      env: { SATCHEL_MODEL_TIMEOUT_MS: '2500' },
      steps: Array.from({ length: n }, (_, i) => ({ reply: `reply ${i}`, delayMs: 1300 })),
    });
    expect((await h.createOpsLog()).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        h.app.call(
          'POST',
          '/v1/hooks/ci',
          signedDelivery(HOOK_SECRET, JSON.stringify({ type: 'check', i }), `burst-${i}`),
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(n).fill(202));
    await settleAll(h.app);
    expect(h.failures()).toEqual([]);
    expect(h.chat.requests).toHaveLength(n);
    expect(new Set(await h.markers())).toEqual(new Set(['done']));
  }, 120_000);
});
