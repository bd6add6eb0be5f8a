// Before 2026-12-05 mapLimit rejected as soon as one call failed, while other calls were still running,
// and its workers went on starting calls for the items left: a caller that cleans up after the failure
// (SessionStore.restoreAudit erasing the audit records written so far) saw writes land after it. Now a
// failure stops the taking of items, and mapLimit rejects with the first failure only once every call in
// flight has settled.
import { describe, expect, it } from 'vitest';
import { mapLimit } from '../../lib/storage/concurrency.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapLimit', () => {
  it('keeps order and at most `limit` calls in flight', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n) => {
      most = Math.max(most, ++running);
      await sleep(n * 3);
      running--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('after a failure it starts no call, and rejects once the calls in flight have settled', async () => {
    let running = 0;
    const started: number[] = [];
    const finished: number[] = [];
    const out = mapLimit([0, 1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      started.push(i);
      running++;
      try {
        if (i === 0) throw new Error('the first PUT failed');
        await sleep(i === 2 ? 80 : 20);
        if (i === 1) throw new Error('a later PUT failed');
        finished.push(i);
      } finally {
        running--;
      }
    });
    await expect(out).rejects.toThrow('the first PUT failed');
    const seen = { started: [...started], running };
    await sleep(150);
    expect(seen).toEqual({ started: [0, 1, 2], running: 0 });
    expect(started).toEqual([0, 1, 2]);
    expect(finished).toEqual([2]);
  });

  it('the first failure in time is the one it rejects with', async () => {
    const out = mapLimit([0, 1], 2, async (i) => {
      await sleep(i === 0 ? 60 : 5);
      throw new Error(`call ${i} failed`);
    });
    await expect(out).rejects.toThrow('call 1 failed');
  });
});
