/** Maps with at most `limit` calls in flight, keeping order. */
export async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}

/**
 * At most one run of `work` per key at a time: a caller that arrives while one runs shares its promise
 * (compaction of one namespace, loading one index).
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  /** Runs `work` unless a run for `key` is in flight, in which case that run's promise is returned. */
  run(key: string, work: () => Promise<T>): Promise<T> {
    const had = this.running.get(key);
    if (had) return had;
    const mine = work().finally(() => {
      if (this.running.get(key) === mine) this.running.delete(key);
    });
    this.running.set(key, mine);
    return mine;
  }

  /** The run in flight for `key`, if any. */
  current(key: string): Promise<T> | undefined {
    return this.running.get(key);
  }
}
