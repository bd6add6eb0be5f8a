import { describeError, type Logger } from '../model/log.js';

/**
 * Work that outlives a response (manifest compaction, later: indexing). On Workers it goes to
 * `waitUntil`; on Node it runs on in the process; on Lambda the entry drains it before returning,
 * because a frozen function would otherwise stall it until the next invocation.
 */
export class Background {
  private readonly running = new Set<Promise<unknown>>();
  constructor(private readonly log: Logger) {}

  /** Keeps `work` alive and logs (never throws) its failure. */
  track(work: Promise<unknown>): void {
    const guarded = work.catch((err) =>
      this.log.warn('background work failed', { error: describeError(err) }),
    );
    this.running.add(guarded);
    void guarded.finally(() => this.running.delete(guarded));
  }

  /** Work that waits on purpose (records lingering to be batched): a drain asks it to go now. */
  private readonly flushers: (() => Promise<void>)[] = [];

  /** Registers a flusher that `drain` calls first. */
  onDrain(flush: () => Promise<void>): void {
    this.flushers.push(flush);
  }

  /** What a drain holds while it runs (work that would wait on purpose goes at once meanwhile). */
  private readonly holds: (() => () => void)[] = [];

  /** Registers a hold: `take` is called when a drain starts, and what it returns when the drain ends. */
  whileDraining(take: () => () => void): void {
    this.holds.push(take);
  }

  /** Resolves when everything tracked so far has settled (lingering work is flushed first). */
  async drain(): Promise<void> {
    const releases = this.holds.map((take) => take());
    try {
      // At least once: lingering work of writes that nobody tracks (no scheduler) goes too.
      do {
        // In registration order: flushing one kind adds work of the next (a session's records, then the
        // index record its listener hands on), which the next flusher sends at once.
        for (const flush of this.flushers) await flush().catch(() => undefined);
        await Promise.all([...this.running]);
      } while (this.running.size > 0);
    } finally {
      for (const release of releases) release();
    }
  }
}
