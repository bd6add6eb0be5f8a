import { randomHex } from '../model/ids.js';
import { encodeLease, leaseLeft, parseLease } from '../model/lease.js';
import { putNamed } from '../storage/create-only.js';
import type { ObjectStore } from '../storage/port.js';

export { encodeLease, leaseLeft, parseLease };

/**
 * A lease in the bucket: one small object per key, `{"owner","expires_at","ttl_ms"}`, so that one holder at a time
 * does something (one model turn per session) across processes, functions and devices, with nothing but
 * conditional writes:
 * - take: create-only (`If-None-Match: *`); when the object exists and has expired, replace it with
 *   compare-and-swap (`If-Match` on the etag read), so of two takers of one expired lease exactly one wins;
 * - wait: poll with jittered backoff while the holder's lease is live, up to `waitMs`, then `LeaseBusyError`;
 *   takers in one process poll one at a time, in the order they came;
 * - release: read it and delete it only if it is still ours with time to spare (`releaseMarginMs`): a
 *   DELETE cannot be conditional on every backend, and one sent as the lease expires could remove the
 *   lease a taker has just written; a lease of ours about to expire is marked expired instead, with
 *   `If-Match` on the version read, so the next taker replaces it at once;
 * - a take whose PUT landed with its answer lost finds its own owner when it reads the lease: it holds it;
 * - a holder that crashed leaves its lease until it expires; the next taker then takes it over.
 * A lease expires `ttl_ms` after storage wrote it, by storage's clock (`leaseLeft`): the holder counts
 * from before its PUT by its own, so machines' clocks need not agree. Where the backend does not tell an
 * object's age, and for leases stored without `ttl_ms`, expiry compares the holder's `expires_at` with
 * the taker's clock, and `ttlMs` must then exceed the holder's work by more than the clocks may differ.
 */

export interface LeaseOptions {
  /** How long a lease lives unless released. */
  ttlMs: number;
  /** How long `take` waits for a live lease before giving up. */
  waitMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One take's own bounds, beside the options'. */
export interface TakeOptions {
  /** How long this take waits for a live lease (default: the options' `waitMs`). */
  waitMs?: number;
  /** Asked between attempts: true ends the wait at once (LeaseBusyError), as a stopping server's. */
  stop?: () => boolean;
  /**
   * Counts `waitMs` from when this take reaches the head of the process's line for the key, not from its
   * start: a burst of deliveries, each waiting for one holder at a time (review s63b).
   */
  fromHead?: boolean;
}

/** A lease this process holds. */
export interface Lease {
  key: string;
  owner: string;
  expiresAt: number;
}

const BUSY = Symbol.for('satchel.lease-busy');

/** Someone else holds the lease and did not release it in time. */
export class LeaseBusyError extends Error {
  readonly [BUSY] = true;
  constructor(
    readonly key: string,
    /** Seconds after which trying again may succeed. */
    readonly retryAfter: number,
  ) {
    super(`the lease ${key} is held`);
    this.name = 'LeaseBusyError';
  }
  /** True for a LeaseBusyError from any bundle. */
  static is(err: unknown): err is LeaseBusyError {
    return (err as Record<symbol, unknown> | undefined)?.[BUSY] === true;
  }
}

/**
 * How long before its expiry a lease is still deleted on release: more than a DELETE may take (storage
 * calls are bounded well within it) plus the clock difference `ttlMs` already allows for.
 */
const RELEASE_MARGIN_MS = 15_000;

/** A taker in a process's line for a key, and when it last looked (ms). */
interface Waiter {
  owner: string;
  at: number;
}

/** A waiter that has not looked for this long is gone: more than a storage call's deadline (8 s) takes. */
const STALE_WAITER_MS = 15_000;

/** The longest Retry-After suggested: a turn usually ends long before its lease would expire. */
const MAX_RETRY_AFTER_S = 5;

/** Takes and releases leases in one object store. */
export class Leases {
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** This process's takes waiting for each key, in the order they came, with when each last looked. */
  private readonly lines = new Map<string, Waiter[]>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly options: LeaseOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /**
   * Takes the lease at `key`, waiting up to `waitMs` (the option, or this take's own) for a live one;
   * LeaseBusyError after that, or once `stop` says so. Takers of one key in this process try in the order
   * they came: a burst of webhook deliveries on one session runs its turns in order, not as polls fall.
   */
  async take(key: string, wait: TakeOptions = {}): Promise<Lease> {
    const waitMs = wait.waitMs ?? this.options.waitMs;
    let deadline = this.now() + waitMs;
    // One owner for the whole take: a PUT of ours that landed with its answer lost is ours when read.
    const owner = randomHex(12);
    const me: Waiter = { owner, at: this.now() };
    const touch = () => void (me.at = this.now());
    try {
      for (let attempt = 0; ; attempt++) {
        touch();
        const line = this.line(key, me);
        // A taker whose request was cancelled (a Worker's client went away) never leaves the line: one
        // that has not looked for longer than a storage call takes is passed (review s62b). One passed
        // while alive (its event loop stalled) comes back in at the end (review s62i).
        while (line[0] !== me && me.at - line[0]!.at > STALE_WAITER_MS) line.shift();
        // Behind another taker here: its turn comes first, and the lease is not read meanwhile.
        let live = MAX_RETRY_AFTER_S * 1000;
        if (wait.fromHead && line[0] !== me) deadline = this.now() + waitMs;
        if (line[0] === me) {
          const taken = await this.tryTake(key, owner, touch);
          if ('lease' in taken) return taken.lease;
          live = taken.live;
        }
        const left = deadline - this.now();
        if (left <= 0 || wait.stop?.()) {
          const seconds = Math.ceil(live / 1000);
          throw new LeaseBusyError(key, Math.max(1, Math.min(MAX_RETRY_AFTER_S, seconds)));
        }
        // Equal jitter: half the backoff fixed, half random, so waiters spread out.
        const backoff = Math.min(500, 25 * 2 ** Math.min(attempt, 5));
        await this.sleep(Math.min(left, backoff / 2 + Math.random() * (backoff / 2)));
      }
    } finally {
      const line = this.lines.get(key);
      const at = line ? line.indexOf(me) : -1;
      if (at >= 0) line!.splice(at, 1);
      if (line?.length === 0) this.lines.delete(key);
    }
  }

