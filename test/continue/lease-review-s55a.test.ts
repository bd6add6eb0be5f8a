// Review s55a (2026-12-06), two ways two model turns could run on one session at once after leases came
// to expire by storage's clock:
// - a session's delete read the continue lease, found it expired, and later DELETEd it without looking
//   again: a continue of the session created again under the id that took the lease over in between (the
//   delete's DELETE slow or retried) lost it, and a third continue ran a turn beside it. The delete now
//   takes the expired lease first (If-Match on the version read) and deletes only its own.
// - release decided "DELETE, or mark expired" by the holder's wall clock alone: a holder whose clock was
//   stepped back during its turn (NTP correcting a clock that ran ahead) sent a plain DELETE of a lease
//   storage had already let expire, and a slow DELETE removed the lease a taker wrote meanwhile. Release
//   now takes the lesser of its own clock's and storage's time left.
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseBusyError, Leases, parseLease } from '../../lib/continue/lease.js';
import { encodeLease } from '../../lib/model/lease.js';
import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { PassThrough } from '../support/search-process.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const backends: [string, () => ObjectStore][] = [
  ['local folder', () => tempLocalStore('s55a-lease') as ObjectStore],
  ['radosgw', () => openTestS3('s55a-lease') as ObjectStore],
];
const KEY = 'ns/alice/lease/s1.json';

describe.each(backends)('a delete and a lease taken over while it runs (%s)', (_, open) => {
  it('the delete leaves a lease that a continue of the re-created session took after the delete read it', async () => {
    const store = open();
    const LEASE = keys.lease('alice', 's-del');
    let inTurn: () => void = () => undefined;
    const turnStarted = new Promise<void>((r) => (inTurn = r));
    let finishTurn: () => void = () => undefined;
    const turnMayEnd = new Promise<void>((r) => (finishTurn = r));
    // A's turn is held open until the test ends it; any other turn answers at once.
    const turn = async (req: {
      body: { messages: { role: string; content: string | null }[] };
    }) => {
      const users = req.body.messages.filter((m) => m.role === 'user');
      if (users[users.length - 1]?.content !== 'A') return { reply: 'another turn' };
      inTurn();
      await turnMayEnd;
      return { reply: 'first turn' };
    };
    const chat = await startChatServer(turn, turn);
    servers.push(chat);
    const env = {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'm',
      SATCHEL_CONTINUE_WAIT_MS: '300',
    };
    const other = await makeApp({ env, objects: store });
    // The deleting process: its DELETE of the lease is slow (a retried batch), and while it is on its way
    // the id is created again and continued.
    let hook: (() => Promise<void>) | undefined;
    class SlowDelete extends PassThrough {
      override async delete(k: string | string[]) {
        const list = Array.isArray(k) ? k : [k];
        const run = list.includes(LEASE) ? hook : undefined;
        if (run) hook = undefined;
        await run?.();
        return this.inner.delete(k);
      }
    }
    const deleter = await makeApp({ env, objects: new SlowDelete(store) });
    const sys = [{ role: 'system', content: 's' }];
    expect(
      (
        await other.call('POST', '/v1/sessions', {
          body: { id: 's-del', task: 't', messages: sys },
        })
      ).status,
    ).toBe(201);
    // A turn that ended in its last 15 s marked its lease expired (expires_at at 0): nobody holds it.
    await store.put(LEASE, encodeLease({ owner: 'earlier-turn', expiresAt: 0 }), {
      contentType: 'application/json',
    });
    let first: Promise<{ status: number }> | undefined;
    hook = async () => {
      const again = await other.call('POST', '/v1/sessions', {
        body: { id: 's-del', task: 'again', messages: sys },
      });
      expect(again.status).toBe(201);
      first = other.call('POST', '/v1/sessions/s-del/continue', { body: { message: 'A' } });
      // Continue A holds the lease and its model turn runs (or, were the delete to hold the lease for its
      // erasure, A answers 409 after its wait: no turn to overlap then).
      await Promise.race([turnStarted, first]);
    };
    expect((await deleter.call('DELETE', '/v1/sessions/s-del')).status).toBe(204);
    expect(hook).toBeUndefined();
    // Continue A's turn still runs; a second continue must wait for it (409 after the wait), not run.
    const second = await other.call('POST', '/v1/sessions/s-del/continue', {
      body: { message: 'B' },
    });
    finishTurn();
    await first;
    await sleep(50);
    // Two model turns on one session at once: A's, and B's, which found no lease.
    expect(chat.maxConcurrent).toBe(1);
    expect([200, 409]).toContain(second.status);
  });
});

describe.each(backends)('release by a holder whose clock was stepped back (%s)', (_, open) => {
  it('never deletes a lease that storage lets another take', async () => {
    const objects = open();
    let offset = 3_600_000; // the holder's clock runs an hour ahead when it takes the lease
    let duringDelete: (() => Promise<void>) | undefined;
    class SlowDelete extends PassThrough {
      override async delete(k: string | string[]) {
        const run = duringDelete;
        duringDelete = undefined;
        await run?.();
        return this.inner.delete(k);
      }
    }
    // ttl 8 s: release deletes with more than a quarter (2 s) left, else marks the lease expired.
    const ttlMs = 8000;
    const holder = new Leases(new SlowDelete(objects), {
      ttlMs,
      waitMs: 0,
      now: () => Date.now() + offset,
    });
    const mine = await holder.take(KEY);
    const took = Date.now();
    // The turn runs; by storage's clock at most 2 s of the lease is left (its 8 s and 2 s for ages read in
    // whole seconds or coarser), not more than the margin.
    await sleep(8500);
    offset = 0; // NTP steps the holder's clock back to the right time
    // The DELETE's delay stays under the 2 s margin: the taker waits at most 1.9 s for the lease.
    const taker = new Leases(objects, { ttlMs: 60_000, waitMs: 1900 });
    let deleteDelay = 0;
    let theirs: { owner: string } | undefined;
    duringDelete = async () => {
      const t = Date.now();
      theirs = await taker.take(KEY); // the lease expires by storage's clock while the DELETE is on its way
      deleteDelay = Date.now() - t;
    };
    await holder.release(mine);
    expect(deleteDelay).toBeLessThan(2000);
    // A release that marked the lease expired (no DELETE): the taker takes it now, at once.
    theirs ??= await taker.take(KEY);
    expect(Date.now() - took).toBeLessThan(ttlMs + 2000 + 2000);
    // The taker's lease must still be there: nobody else may take it for its minute.
    const stored = await objects.get(KEY);
    expect(stored && parseLease(stored.body)?.owner).toBe(theirs!.owner);
    const third = await new Leases(objects, { ttlMs: 60_000, waitMs: 0 })
      .take(KEY)
      .catch((e: unknown) => e);
    expect(LeaseBusyError.is(third)).toBe(true);
  });
});
