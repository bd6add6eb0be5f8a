import type { ObjectStore } from '../storage/port.js';
import { mapLimit } from '../storage/concurrency.js';
import { listedExists } from '../storage/prefix.js';
import { incarnationIn, stateOf } from './key-records.js';

/** An object is there, but its incarnation cannot be read. */
const UNREAD = Symbol('unread');

/** The longest a hold keeps a session's checks waiting (its records' PUTs are bounded well within it). */
const HOLD_MAX_MS = 10_000;

/** How many times background erasing that failed runs again on its own (1 s, 2 s, 4 s …: about 2 min). */
export const ERASE_RETRIES = 7;

/**
 * Background erasing that must not end at one failed request (review s56a: a failed listing, check or
 * log record before a purge or scrub left the text for good in a quiet namespace): runs `work` now, or
 * after the first delay when `later`, and while it fails, again after 1 s, 2 s, 4 s … (`ERASE_RETRIES`
 * times at most, as a failed purge is run again: Batcher), on timers that never hold a process open.
 * `failed` hears each failure (`last`: no attempt follows). Resolves after the first attempt: true when
 * it succeeded, so that a drain waits for that attempt only.
 */
export function eraseRetried(
  work: () => Promise<unknown>,
  failed: (err: unknown, last: boolean) => void,
  { later = false, delayMs = 1000 }: { later?: boolean; delayMs?: number } = {},
): Promise<boolean> {
  const attempt = (n: number): Promise<boolean> =>
    work().then(
      () => true,
      (err: unknown) => {
        const last = n >= ERASE_RETRIES;
        failed(err, last);
        if (!last) wait(n, () => void attempt(n + 1));
        return false;
      },
    );
  const wait = (n: number, then: () => void) => {
    const timer = setTimeout(then, delayMs * 2 ** n);
    (timer as { unref?: () => void }).unref?.();
  };
  if (!later) return attempt(0);
  wait(0, () => void attempt(1));
  return Promise.resolve(false);
}

/**
 * What a check finds of a record's session: true while the object holds it with no text removed since the
 * record's version, 'stale' when a later write removed text (the record goes, the session stays), false
 * when it is gone.
 */
type Found = boolean | 'stale';

/**
 * A record's session `mine` (its incarnation, or `stateOf` its version: then a later write that removed
 * text makes the record stale) against the object's `found` (`stateOf`, or null: no object).
 */
function verdict(found: string | null, mine: string): Found {
  const [i, x] = found?.split('/') ?? [];
  const [j, y] = mine.split('/');
  return i === j && (y === undefined || x === y || 'stale');
}

interface Waiter {
  /** When the record's PUT answered, on this process's `tick` order. */
  landed: number;
  /** The record's session: its incarnation, or its version's `stateOf`. */
  incarnation: string;
  /**
   * A record named by its incarnation, which a session created again under the id would take for its own:
   * an object whose incarnation cannot be read does not count as its session.
   */
  strict: boolean;
  done: (found: Found) => void;
  fail: (err: unknown) => void;
}

interface Waiting {
  waiters: Waiter[];
  /** Unset when the check runs at once. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Deleted means gone, across processes (docs/design.md, "Deleting"): a delete deletes the session object,
 * then lists the records that hold its text. A record this process stores in the background (a log,
 * audit or index record) that lands after that listing must be erased by this process, so after it lands
 * the process asks whether the session object still exists. One side always sees the other.
 *
 * The answer often comes for free: a conditional PUT of this process that lands on the same session (the
 * same incarnation), sent after the record landed, proves the object existed after it, so a delete can
 * only come later, and its listing finds the record (and one that lands on a session created again under
 * the id proves that the record's session is gone). A check therefore waits up to `lingerMs` for such a
 * commit, and only then asks which session the key holds: one request for every check of the session
 * waiting by then, a HEAD (the store's `head`) whose etag, when it is the one this process's last commit
 * to the key got, names that commit's incarnation; else a GET, which holds it (a store without `head`, a
 * test double, is asked by a LIST whether an object is there, or a GET for a strict check). So a session deleted and
 * created again under the id by another process before the check does not keep the deleted one's
 * records. Below, "LIST" names that request (it was a LIST once). A busy
 * session's records cost no request to check; a quiet one's cost one per `lingerMs`. A runtime that
 * drains after each request (Workers, Lambda) sets `lingerMs` to 0: every check LISTs at once, unless a
 * write still has records of the session on their way (`hold`): then the checks wait for them, and share
 * one LIST.
 */
export class ExistenceChecks {
  private clock = 0;
  private readonly waiting = new Map<string, Waiting>();
  /** Flushes and drains under way: checks that arrive meanwhile LIST at once. */
  private urgent = 0;
  /**
   * The last commit of this process answered as landed on each key (the last 4,096 keys): the
   * incarnation it landed on, and the tick it was sent at.
   */
  private readonly proofs = new Map<string, { incarnation: string; sent: number; etag: string }>();
  /** What follows the checks (their LISTs, the erasing after them): `flush` waits for it. */
  private readonly following = new Set<Promise<unknown>>();
  /** Sessions (keys) whose records are on their way, with how many holds each (`hold`). */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly lingerMs: number,
    /** Hears a check and its erasing that failed for good (every retry of `eraseUnlessLive` failed). */
    private readonly onError: (what: string, err: unknown) => void = () => undefined,
  ) {}

