/**
 * Runs tasks one after another per key. Writers of one session in one process wait for each other, so
 * each writes on the cached copy with one PUT instead of losing a compare-and-swap race to its neighbour
 * and reading the session again; other processes still race through If-Match.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` after every earlier task for the same key has settled. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const mine = previous.then(fn, fn);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, settled);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    }
  }
}
