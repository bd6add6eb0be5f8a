// Review s62i: the stale-waiter rule of 79866ea passed a live head whose storage call was slow; it then
// threw a TypeError (500) once the line emptied. A passed waiter now comes back in at the end, and the head
// looks between its storage calls.
// A live taker at the head of the line whose storage call is slow (> 15 s: tryTake makes up to three
// calls, each bounded at 8 s) is passed by the taker behind it, and is then out of the line for good.
import { describe, expect, it } from 'vitest';
import { Leases } from '../../lib/continue/lease.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import type { ObjectStore } from '../../lib/storage/port.js';

const KEY = 'ns/alice/lease/s1.json';

describe('lease line under slow storage', () => {
  it('a live waiter passed while its storage call was slow still gets the lease', async () => {
    let t = 1_000_000;
    const mem = new MemoryStore({ now: () => t });
    let slowNext = false;
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    let blocked = false;
    const store: ObjectStore = {
      name: 'slow',
      get: async (key) => {
        if (slowNext) {
          slowNext = false;
          blocked = true;
          await gate; // this GET takes 16 s of storage time
        }
        return mem.get(key);
      },
      put: (k, b, o) => mem.put(k, b, o),
      delete: (k) => mem.delete(k),
      list: (p, o) => mem.list(p, o),
    };
    const leases = new Leases(store, {
      ttlMs: 60_000,
      waitMs: 120_000,
      now: () => t,
      sleep: async (ms) => {
        t += ms;
        await new Promise((r) => setTimeout(r, 1));
      },
    });
    const held = await leases.take(KEY); // someone's turn runs
    slowNext = true;
    const w1 = leases.take(KEY).then(
      (l) => ({ ok: true as const, l }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    while (!blocked) await new Promise((r) => setTimeout(r, 1));
    t += 16_000; // W1's GET is slow
    const w2 = leases.take(KEY); // W2 passes W1 (it "has not looked for 15 s")
    await new Promise((r) => setTimeout(r, 20));
    openGate(); // W1's GET answers: the lease is still held, W1 waits on (live, looking every <= 500 ms)
    await new Promise((r) => setTimeout(r, 20));
    await leases.release(held);
    const l2 = await w2;
    await leases.release(l2); // the lease is free now; W1 is live and still waiting
    const r1 = await w1;
    const outcome = r1.ok
      ? 'took the lease'
      : `${(r1.e as Error).name}: ${(r1.e as Error).message}`;
    expect(outcome).toBe('took the lease');
  });
});
