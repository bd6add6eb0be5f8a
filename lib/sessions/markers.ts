import { randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import { unattended, type Schedule } from '../model/context.js';
import type { ObjectStore } from '../storage/port.js';

/** One write under a standing marker: `ready` settles once the marker is stored; `end` when it is logged. */
export interface MarkedWrite {
  /** The marker's PUT: must have succeeded before the write commits. */
  ready: Promise<unknown>;
  /**
   * The write is over: `logged` when its log record is stored or nothing landed; false when it may have
   * landed without a log record (the marker then stays for the manifest's compactor to heal).
   */
  end(logged: boolean): void;
}

interface Held {
  key: string;
  at: number;
  ready: Promise<unknown>;
  /** Its PUT answered: a write that takes it waits for nothing. */
  stored?: boolean;
  inFlight: number;
  /** A write under it may have landed without its log record: never retired by this process. */
  dirty: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

export interface StandingMarkersOptions {
  now: () => number;
  /**
   * How long an idle marker (every write logged) stays before this process deletes it. 0: delete it in
   * the last write's own background work (Workers, Lambda: a timer may never fire in a frozen runtime).
   */
  idleMs?: number;
  /** A marker older than this takes no new writes (the compactor heals markers older than 15 min). */
  maxAgeMs?: number;
  /**
   * Whether a write takes a marker whose PUT has not yet answered (and waits for it). False on Workers and
   * Lambda: there that PUT is another request's work, and workerd cancels a request that waits on another
   * request's storage work as hung (review s58j); such a write stores a marker of its own.
   */
  shareUnstored?: boolean;
}

/** The write id part of a standing marker's key starts with this (log records never do). */
const STANDING = 's';

/**
 * Standing pending markers (docs/design.md, "A write"): the first write of this process to a session
 * stores an empty marker `m/p/<id>/<at>-s<epoch><n>` before its commit; the writes after it reuse it while
 * it is young, so a warm append commits with one request. Readers check a session whose marker has
 * writes without log records against its object, so a crash between a commit and its log record heals
 * exactly as with one marker per write. Once every write under a marker is logged and it has been idle
 * for `idleMs`, this process deletes it; a marker it could not retire (a crash, a log record that failed)
 * stays until the manifest's compactor, having folded the object's state, deletes it as stale.
 */
export class StandingMarkers {
  private readonly epoch = randomHex(6);
  private seq = 0;
  /** The marker new writes to a session use, per `ns\0id`. */
  private readonly current = new Map<string, Held>();
  /** This process's markers in the bucket that it will delete itself (not spoiled), by key. */
  private readonly byKey = new Map<string, Held>();
  private readonly idleMs: number;
  private readonly maxAgeMs: number;
  /** Markers being stored for writes that may have landed without their log record (`remark`). */
  private readonly remarking = new Set<Promise<void>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly options: StandingMarkersOptions,
  ) {
    // An agent's turns are often seconds apart (a model call between appends): 30 s keeps the marker
    // standing across them, so those appends also commit with one request.
    this.idleMs = options.idleMs ?? 30_000;
    this.maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
  }

  /** Begins a write to `ns/id` under a marker: a held one when young enough, else a new one. */
  begin(ns: string, id: string, schedule: Schedule = unattended): MarkedWrite {
    const slot = ns + '\0' + id;
    let held = this.current.get(slot);
    const unshared = held && !held.stored && this.options.shareUnstored === false;
    if (!held || unshared || this.options.now() - held.at > this.maxAgeMs) {
      held = this.arm(ns, id);
      this.current.set(slot, held);
    }
    const h = held;
    h.inFlight++;
    if (h.timer) clearTimeout(h.timer);
    h.timer = undefined;
    let ended = false;
    return {
      ready: h.ready,
      end: (logged) => {
        if (ended) return;
        ended = true;
        h.inFlight--;
        if (!logged) {
          this.spoil(h);
          schedule(this.remark(ns, id));
        }
        if (h.inFlight === 0 && !h.dirty) this.idle(slot, h, schedule);
      },
    };
  }

  /**
   * The markers of this process with every write under it logged, now. A reader takes this set before it
   * lists the manifest: those markers' log records are in its listing, so it need not check their
   * sessions against the objects (a write logged only after the listing began is checked).
   */
  settledNow(): ReadonlySet<string> {
    const out = new Set<string>();
    for (const [key, h] of this.byKey) if (h.inFlight === 0 && !h.dirty) out.add(key);
    return out;
  }

  /**
   * The markers of this process with a write under it not yet logged, now. A reader takes this set before
   * it lists the manifest too: a LIST is no snapshot (a local folder's walks its names first and checks
   * them after; a paged one reads `m/l/` before `m/p/`), so such a write's log record may land after the
   * LIST passed `m/l/` and its marker go before the LIST reached it. The reader checks the session of
   * every one of these markers it does not find listed against its object.
   */
  unsettledNow(): ReadonlySet<string> {
    const out = new Set<string>();
    for (const [key, h] of this.byKey) if (h.inFlight > 0) out.add(key);
    return out;
  }

  /** Deletes every idle marker now (a process about to stop; tests). */
  async retireIdle(): Promise<void> {
    const idle = [...this.current].filter(([, h]) => h.inFlight === 0 && !h.dirty);
    await Promise.all(idle.map(([slot, h]) => this.retire(slot, h)));
  }

  private arm(ns: string, id: string): Held {
    const at = this.options.now();
    const writeId = `${STANDING}${this.epoch}${(this.seq++).toString(36)}`;
    const key = keys.pending(ns, id, `${String(at).padStart(13, '0')}-${writeId}`);
    const held: Held = { key, at, inFlight: 0, dirty: false, ready: Promise.resolve() };
    held.ready = this.store.put(key, new Uint8Array(0), {
      contentType: 'application/octet-stream',
    });
    held.ready.then(
      () => (held.stored = true),
      () => undefined,
    );
    this.byKey.set(key, held);
    held.ready.catch(() => {
      // Not stored (or unknown): never reuse it. A PUT whose answer was lost leaves a marker that the
      // compactor collects as stale; nothing committed under it.
      if (this.current.get(ns + '\0' + id) === held) this.current.delete(ns + '\0' + id);
      this.spoil(held);
    });
    return held;
  }

  /**
   * A marker of its own for a write that may have landed without its log record, stored after it: the
   * standing one it began under may already be gone, deleted as stale by a compactor whose clock is ahead
   * of this process's (review s54b: with this clock 20 minutes behind, the write was never listed). A
   * compactor that finds this one stale folds the object as it is now, this write included. Best effort:
   * storage that refused the log record may refuse this too.
   */
  private remark(ns: string, id: string): Promise<void> {
    const at = String(this.options.now()).padStart(13, '0');
    const key = keys.pending(ns, id, `${at}-${randomHex(12)}`);
    const put = this.store
      .put(key, new Uint8Array(0), { contentType: 'application/octet-stream' })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.remarking.delete(put));
    this.remarking.add(put);
    return put;
  }

  /** Resolves once the markers stored for writes that may have landed unlogged are (`SessionStore.settled`). */
  async settled(): Promise<void> {
    while (this.remarking.size) await Promise.all(this.remarking);
  }

  /** A marker this process will never delete: the compactor does, once it is stale. */
  private spoil(h: Held): void {
    h.dirty = true;
    this.byKey.delete(h.key);
  }

  private idle(slot: string, h: Held, schedule: Schedule): void {
    if (this.current.get(slot) !== h || this.idleMs <= 0) {
      // Replaced by a younger marker (nothing will write under it again), or no timers here.
      schedule(this.retire(slot, h));
      return;
    }
    h.timer = setTimeout(() => void this.retire(slot, h), this.idleMs);
    (h.timer as { unref?: () => void }).unref?.();
  }

  private async retire(slot: string, h: Held): Promise<void> {
    if (h.inFlight > 0 || h.dirty) return;
    if (this.current.get(slot) === h) this.current.delete(slot);
    if (h.timer) clearTimeout(h.timer);
    try {
      await h.ready;
      await this.store.delete(h.key);
      this.byKey.delete(h.key);
    } catch {
      // Stays in the bucket: readers check the session against its object until the compactor
      // collects it as stale. Nothing is lost, a list costs one more read meanwhile.
      this.spoil(h);
    }
  }
}