  /** The next point in this process's order of storage answers and requests. */
  tick(): number {
    return ++this.clock;
  }

  /**
   * Whether the object at `key` still holds session `incarnation` now that a record of it has landed
   * (called once the record's PUT answered): `verdict`'s answer, for `incarnation` as an incarnation or
   * as the `stateOf` the record's version. Rejects when the HEAD (or GET) fails. `strict`: an object
   * whose incarnation cannot be read (not a session object) does not count (a record named by its
   * incarnation, which a session created again under the id would otherwise take for its own). `since`: a tick
   * after a commit of this incarnation landed (the record's own commit), when known.
   */
  confirm(
    key: string,
    incarnation: string,
    { strict = false, since }: { strict?: boolean; since?: number | undefined } = {},
  ): Promise<Found> {
    const landed = this.tick();
    if (this.knownGone(key, incarnation, since ?? landed)) return Promise.resolve(false);
    const now = this.lingerMs <= 0 || this.urgent > 0;
    return new Promise<Found>((done, fail) => {
      const waiter = { landed, incarnation, strict, done, fail };
      const w = this.waiting.get(key);
      if (w) w.waiters.push(waiter);
      else {
        // A check that lingers never holds a Node process open by itself.
        const timer = now
          ? undefined
          : setTimeout(() => void this.follow(this.list(key)), this.lingerMs);
        (timer as { unref?: () => void } | undefined)?.unref?.();
        this.waiting.set(key, { waiters: [waiter], timer });
      }
      if (now && !this.held.has(key)) this.follow(this.list(key));
    });
  }

