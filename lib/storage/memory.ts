import {
  assertSafeKey,
  compareKeys,
  PreconditionFailedError,
  type ListOptions,
  type ListPage,
  type ObjectStore,
  type PutOptions,
  type StoragePing,
  sortKeys,
  type StoredObject,
} from './port.js';

/** In-memory adapter, for unit tests of code above the port. Not a proof that storage works. */
export class MemoryStore implements ObjectStore {
  readonly name = 'memory';
  private readonly objects = new Map<string, { body: Uint8Array; etag: string; at: number }>();
  private counter = 0;
  private readonly now: () => number;

  /** `now`: the store's own clock, which objects' `age` is read by (default Date.now). */
  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  async get(key: string): Promise<StoredObject | null> {
    assertSafeKey(key);
    const found = this.objects.get(key);
    return found
      ? { body: found.body.slice(), etag: found.etag, age: this.now() - found.at }
      : null;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    assertSafeKey(key);
    const current = this.objects.get(key);
    if (options.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
    if (options.ifMatch !== undefined && current?.etag !== options.ifMatch)
      throw new PreconditionFailedError(key);
    const etag = `m${++this.counter}`;
    this.objects.set(key, { body: body.slice(), etag, at: this.now() });
    return { etag };
  }

  async head(key: string): Promise<{ etag: string } | null> {
    assertSafeKey(key);
    const found = this.objects.get(key);
    return found ? { etag: found.etag } : null;
  }

  async delete(keys: string | string[]): Promise<void> {
    for (const key of Array.isArray(keys) ? keys : [keys]) {
      assertSafeKey(key);
      this.objects.delete(key);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(options.limit ?? 1000, 1000);
    const cursor = options.cursor;
    const keys = sortKeys(
      [...this.objects.keys()].filter(
        (k) => k.startsWith(prefix) && (!cursor || compareKeys(k, cursor) > 0),
      ),
    );
    const page = keys.slice(0, limit);
    return {
      objects: page.map((key) => ({ key, size: this.objects.get(key)!.body.byteLength })),
      ...(keys.length > limit ? { cursor: page[page.length - 1]! } : {}),
    };
  }

  /** Always answers at once: there is nothing to reach. */
  async ping(_deadlineMs?: number): Promise<StoragePing> {
    return { ok: true, latencyMs: 0 };
  }
}
