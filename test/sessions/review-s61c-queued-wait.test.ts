// Review s61c (fixed 2026-12-07): on the Node server a write waits in the session's queue (GroupQueue,
// lib/sessions/key-queue.ts) behind every earlier write of this process to the same session. With storage
// silent, each group in the queue spent the full storage deadline in turn, so the Nth write answered its
// 503 after about N deadlines (32 s for the 4th of four PUTs), past the CLI's and a proxy's patience. Now a
// queued write answers within about one deadline: it is refused, unsent, when the group before it ends
// with storage not answering, or when its own wait passes the deadline. Its 503 does not say "may have
// been stored" (nothing of it was sent), a retry with its key works later, and a write whose group started
// is answered by that group alone.
import { describe, expect, it } from 'vitest';
import { SatchelError } from '../../lib/model/errors.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { WriteResult } from '../../lib/sessions/write-loop.js';
import type { ListOptions, ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { defaultRetryPolicy, withRetry } from '../../lib/storage/retry.js';
import { tempLocalStore } from '../support/temp-store.js';

/** The storage deadline of these tests (8 s in production), kept short so the tests run quickly. */
const D = 3000;
const NS = 'alice';

/**
 * A local folder reached as the network adapters reach S3: every call through withRetry with a deadline
 * of D. Once `silent`, PUTs of the session object never answer (and never land); `slowMs` delays them.
 */
class Silent implements ObjectStore {
  readonly name = 'silent';
  silent = false;
  slowMs = 0;
  private readonly inner = tempLocalStore('s61c-queue');
  private go<T>(what: string, op: () => Promise<T>, write = false) {
    const policy = { ...defaultRetryPolicy, deadlineMs: D, attemptTimeoutMs: D - 100 };
    return withRetry(what, op, () => true, policy, undefined, { write });
  }
  get(key: string) {
    return this.go('GET', () => this.inner.get(key));
  }
  put(key: string, body: Uint8Array, o?: PutOptions) {
    const session = /\/sessions\/[^/]+\.json$/.test(key);
    return this.go(
      'PUT',
      async () => {
        if (session && this.silent) return new Promise<never>(() => undefined);
        if (session && this.slowMs) await new Promise((r) => setTimeout(r, this.slowMs));
        return this.inner.put(key, body, o);
      },
      true,
    );
  }
  delete(k: string | string[]) {
    return this.go('DELETE', () => this.inner.delete(k), true);
  }
  list(prefix: string, o?: ListOptions) {
    return this.go('LIST', () => this.inner.list(prefix, o));
  }
}

async function setup(id: string) {
  const objects = new Silent();
  const store = new SessionStore(objects, { storageDeadlineMs: D });
  await store.create(NS, { id, task: 't', messages: [] } as never);
  await store.settled();
  return { objects, store };
}

type Outcome = { ms: number } & (
  { ok: true; result: WriteResult } | { ok: false; err: SatchelError }
);

/** Runs `write` and says how it ended and when, counted from `t0`. */
async function timed(t0: number, write: () => Promise<WriteResult>): Promise<Outcome> {
  return write().then(
    (result) => ({ ok: true as const, result, ms: Date.now() - t0 }),
    (err: SatchelError) => ({ ok: false as const, err, ms: Date.now() - t0 }),
  );
}

/** Asserts that `o` is a 503 that says to try again and not that the write may have been stored. */
function notSent(o: Outcome): void {
  expect(o.ok).toBe(false);
  if (o.ok) return;
  expect(SatchelError.is(o.err, 'unavailable')).toBe(true);
  expect(o.err.extra.retryAfter).toBeGreaterThan(0);
  expect(o.err.extra.maybeStored).toBeUndefined();
  expect(o.err.message).not.toMatch(/may have been stored/);
  expect(o.err.message).toMatch(/not sent to storage/);
}

const user = (content: string) => ({ role: 'user' as const, content });

describe('writes queued behind a write storage does not answer (review s61c)', () => {
  it('four concurrent replaces with If-Match each answer within about one storage deadline', async () => {
    const { objects, store } = await setup('q1');
    objects.silent = true;
    const t0 = Date.now();
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        timed(t0, () =>
          store.replace(NS, 'q1', { task: `put ${n}`, messages: [] } as never, 1, {}),
        ),
      ),
    );
    for (const a of answers) expect(a.ms).toBeLessThan(1.5 * D); // was n x D for the nth
    const [first, ...later] = answers;
    // The first one's PUT was sent: storage may hold it, and it says so.
    expect(first!.ok || first!.err.extra.maybeStored).toBe(true);
    for (const a of later) notSent(a);
    await store.settled();
  });

  it('twenty keyed appends answer within a deadline, and their retries later store each once', async () => {
    const { objects, store } = await setup('q2');
    objects.silent = true;
    const t0 = Date.now();
    const append = (n: number) =>
      store.append(NS, 'q2', { messages: [user(`m ${n}`)] }, undefined, {
        idempotencyKey: `k-${n}`,
      });
    const n20 = Array.from({ length: 20 }, (_, n) => n);
    const answers = await Promise.all(n20.map((n) => timed(t0, () => append(n))));
    for (const a of answers) expect(a.ms).toBeLessThan(1.5 * D); // were 2 D and 3 D
    // The first append went out alone; the ones queued behind it were never sent.
    for (const a of answers.slice(1)) notSent(a);
    // Storage answers again: each retry with its key is stored, and once.
    objects.silent = false;
    for (const n of n20) await append(n);
    const stored = await store.get(NS, 'q2');
    expect(stored.messages.map((m) => m.content)).toEqual(n20.map((n) => `m ${n}`));
    await store.settled();
  });

  it('a write queued later is refused as soon as the write before it ends unanswered', async () => {
    const { objects, store } = await setup('q3');
    objects.silent = true;
    const t0 = Date.now();
    const first = timed(t0, () => store.replace(NS, 'q3', { task: 'a', messages: [] } as never, 1));
    await new Promise((r) => setTimeout(r, D / 2));
    const late = await timed(t0, () =>
      store.replace(NS, 'q3', { task: 'b', messages: [] } as never, 1),
    );
    // At the first one's end (about D), not at its own wait's end (1.5 D) nor its own deadline (2 D).
    expect(late.ms).toBeLessThan(1.3 * D);
    notSent(late);
    expect((await first).ms).toBeLessThan(1.5 * D);
    await store.settled();
  });

  it('a write whose group started is answered by it; one that waited three deadlines is refused', async () => {
    const { objects, store } = await setup('q4');
    objects.slowMs = D * 0.8; // each PUT of the session takes 0.8 D: answered, slowly
    const replace = (task: string, rev: number) =>
      store.replace(NS, 'q4', { task, messages: [] } as never, rev);
    const t0 = Date.now();
    const out = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((task, i) => timed(t0, () => replace(task, i + 1))),
    );
    // a went at once; b started after a (0.8 D), well within its bound (3 D), and ended past one D.
    expect(out[0]!.ok && out[1]!.ok).toBe(true);
    expect(out[1]!.ms).toBeGreaterThan(D);
    // e waited behind four slow PUTs (at least 3.2 D): refused unsent. c and d each went or were refused.
    notSent(out[4]!);
    // Its detail names the wait it had, three deadlines (it said one until review s62c).
    expect((out[4] as { err: SatchelError }).err.message).toContain(
      `waited ${Math.round((3 * D) / 1000)} s`,
    );
    const last = out.map((o, i) => (o.ok ? i : -1)).filter((i) => i >= 0);
    for (const [i, o] of out.entries()) if (!o.ok) (notSent(o), expect(i).toBeGreaterThan(1));
    // Storage holds the last write that went, at its revision.
    const stored = await store.get(NS, 'q4');
    const n = last.at(-1)!;
    expect([stored.task, stored.revision]).toEqual([['a', 'b', 'c', 'd', 'e'][n], n + 2]);
    await store.settled();
  });
});
