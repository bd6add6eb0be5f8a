import type {
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoragePing,
  StoredObject,
} from './port.js';

/** Request and byte counts of one store, by operation. */
export interface StoreCounts {
  get: number;
  put: number;
  delete: number;
  list: number;
  /** Existence checks (`head`: S3 HEAD, R2 head). */
  head: number;
  bytesRead: number;
  bytesWritten: number;
  /** Bytes written per key class (`sessions`, `m/l`, `m/p`, `m/b`, ...), for the manifest's overhead. */
  writtenByKind: Record<string, number>;
  putsByKind: Record<string, number>;
  getsByKind: Record<string, number>;
}

/** Wraps a store and counts what passes through it (benchmarks, and the health of the manifest design). */
export class CountingStore implements ObjectStore {
  readonly name: string;
  counts: StoreCounts = emptyCounts();

  /** The inner store's health probe, when it has one (not counted: it is not traffic of the design). */
  readonly ping?: (deadlineMs?: number) => Promise<StoragePing>;

  constructor(private readonly inner: ObjectStore) {
    this.name = inner.name;
    if (inner.ping) this.ping = (deadlineMs) => inner.ping!(deadlineMs);
  }

  /** Returns the counts so far and starts again from zero. */
  reset(): StoreCounts {
    const out = this.counts;
    this.counts = emptyCounts();
    return out;
  }

  async get(key: string): Promise<StoredObject | null> {
    this.counts.get++;
    const kind = kindOf(key);
    this.counts.getsByKind[kind] = (this.counts.getsByKind[kind] ?? 0) + 1;
    const out = await this.inner.get(key);
    if (out) this.counts.bytesRead += out.body.byteLength;
    return out;
  }

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    this.counts.put++;
    this.counts.bytesWritten += body.byteLength;
    const kind = kindOf(key);
    this.counts.writtenByKind[kind] = (this.counts.writtenByKind[kind] ?? 0) + body.byteLength;
    this.counts.putsByKind[kind] = (this.counts.putsByKind[kind] ?? 0) + 1;
    return this.inner.put(key, body, options);
  }

  async delete(keys: string | string[]): Promise<void> {
    this.counts.delete++;
    return this.inner.delete(keys);
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.counts.list++;
    return this.inner.list(prefix, options);
  }

  /** The inner store's HEAD when it has one (counted as a HEAD), else a GET (counted as a GET). */
  async head(key: string): Promise<{ etag: string } | null> {
    if (!this.inner.head) {
      const found = await this.get(key);
      return found ? { etag: found.etag } : null;
    }
    this.counts.head++;
    return this.inner.head(key);
  }
}

function emptyCounts(): StoreCounts {
  return {
    get: 0,
    put: 0,
    delete: 0,
    list: 0,
    head: 0,
    bytesRead: 0,
    bytesWritten: 0,
    writtenByKind: {},
    putsByKind: {},
    getsByKind: {},
  };
}

/** `ns/<ns>/sessions/x.json` → `sessions`; `ns/<ns>/m/l/...` → `m/l`; `ns/<ns>/x/d/...` → `x/d`. */
function kindOf(key: string): string {
  const parts = key.split('/');
  if (parts[0] !== 'ns' || parts.length < 4) return 'other';
  return parts[2] === 'm' || parts[2] === 'x' ? `${parts[2]}/${parts[3]}` : parts[2]!;
}
