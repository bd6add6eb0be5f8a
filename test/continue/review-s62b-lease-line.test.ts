import { describe, expect, it } from 'vitest';
import { Leases } from '../../lib/continue/lease.js';
import { LocalStore } from '../../lib/storage/local.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A process's takers of one key try in the order they came (d7c2cd6). On Workers a request whose client
// went away is cancelled: its take never runs again, not even its `finally`, and stayed first in the
// isolate's line, so every later take of that key there waited behind it and answered busy while no lease
// was held (review s62b, suspected; Cloudflare's cancelling cannot run in miniflare). A taker that has not
// looked for 15 s is passed now.
const KEY = 'ns/alice/lease/s1.json';

describe("a taker that never comes back does not hold its process's line", () => {
  it('the next taker passes it after 15 s and takes the free lease', async () => {
    let t = 1_000_000;
    let cancel = false;
    const never = new Promise<void>(() => {});
    const leases = new Leases(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s62b-'))), {
      ttlMs: 60_000,
      waitMs: 60_000,
      now: () => t,
      // The first taker's first wait never ends: its request was cancelled there.
      sleep: (ms) => (cancel ? ((cancel = false), never) : Promise.resolve(void (t += ms))),
    });
    const held = await leases.take(KEY);
    cancel = true;
    void leases.take(KEY); // first in line, finds the lease held, then never runs again
    await new Promise((r) => setTimeout(r, 50));
    expect(cancel).toBe(false);
    await leases.release(held);
    const start = t;
    const next = await leases.take(KEY);
    expect(next.owner).not.toBe(held.owner);
    // It waited behind the gone taker for its 15 s, not for its whole wait (60 s).
    expect(t - start).toBeGreaterThanOrEqual(15_000);
    expect(t - start).toBeLessThan(20_000);
  });
});
