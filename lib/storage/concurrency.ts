/**
 * Maps with at most `limit` calls in flight, keeping order. When a call fails, no further item is taken,
 * and it rejects with that (the first) failure once the calls in flight have settled: as with
 * `settleAll`, nothing is still on its way when it answers.
 */
export async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!);
      } catch (err) {
        failure ??= { err };
      }
    }
  });
  await Promise.all(workers);
  if (failure) throw failure.err;
  return out;
}

/**
 * Resolves once every promise has settled, and rejects then with the first failure: unlike
 * `Promise.all`, nothing is still on its way when it answers (a caller that cleans up after a failure
 * finds every write landed or failed).
 */
export async function settleAll(promises: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((p) => p.status === 'rejected');
  if (failed) throw failed.reason;
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

/**
 * Runs `work` as the only run of `flight` for `key`, after the run in flight (if any). Unlike `run`, it
 * never joins another caller's run: it waits for it, then runs its own. A run asked for meanwhile waits
 * for this one but never inherits its failure.
 */
export async function runExclusive(
  flight: SingleFlight<void>,
  key: string,
  work: () => Promise<void>,
): Promise<void> {
  for (;;) {
    const running = flight.current(key);
    if (running) {
      await running.catch(() => undefined);
      continue;
    }
    let mine: Promise<void> | undefined;
    const run = flight.run(key, () => {
      mine = work();
      return mine.catch(() => undefined);
    });
    if (mine) return mine;
    await run.catch(() => undefined);
  }
}

/**
 * Folds calls per key into batches: items added while a batch of the key waits join it, and the batches
 * of one key run one after another (a cleanup's many deletes become a few purges, not one each).
 */
/** How many times a Batcher with `carryFailed` runs a failed batch again on its own (1 s to about 2 min). */
const RETRIES = 7;

export class Batcher<T> {
  private readonly waiting = new Map<
    string,
    { items: Set<T>; done: Promise<void>; go: () => void; flushed: boolean }
  >();
  private readonly chains = new Map<string, Promise<void>>();
  /** With `carryFailed`: the items of the key's batches that failed, for its next batch. */
  private readonly failed = new Map<string, Set<T>>();
  /** With `carryFailed`: per key, the retries made since its last batch that ran, and the one waiting. */
  private readonly retries = new Map<
    string,
    { n: number; timer?: ReturnType<typeof setTimeout> }
  >();

  /**
   * `lingerMs`: how long a batch waits for more items before it runs (when none of its key is running);
   * `flush` ends the wait at once, and so does an `add` that leaves a waiting batch with `fullAt` items.
   * `carryFailed`: the items of a batch that fails join the key's next batch (a purge that failed is run
   * again with the next one), until one that holds them succeeds; when no other batch of the key comes,
   * they run again on their own after `retryMs`, doubling, RETRIES times at most (a purge that failed
   * while storage was down waited for the namespace's next delete: in a quiet namespace, for ever).
   */
  constructor(
    private readonly runBatch: (key: string, items: Set<T>) => Promise<void>,
    private readonly lingerMs = 0,
    private readonly fullAt = Infinity,
    private readonly carryFailed = false,
    private readonly retryMs = 1000,
  ) {}

  /** Adds items to the key's waiting batch (or a new one); resolves when that batch has run. */
  add(key: string, items: Iterable<T>): Promise<void> {
    const carried = this.failed.get(key);
    if (carried) {
      this.failed.delete(key);
      items = [...items, ...carried];
    }
    const waiting = this.waiting.get(key);
    if (waiting) {
      for (const item of items) waiting.items.add(item);
      if (waiting.items.size >= this.fullAt) {
        waiting.flushed = true; // full: it runs as soon as the key's batch before it has
        waiting.go();
      }
      return waiting.done;
    }
    let go = () => {};
    const flushedEarly = new Promise<void>((r) => (go = r));
    const batch = { items: new Set(items), done: Promise.resolve(), go, flushed: false };
    const before = this.chains.get(key) ?? Promise.resolve();
    batch.done = before
      .catch(() => undefined)
      .then(() => this.linger(batch.flushed, flushedEarly))
      .then(() => {
        this.waiting.delete(key); // later calls form the next batch
        return this.runBatch(key, batch.items).then(
          () => void (this.carryFailed && !this.failed.has(key) && this.retries.delete(key)),
          (err: unknown) => {
            if (this.carryFailed) {
              // Into the key's batch already waiting (a delete that came while this one ran), else the next.
              const next = this.waiting.get(key)?.items ?? this.failed.get(key) ?? new Set<T>();
              for (const item of batch.items) next.add(item);
              if (!this.waiting.has(key)) {
                this.failed.set(key, next);
                this.retryLater(key);
              }
            }
            throw err;
          },
        );
      });
    this.waiting.set(key, batch);
    this.chains.set(key, batch.done);
    void batch.done
      .catch(() => undefined)
      .then(() => {
        if (this.chains.get(key) === batch.done) this.chains.delete(key);
      });
    return batch.done;
  }

  /** The failed items of `key` run again on their own, unless another batch of the key takes them first. */
  private retryLater(key: string): void {
    const state = this.retries.get(key) ?? { n: 0 };
    if (state.timer || this.retryMs <= 0 || state.n >= RETRIES) return;
    state.timer = setTimeout(
      () => {
        delete state.timer;
        if (this.failed.has(key)) void this.add(key, []).catch(() => undefined);
      },
      this.retryMs * 2 ** state.n,
    );
    state.n++;
    // A process with nothing else to do does not wait for it (a CLI, a test's end).
    (state.timer as { unref?: () => void }).unref?.();
    this.retries.set(key, state);
  }

  /** Runs the waiting batch of `key` (of every key without one) without lingering; resolves when run. */
  async flush(key?: string): Promise<void> {
    const keys = key === undefined ? [...this.chains.keys()] : [key];
    for (const k of keys) {
      const waiting = this.waiting.get(k);
      if (waiting) {
        waiting.flushed = true;
        waiting.go();
      }
    }
    await Promise.all(keys.map((k) => this.chains.get(k)?.catch(() => undefined)));
  }

  private linger(flushed: boolean, early: Promise<void>): Promise<unknown> | undefined {
    if (this.lingerMs <= 0 || flushed) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const wait = new Promise<void>((r) => (timer = setTimeout(r, this.lingerMs)));
    return Promise.race([wait, early]).finally(() => clearTimeout(timer));
  }
}

/** Work still running per key, so that a reader can wait for what this process is writing. */
export class PendingWork {
  private readonly byKey = new Map<string, Set<Promise<unknown>>>();

  /** Tracks `work` under `key` until it settles; returns it. */
  add<T>(key: string, work: Promise<T>): Promise<T> {
    const running = this.byKey.get(key) ?? new Set<Promise<unknown>>();
    this.byKey.set(key, running);
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    running.add(settled);
    void settled.then(() => {
      running.delete(settled);
      if (running.size === 0 && this.byKey.get(key) === running) this.byKey.delete(key);
    });
    return work;
  }

  /** True when work under `key` (any key) is running. */
  has(key?: string): boolean {
    return key === undefined ? this.byKey.size > 0 : this.byKey.has(key);
  }

  /** Resolves when the work tracked so far under `key` (every key) has settled. */
  async settled(key?: string): Promise<void> {
    const sets = key === undefined ? [...this.byKey.values()] : [this.byKey.get(key) ?? []];
    await Promise.all(sets.flatMap((s) => [...s]));
  }
}
