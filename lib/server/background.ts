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

  /** Resolves when everything tracked so far has settled. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
