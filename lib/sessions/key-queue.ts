interface Waiting<R, T> {
  req: R;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  /** Refuses it once it has waited `GroupQueueOptions.waitMs` for its group to start; cleared when it starts. */
  timer?: ReturnType<typeof setTimeout>;
}

/** How a GroupQueue groups its requests and bounds their wait in the queue. */
export interface GroupQueueOptions {
  /** The most requests in one group. Default 64. */
  maxGroup?: number;
  /** False: every request runs alone, at once, in its caller's own work (no queue). Default true. */
  grouped?: boolean;
  /**
   * The longest a request waits for its own group to start; it is then refused (`refuse('waited')`).
   * Unset: no bound.
   */
  waitMs?: number;
  /**
   * True when a group's failure shows storage not answering: every group queued behind it then is refused
   * at once (`refuse('stalled')`) rather than sent to the same silent storage, one storage deadline each.
   */
  stalled?: (reason: unknown) => boolean;
  /** The error a refused request gets. Its own work never started, so nothing of it was done. */
  refuse?: (why: 'waited' | 'stalled') => unknown;
}

/**
 * Runs requests one group after another per key (a group commit). Writers of one session in one process
 * wait for each other instead of losing compare-and-swap races to their neighbours, and the requests that
 * queue up behind a running write go out together as the next one: `joinable` ones share a group (at most
 * `maxGroup`), any other request runs in a group of its own, in arrival order. Other processes still race
 * through If-Match. A request still queued is refused when its wait passes `waitMs`, or when the group
 * before it fails as `stalled`; a request whose group started is always answered by its group's run.
 */
class Grouped<R, T> {
  private readonly slots = new Map<string, Waiting<R, T>[][]>();
  private readonly maxGroup: number;
  private readonly grouped: boolean;

  constructor(
    private readonly run: (group: R[]) => Promise<PromiseSettledResult<T>[]>,
    private readonly joinable: (req: R) => boolean,
    private readonly options: GroupQueueOptions = {},
  ) {
    this.maxGroup = options.maxGroup ?? 64;
    this.grouped = options.grouped ?? true;
  }

  /** Runs `req` after every earlier group for the same key, in a group with the requests queued beside it. */
  submit(key: string, req: R): Promise<T> {
    if (!this.grouped)
      return this.run([req]).then(([r]) =>
        r!.status === 'fulfilled' ? r!.value : Promise.reject(r!.reason),
      );
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting<R, T> = { req, resolve, reject };
      const queued = this.slots.get(key);
      if (!queued) {
        this.slots.set(key, []);
        void this.drain(key, [entry]);
        return;
      }
      const last = queued[queued.length - 1];
      if (last && this.joinable(req) && this.joinable(last[0]!.req) && last.length < this.maxGroup)
        last.push(entry);
      else queued.push([entry]);
      const { waitMs } = this.options;
      if (waitMs !== undefined) entry.timer = setTimeout(() => this.expire(key, entry), waitMs);
    });
  }

  private async drain(key: string, first: Waiting<R, T>[]): Promise<void> {
    for (let group: Waiting<R, T>[] | undefined = first; group;) {
      // Started: from here only its run answers it (it may have written).
      for (const w of group) clearTimeout(w.timer);
      let results: PromiseSettledResult<T>[];
      try {
        results = await this.run(group.map((w) => w.req));
      } catch (err) {
        results = group.map(() => ({ status: 'rejected', reason: err }));
      }
      // `run` answers every request of its group, in order.
      group.forEach((w, i) => {
        const r = results[i]!;
        if (r.status === 'fulfilled') w.resolve(r.value);
        else w.reject(r.reason);
      });
      const queued = this.slots.get(key)!;
      const { stalled } = this.options;
      if (stalled && results.some((r) => r.status === 'rejected' && stalled(r.reason)))
        for (const w of queued.splice(0).flat()) this.refuse(w, 'stalled');
      group = queued.shift();
      if (!group) this.slots.delete(key);
    }
  }

  /** Refuses `entry` when it is still queued under `key` (its group has not started). */
  private expire(key: string, entry: Waiting<R, T>): void {
    const queued = this.slots.get(key);
    const at = queued?.findIndex((g) => g.includes(entry)) ?? -1;
    if (at < 0) return;
    const group = queued![at]!;
    group.splice(group.indexOf(entry), 1);
    if (group.length === 0) queued!.splice(at, 1);
    this.refuse(entry, 'waited');
  }

  private refuse(entry: Waiting<R, T>, why: 'waited' | 'stalled'): void {
    clearTimeout(entry.timer);
    entry.reject(this.options.refuse?.(why) ?? new Error(`not started (${why})`));
  }
}

declare global {
  /** True in the Workers bundles (scripts/build.ts defines it): code only long-lived runtimes run is left out. */
  var SATCHEL_SHORT_LIVED: true | undefined;
}

/** A short-lived runtime's queue: none (group commit is off there, `grouped: false`), each request runs alone. */
class Alone<R, T> {
  constructor(private readonly run: (group: R[]) => Promise<PromiseSettledResult<T>[]>) {}

  /** Runs `req` alone, at once. */
  async submit(_key: string, req: R): Promise<T> {
    const [r] = await this.run([req]);
    if (r!.status === 'rejected') throw r!.reason;
    return r!.value;
  }
}

/**
 * Runs requests one group after another per key (Grouped); in a Workers bundle, where group commit is off, each
 * alone (Alone: the queue's code is left out of the bundle, whose size has a budget).
 */
export const GroupQueue = (globalThis.SATCHEL_SHORT_LIVED ? Alone : Grouped) as typeof Grouped;
export type GroupQueue<R, T> = Grouped<R, T>;
