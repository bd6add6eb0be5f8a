import { describe, expect, it } from 'vitest';
import { Batcher } from '../../lib/storage/concurrency.js';

// Purges run through a Batcher with carryFailed: the ids of a purge that failed must reach the namespace's
// next purge, also when that one was already waiting behind it (deletes arriving while a purge ran, as a
// cleanup's do). Found by review, 2026-12-04: they joined only a batch formed after the failure.
describe('Batcher carryFailed', () => {
  function gated() {
    const runs: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let n = 0;
    const b = new Batcher<string>(
      async (_k, items) => {
        runs.push([...items].sort());
        if (n++ === 0) {
          started();
          await gate;
          throw new Error('storage refused the root');
        }
      },
      0,
      Infinity,
      true,
    );
    return { b, runs, release, running };
  }

  it("a failed batch's items join the batch already waiting behind it", async () => {
    const { b, runs, release, running } = gated();
    const first = b.add('ns', ['a']);
    await running;
    const second = b.add('ns', ['b']); // waits behind it
    release();
    await expect(first).rejects.toThrow('refused');
    await second;
    expect(runs).toEqual([['a'], ['a', 'b']]);
  });

  it('or the next batch of the key, when none waits', async () => {
    const { b, runs, release, running } = gated();
    const first = b.add('ns', ['a']);
    await running;
    release();
    await expect(first).rejects.toThrow('refused');
    await b.add('other', ['x']);
    await b.add('ns', ['b']);
    expect(runs).toEqual([['a'], ['x'], ['a', 'b']]);
  });

  // Review s53c: a purge that failed while storage was down waited for the namespace's next delete; in a
  // quiet namespace the deleted text stayed for good. Now the failed items also run again on their own.
  it('run again on their own when no batch of the key comes, until one succeeds', async () => {
    const runs: string[][] = [];
    const b = new Batcher<string>(
      async (_key, items) => {
        runs.push([...items]);
        if (runs.length < 3) throw new Error('refused');
      },
      0,
      Infinity,
      true,
      5,
    );
    await expect(b.add('ns', ['a'])).rejects.toThrow('refused');
    for (let i = 0; i < 200 && runs.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    expect(runs).toEqual([['a'], ['a'], ['a']]);
    await new Promise((r) => setTimeout(r, 50));
    expect(runs.length).toBe(3);
  });

  it('a bounded number of times', async () => {
    let runs = 0;
    const b = new Batcher<string>(
      async () => {
        runs++;
        throw new Error('refused');
      },
      0,
      Infinity,
      true,
      1,
    );
    await expect(b.add('ns', ['a'])).rejects.toThrow('refused');
    // 1 + 2 + ... + 64 ms of waits (polled: a busy machine delays timers), then no more.
    for (let i = 0; i < 500 && runs < 8; i++) await new Promise((r) => setTimeout(r, 10));
    expect(runs).toBe(8);
    await new Promise((r) => setTimeout(r, 200));
    expect(runs).toBe(8);
  });
});
