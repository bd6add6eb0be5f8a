import { describe, expect, it } from 'vitest';
import { encodeLease, LeaseBusyError, Leases, parseLease } from '../../lib/continue/lease.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { LocalStore } from '../../lib/storage/local.js';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  utf8,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestS3 } from '../support/s3.js';

const KEY = 'ns/alice/lease/s1.json';

/** A clock the test moves; sleeping advances it, so waiting costs no real time. */
function fakeClock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    sleep: async (ms: number) => void (t += ms),
    advance: (ms: number) => void (t += ms),
  };
}

/**
 * The store with storage's clock made the test's: objects' `age` counts from their last write by `clock`
 * (a lease expires by storage's clock; the adapters' own ages are the conformance suite's).
 */
class StorageClock extends PassThrough {
  private readonly written = new Map<string, number>();
  constructor(
    inner: ObjectStore,
    private readonly clock: { now: () => number },
  ) {
    super(inner);
  }
  override async get(key: string) {
    const found = await this.inner.get(key);
    const at = this.written.get(key);
    return found && at !== undefined ? { ...found, age: this.clock.now() - at } : found;
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    const done = await this.inner.put(key, body, options);
    this.written.set(key, this.clock.now());
    return done;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [name, make] of [
  ['memory', () => new MemoryStore()],
  ['local folder', () => new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-lease-')))],
  ['s3 (Ceph radosgw)', () => openTestS3('lease')],
] as [string, () => ObjectStore][]) {
  describe(`Leases (${name})`, () => {
    it('take, then release: the object is gone and the next take is immediate', async () => {
      const objects = make();
      const clock = fakeClock();
      const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 1000, ...clock });
      const lease = await leases.take(KEY);
      expect(lease.expiresAt).toBe(clock.now() + 60_000);
      const stored = parseLease((await objects.get(KEY))!.body);
      expect(stored).toEqual({ owner: lease.owner, expiresAt: lease.expiresAt, ttlMs: 60_000 });
      await leases.release(lease);
      expect(await objects.get(KEY)).toBeNull();
      const again = await leases.take(KEY);
      expect(again.owner).not.toBe(lease.owner);
    });

    it('a live lease makes the second taker wait up to waitMs, then LeaseBusyError with a bounded Retry-After', async () => {
      const objects = make();
      const clock = fakeClock();
      const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 2000, ...clock });
      await leases.take(KEY);
      const started = clock.now();
      const err = await leases.take(KEY).catch((e: unknown) => e);
      expect(LeaseBusyError.is(err)).toBe(true);
      expect((err as LeaseBusyError).retryAfter).toBe(5);
      expect(clock.now() - started).toBeGreaterThanOrEqual(2000);
      expect(clock.now() - started).toBeLessThan(2600);
    });