  /**
   * Without a wait (Workers, Lambda), the records of a write (its log and audit records, its index record)
   * land at different moments, and each check would LIST at once. Whoever stores some of them holds the
   * session's checks (taken before their PUTs, released once they settled): a check that
   * would LIST at once waits while the session is held, and the last release LISTs once for them all.
   * Bounded: a hold goes by itself after `HOLD_MAX_MS`. A commit of this process still answers a held
   * check. With a wait (the Node server), checks share their LIST already, and a hold does nothing.
   */
  hold(key: string): () => void {
    const { held } = this;
    if (this.lingerMs > 0) return () => undefined;
    held.set(key, (held.get(key) ?? 0) + 1);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      if (!timer) return;
      clearTimeout(timer);
      timer = undefined;
      const left = held.get(key)! - 1;
      if (left) held.set(key, left);
      else if (held.delete(key) && this.waiting.has(key)) this.follow(this.list(key));
    };
    timer = setTimeout(done, HOLD_MAX_MS);
    (timer as { unref?: () => void }).unref?.();
    // A few promise steps after the records' PUTs settle, their checks are registered: the next turn.
    return () => void setTimeout(done, 0);
  }

  /**
   * Once `after` settles (the PUTs of what `erase` deletes: landed, failed, or with their answer lost),
   * runs `erase` unless the object at `key` still holds session `incarnation` (`strict` and `since` as
   * for `confirm`): records or parts of that session that a delete may have listed before
   * they landed (`gone`), or, for a version's `stateOf`, records that a later write's prune or scrub may
   * have missed. The next commit of this process to the session usually answers; else a HEAD or a GET.
   * When the check or the erasing fails, this rejects, and both run again in the background after 1 s,
   * 2 s, 4 s … (`eraseRetried`; until 2026-12-06 nothing asked again, and a record that landed after a
   * delete's listing stayed for good: index compactions collect only records a segment covers).
   */
  async eraseUnlessLive(
    key: string,
    incarnation: string,
    erase: (gone: boolean) => Promise<unknown>,
    {
      strict = false,
      since,
      after,
    }: { strict?: boolean; since?: number | undefined; after?: Promise<unknown> } = {},
  ): Promise<void> {
    await after?.catch(() => undefined);
    const once = async () => {
      const found = await this.confirm(key, incarnation, { strict, since });
      if (found !== true) await erase(!found);
    };
    let first: unknown;
    const done = await eraseRetried(once, (err, last) => {
      if (first === undefined) first = err ?? new Error('check failed');
      else if (last) this.onError('a record of a deleted or replaced version not erased', err);
    });
    if (!done) throw first;
  }

  /**
   * True when a commit of this process landed on another incarnation at `key`, sent after one of
   * `incarnation` had landed (`since`): that session was deleted, and is gone for good.
   */
  knownGone(key: string, incarnation: string, since: number): boolean {
    const proof = this.proofs.get(key);
    return !!proof && proof.sent > since && !verdict(proof.incarnation, incarnation);
  }

  /** Keeps `work` (a check and what it erases) for `flush` to wait for; returns it. */
  follow<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.following.add(settled);
    void settled.then(() => this.following.delete(settled));
    return work;
  }

  /**
   * Until the returned function is called, every check runs at once, and the waiting ones run now: a
   * drain holds this, so that a check that arrives during it does not wait for the time out.
   */
  hurry(): () => void {
    this.urgent++;
    this.follow(this.runWaiting());
    let held = true;
    return () => {
      if (held) this.urgent--;
      held = false;
    };
  }

  /**
   * A conditional PUT of the object at `key`, sent at `sent` (a `tick` taken before it), landed on an
   * object of session `incarnation` (`If-Match`), or created it (`If-None-Match: *`, a new incarnation),
   * leaving `stateOf` the version it stored (`incarnation`): every check whose record landed before it is
   * answered (`etag`: the storage etag it got, which a later check's HEAD compares). A record of that
   * incarnation: the session exists (its record is stale when text was removed since its version). A
   * record of another: its session was deleted before the PUT (only a create gives a session a
   * new incarnation), so the record must go. Returns a tick taken now, after the PUT landed (`Committed.landedAt`).
   */
  proven(key: string, incarnation: string, sent: number, etag: string): number {
    this.proofs.delete(key);
    this.proofs.set(key, { incarnation, sent, etag });
    if (this.proofs.size > 4096) this.proofs.delete(this.proofs.keys().next().value!);
    const landed = this.tick();
    const w = this.waiting.get(key);
    if (!w) return landed;
    const left: Waiter[] = [];
    for (const waiter of w.waiters) {
      if (waiter.landed < sent) waiter.done(verdict(incarnation, waiter.incarnation));
      else left.push(waiter);
    }
    w.waiters = left;
    if (left.length === 0) {
      clearTimeout(w.timer);
      this.waiting.delete(key);
    }
    return landed;
  }

  /**
   * Runs every waiting check now (a drain, a test), and resolves once they and what follows the checks
   * made so far are done; checks that arrive before then run at once (a busy process's later checks are
   * not waited for).
   */
  async flush(): Promise<void> {
    const release = this.hurry(); // runs the waiting checks, followed
    try {
      await Promise.all([...this.following]);
    } finally {
      release();
    }
  }

  /** The waiting checks, a few sessions at a time (a held session's LIST when its last hold goes). */
  private async runWaiting(): Promise<void> {
    const ready = [...this.waiting.keys()].filter((key) => !this.held.has(key));
    await mapLimit(ready, 16, (key) => this.list(key));
  }

  /** How many checks wait (tests). */
  get pending(): number {
    let n = 0;
    for (const w of this.waiting.values()) n += w.waiters.length;
    return n;
  }

  /**
   * The incarnation of the session at `key`; null when there is no object, UNREAD when there is one whose
   * incarnation cannot be read (not a session object). A HEAD answers when the etag is that of this
   * process's last commit to the key; else a GET. Without `head` (a test double), a GET for a strict check,
   * else a LIST of the key that tells only whether an object is there (UNREAD).
   */
  private async holds(key: string, strict: boolean): Promise<string | null | typeof UNREAD> {
    const proof = this.proofs.get(key);
    if (this.objects.head) {
      const head = await this.objects.head(key);
      if (!head) return null;
      if (proof && head.etag === proof.etag) return proof.incarnation;
    } else if (!strict) {
      // A test double without `head`: whether an object is there, by a LIST of its key, as before.
      return (await listedExists(this.objects, key)) ? UNREAD : null;
    }
    const live = await this.objects.get(key);
    return live ? (incarnationIn(live.body, stateOf) ?? UNREAD) : null;
  }

  private async list(key: string): Promise<void> {
    const w = this.waiting.get(key);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(key);
    try {
      const found = await this.holds(
        key,
        w.waiters.some((x) => x.strict),
      );
      for (const waiter of w.waiters)
        waiter.done(found === UNREAD ? !waiter.strict : verdict(found, waiter.incarnation));
    } catch (err) {
      for (const waiter of w.waiters) waiter.fail(err);
    }
  }
}