  /** This process's line for `key`, with `me` in it (at its end if it was not). */
  private line(key: string, me: Waiter): Waiter[] {
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = []));
    if (!line.includes(me)) line.push(me);
    return line;
  }

  /** One attempt at the lease for `owner`: taken, or how long the live one has left (ms). */
  private async tryTake(
    key: string,
    owner: string,
    touch: () => void,
  ): Promise<{ lease: Lease } | { live: number }> {
    const mine: Lease = { key, owner, expiresAt: this.now() + this.options.ttlMs };
    if (await this.tryPut(mine, { ifNoneMatch: '*' })) return { lease: mine };
    touch(); // between storage calls: each is bounded well under STALE_WAITER_MS
    const found = await this.objects.get(key);
    touch();
    if (!found) return { live: 0 };
    const held = parseLease(found.body);
    if (held?.owner === owner) return { lease: { key, owner, expiresAt: held.expiresAt } };
    const live = leaseLeft(found, this.now());
    // Expired (or unreadable): take it over, but only if nobody changed it since we read it.
    if (live <= 0 && (await this.tryPut(mine, { ifMatch: found.etag }))) return { lease: mine };
    return { live };
  }

  /**
   * Deletes the lease if it is still ours and far enough from expiring that nobody can take it over before
   * the DELETE lands. Closer to its expiry, it is marked expired by compare-and-swap on the version read
   * instead (a takeover meanwhile makes that PUT fail), so the next taker replaces it without waiting.
   */
  async release(lease: Lease): Promise<void> {
    const found = await this.objects.get(lease.key);
    const held = found && parseLease(found.body);
    if (!found || held?.owner !== lease.owner) return;
    const margin = Math.min(RELEASE_MARGIN_MS, this.options.ttlMs / 4);
    // What is left by its own clock, and by storage's: a clock stepped back during the turn (NTP) must not
    // make a lease that takers already see expired look live here (review s55a).
    const now = this.now();
    if (Math.min(held.expiresAt - now, leaseLeft(found, now)) > margin)
      await this.objects.delete(lease.key);
    else await this.tryPut({ ...lease, expiresAt: 0 }, { ifMatch: found.etag });
  }

  /** False when taken by someone else (or, for a release, not marked: it changed since read). */
  private tryPut(
    lease: Lease,
    condition: { ifNoneMatch: '*' } | { ifMatch: string },
  ): Promise<boolean> {
    // A released lease (expires_at at 0) is expired whatever its age.
    const stored = lease.expiresAt === 0 ? lease : { ...lease, ttlMs: this.options.ttlMs };
    // One whose answer was lost is ours when the lease read back names our owner.
    return putNamed(
      this.objects,
      lease.key,
      encodeLease(stored),
      { ...condition, contentType: 'application/json' },
      (body) => parseLease(body)?.owner === lease.owner,
    );
  }
}