    it('a waiter gets the lease as soon as the holder releases it', async () => {
      const objects = make();
      const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 5000 });
      const first = await leases.take(KEY);
      setTimeout(() => void leases.release(first), 50);
      const started = Date.now();
      const second = await leases.take(KEY);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(second.owner);
    });

    it('an expired lease (a crashed holder) is taken over at once', async () => {
      const objects = make();
      const clock = fakeClock();
      await objects.put(KEY, encodeLease({ owner: 'crashed', expiresAt: clock.now() - 1 }), {
        ifNoneMatch: '*',
      });
      const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 0, ...clock });
      const lease = await leases.take(KEY);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(lease.owner);
    });

    it('an unreadable lease object counts as expired', async () => {
      const objects = make();
      await objects.put(KEY, utf8('garbage'));
      const leases = new Leases(objects, { ttlMs: 60_000, waitMs: 0 });
      await expect(leases.take(KEY)).resolves.toMatchObject({ key: KEY });
    });

    it('of many takers of one expired lease exactly one wins; the rest wait and give up', async () => {
      const objects = make();
      const clock = fakeClock();
      await objects.put(KEY, encodeLease({ owner: 'crashed', expiresAt: clock.now() - 1 }), {
        ifNoneMatch: '*',
      });
      const takers = Array.from(
        { length: 8 },
        () => new Leases(objects, { ttlMs: 60_000, waitMs: 0, now: clock.now }),
      );
      const results = await Promise.allSettled(takers.map((l) => l.take(KEY)));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .every((r) => LeaseBusyError.is((r as PromiseRejectedResult).reason)),
      ).toBe(true);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(
        (won[0] as PromiseFulfilledResult<{ owner: string }>).value.owner,
      );
    });

    it('release leaves a lease that was taken over after ours expired', async () => {
      const clock = fakeClock();
      const objects = new StorageClock(make(), clock);
      const a = new Leases(objects, { ttlMs: 1000, waitMs: 0, ...clock });
      const b = new Leases(objects, { ttlMs: 1000, waitMs: 0, ...clock });
      const mine = await a.take(KEY);
      clock.advance(3001); // its ttl and the two seconds storage ages may read more than they are
      const theirs = await b.take(KEY);
      await a.release(mine);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(theirs.owner);
      await a.release(mine); // still theirs
      await b.release(theirs);
      expect(await objects.get(KEY)).toBeNull();
    });

    it('a release close to its expiry marks the lease expired, so the next take does not wait', async () => {
      // Before: it was left live, and a continue in the last 15 s waited for it (409 with waitMs 5 s).
      const objects = make();
      const clock = fakeClock();
      const a = new Leases(objects, { ttlMs: 60_000, waitMs: 0, ...clock });
      const mine = await a.take(KEY);
      clock.advance(50_000);
      await a.release(mine);
      expect(parseLease((await objects.get(KEY))!.body)!.expiresAt).toBe(0);
      const next = await new Leases(objects, { ttlMs: 60_000, waitMs: 0, ...clock }).take(KEY);
      expect(next.owner).not.toBe(mine.owner);
      // A release of the old holder after that takeover leaves the new lease alone.
      await a.release(mine);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(next.owner);
    });

    it('release never deletes a lease taken over between its read and its delete (review)', async () => {
      // A turn ran past its lease; another continue takes it over while the holder releases.
      const clock = fakeClock();
      const objects = new StorageClock(make(), clock);
      let takeover: (() => Promise<unknown>) | undefined;
      class TakenAfterRead extends PassThrough {
        override async get(key: string) {
          const found = await this.inner.get(key);
          const run = takeover;
          takeover = undefined;
          await run?.();
          return found;
        }
      }
      const a = new Leases(new TakenAfterRead(objects), { ttlMs: 60_000, waitMs: 0, ...clock });
      const b = new Leases(objects, { ttlMs: 60_000, waitMs: 0, ...clock });
      const mine = await a.take(KEY);
      clock.advance(62_001); // past its ttl and the two seconds storage ages may read more
      let theirs: { owner: string } | undefined;
      takeover = async () => (theirs = await b.take(KEY));
      await a.release(mine);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(theirs!.owner);
      const c = new Leases(objects, { ttlMs: 60_000, waitMs: 0, ...clock });
      expect(LeaseBusyError.is(await c.take(KEY).catch((e: unknown) => e))).toBe(true);
      // A lease within 15 s of expiring is left for the next taker, who replaces it.
      clock.advance(50_000);
      await b.release(theirs as never);
      expect(parseLease((await objects.get(KEY))!.body)!.owner).toBe(theirs!.owner);
      clock.advance(10_001);
      await c.release(await c.take(KEY));
      expect(await objects.get(KEY)).toBeNull();
    });

    it("a holder whose clock is minutes behind keeps its lease: expiry is by storage's clock (review s54b)", async () => {
      // Before: the taker compared the holder's expires_at with its own clock and took the lease over
      // at once, and a second model turn ran while the first still did.
      const objects = make();
      const behind = new Leases(objects, {
        ttlMs: 60_000,
        waitMs: 0,
        now: () => Date.now() - 180_000,
      });
      await behind.take(KEY);
      const taker = new Leases(objects, { ttlMs: 60_000, waitMs: 300 });
      const err = await taker.take(KEY).catch((e: unknown) => e);
      expect(LeaseBusyError.is(err)).toBe(true);
      expect((err as LeaseBusyError).retryAfter).toBe(5);
    });

    it("a crashed holder whose clock ran an hour ahead is taken over once its lease has lived its ttl by storage's clock", async () => {
      // Before: its expires_at lay an hour ahead of the taker's clock, and the session's continues
      // answered 409 for that hour.
      const objects = make();
      const ahead = new Leases(objects, {
        ttlMs: 1000,
        waitMs: 0,
        now: () => Date.now() + 3_600_000,
      });
      const crashed = await ahead.take(KEY);
      const taker = new Leases(objects, { ttlMs: 1000, waitMs: 8000 });
      const started = Date.now();
      const lease = await taker.take(KEY);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      const stored = parseLease((await objects.get(KEY))!.body)!;
      expect(stored.owner).toBe(lease.owner);
      expect(stored.owner).not.toBe(crashed.owner);
    });

    it('a lease stored without ttl_ms (before 2026-12-06) still expires by its expires_at', async () => {
      const objects = make();
      await objects.put(KEY, encodeLease({ owner: 'old', expiresAt: Date.now() + 60_000 }), {
        ifNoneMatch: '*',
      });
      const busy = await new Leases(objects, { ttlMs: 1000, waitMs: 0 }).take(KEY).catch((e) => e);
      expect(LeaseBusyError.is(busy)).toBe(true);
      await sleep(1);
      const later = new Leases(objects, { ttlMs: 1000, waitMs: 0, now: () => Date.now() + 61_000 });
      expect((await later.take(KEY)).owner).not.toBe('old');
    });

    for (const how of ['the retry found it taken', 'the adapter gave up'] as const)
      it(`a take whose PUT landed with its answer lost holds the lease (${how}; found by review)`, async () => {
        // Before, each try of a take had its own owner: it read its own live lease as another's,
        // waited, and answered busy (a continue's 409 with no other continue running).
        const inner = make();
        let lost = false;
        class LoseOnce extends PassThrough {
          override async put(key: string, body: Uint8Array, options?: PutOptions) {
            if (lost) return this.inner.put(key, body, options);
            lost = true;
            await this.inner.put(key, body, options);
            if (how === 'the retry found it taken')
              throw new PreconditionFailedError(key, { afterLostAnswer: true });
            throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
          }
        }
        const clock = fakeClock();
        const leases = new Leases(new LoseOnce(inner), { ttlMs: 60_000, waitMs: 1000, ...clock });
        const lease = await leases.take(KEY);
        expect(lost).toBe(true);
        expect(parseLease((await inner.get(KEY))!.body)!.owner).toBe(lease.owner);
        await leases.release(lease);
        expect(await inner.get(KEY)).toBeNull();
        const other = new Leases(inner, { ttlMs: 60_000, waitMs: 0, ...clock });
        await other.release(await other.take(KEY)); // free at once
      });
  });
}

describe('lease encoding', () => {
  it('round-trips and rejects what is not a lease', () => {
    expect(parseLease(encodeLease({ owner: 'o', expiresAt: Date.UTC(2030, 0, 1) }))).toEqual({
      owner: 'o',
      expiresAt: Date.UTC(2030, 0, 1),
    });
    for (const body of [
      '{}',
      '{"owner":1,"expires_at":"2030-01-01T00:00:00Z"}',
      '{"owner":"o","expires_at":"soon"}',
      '[',
      '',
    ]) {
      expect(parseLease(utf8(body)), body).toBeNull();
    }
  });
});
