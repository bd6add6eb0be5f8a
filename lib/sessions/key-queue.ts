interface Waiting<R, T> {
  req: R;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

/**
 * Runs requests one group after another per key (a group commit). Writers of one session in one process
 * wait for each other instead of losing compare-and-swap races to their neighbours, and the requests that
 * queue up behind a running write go out together as the next one: `joinable` ones share a group (at most
 * `maxGroup`), any other request runs in a group of its own, in arrival order. Other processes still race
 * through If-Match.
 */
export class GroupQueue<R, T> {
  private readonly slots = new Map<string, Waiting<R, T>[][]>();

  constructor(
    private readonly run: (group: R[]) => Promise<PromiseSettledResult<T>[]>,
    private readonly joinable: (req: R) => boolean,
    private readonly maxGroup = 64,
    /** False: every request runs alone, at once, in its caller's own work (no queue). */
    private readonly grouped = true,
  ) {}

  /** Runs `req` after every earlier group for the same key, in a group with the requests queued beside it. */
  submit(key: string, req: R): Promise<T> {
    if (!this.grouped)
      return this.run([req]).then(([r]) =>
        r!.status === 'fulfilled' ? r!.value : Promise.reject(r!.reason),
      );
    return new Promise<T>((resolve, reject) => {
      const entry = { req, resolve, reject };
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
    });
  }

  private async drain(key: string, first: Waiting<R, T>[]): Promise<void> {
    for (let group: Waiting<R, T>[] | undefined = first; group;) {
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
      group = queued.shift();
      if (!group) this.slots.delete(key);
    }
  }
}
