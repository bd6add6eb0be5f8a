import {
  assertSafeKey,
  isSafeKey,
  DEFAULT_PING_DEADLINE_MS,
  isPlatformLimit,
  PreconditionFailedError,
  StorageUnavailableError,
  type ListOptions,
  type ListPage,
  type ObjectStore,
  type PutOptions,
  type StoragePing,
  type StoredObject,
} from './port.js';
import {
  defaultRetryPolicy,
  probe,
  withRetry,
  type AttemptContext,
  type RetryPolicy,
} from './retry.js';

/** The part of the Workers R2 binding this adapter uses (structural, so lib/ needs no Workers types). */
export interface R2BucketLike {
  get(
    key: string,
  ): Promise<{ etag: string; uploaded: Date; arrayBuffer(): Promise<ArrayBuffer> } | null>;
  head(key: string): Promise<{ etag: string } | null>;
  put(
    key: string,
    value: ArrayBuffer | Uint8Array,
    options?: {
      onlyIf?: { etagMatches?: string; etagDoesNotMatch?: string };
      httpMetadata?: { contentType?: string };
    },
  ): Promise<{ etag: string } | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options: {
    prefix?: string;
    cursor?: string;
    limit?: number;
    startAfter?: string;
  }): Promise<{
    objects: { key: string; size: number }[];
    truncated: boolean;
    cursor?: string;
  }>;
}

/**
 * R2 adapter over the Workers binding (`BUCKET`). A refused conditional put comes back as null from
 * the binding; If-Match on a missing key is refused here too, as S3 does.
 */
export class R2Store implements ObjectStore {
  readonly name = 'r2:BUCKET';
  private readonly retry: RetryPolicy;
  /**
   * `retry` defaults to defaultRetryPolicy: up to 4 attempts of at most 3 s each within 8 s in all. The
   * binding takes no abort signal, so an attempt that runs out of time is abandoned, not cancelled.
   */
  constructor(
    private readonly bucket: R2BucketLike,
    options: { retry?: RetryPolicy } = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  async get(key: string): Promise<StoredObject | null> {
    assertSafeKey(key);
    return this.attempt(`GET ${key}`, async () => {
      const found = await this.bucket.get(key);
      if (!found) return null;
      const body = new Uint8Array(await found.arrayBuffer());
      return { body, etag: found.etag, age: Date.now() - found.uploaded.getTime() };
    });
  }

  async head(key: string): Promise<{ etag: string } | null> {
    assertSafeKey(key);
    return this.attempt(`HEAD ${key}`, async () => {
      const found = await this.bucket.head(key);
      return found ? { etag: found.etag } : null;
    });
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    assertSafeKey(key);
    const onlyIf =
      options.ifMatch !== undefined
        ? { etagMatches: options.ifMatch }
        : options.ifNoneMatch === '*'
          ? { etagDoesNotMatch: '*' }
          : undefined;
    return this.attempt(
      `PUT ${key}`,
      async (ctx) => {
        // Big bodies get one more second per MiB beyond the first, as on S3.
        ctx.extend((Math.max(0, body.byteLength - 1024 * 1024) / (1024 * 1024)) * 1000);
        const written = await this.bucket.put(key, body, {
          ...(onlyIf ? { onlyIf } : {}),
          httpMetadata: { contentType: options.contentType ?? 'application/json' },
        });
        if (!written) throw new PreconditionFailedError(key);
        return { etag: written.etag };
      },
      true,
    );
  }

  async delete(keys: string | string[]): Promise<void> {
    const all = Array.isArray(keys) ? keys : [keys];
    all.forEach(assertSafeKey);
    for (let i = 0; i < all.length; i += 1000) {
      const batch = all.slice(i, i + 1000);
      await this.attempt(`DELETE ${batch.length} keys`, () => this.bucket.delete(batch), true);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(options.limit ?? 1000, 1000);
    let out = await this.attempt(`LIST ${prefix}`, () =>
      this.bucket.list({
        prefix,
        limit,
        ...(options.cursor ? { startAfter: options.cursor } : {}),
      }),
    );
    // An empty page marked truncated is not the end: the binding's own cursor goes on from it.
    for (let pages = 1; out.truncated && out.objects.length === 0; pages++) {
      const cursor = out.cursor;
      if (!cursor || pages >= 100)
        throw new StorageUnavailableError(
          `LIST ${prefix}: ${this.name} answered empty pages marked truncated`,
        );
      out = await this.attempt(`LIST ${prefix}`, () => this.bucket.list({ prefix, limit, cursor }));
    }
    const listed = out.objects.map((o) => ({ key: o.key, size: o.size }));
    // The last key listed is the cursor, kept or not; keys no call could take are left out (isSafeKey).
    return {
      objects: listed.filter((o) => isSafeKey(o.key)),
      ...(out.truncated ? { cursor: listed[listed.length - 1]!.key } : {}),
    };
  }

  /** A list of at most one key, one attempt, given up at the deadline. */
  async ping(deadlineMs = DEFAULT_PING_DEADLINE_MS): Promise<StoragePing> {
    return probe(
      deadlineMs,
      () => this.bucket.list({ limit: 1 }),
      (err) => ({
        reason: 'error',
        error: err instanceof Error && /^[A-Za-z]{1,64}$/.test(err.name) ? err.name : 'error',
      }),
    );
  }

  private attempt<T>(
    what: string,
    op: (ctx: AttemptContext) => Promise<T>,
    write = false,
  ): Promise<T> {
    // The binding throws on transient internal errors; preconditions come back as null, not errors.
    // Cloudflare's limit of operations per invocation is not retried: every attempt would meet it.
    return withRetry(
      what,
      op,
      (err) =>
        !PreconditionFailedError.is(err) && !(err instanceof TypeError) && !isPlatformLimit(err),
      this.retry,
      undefined,
      { write },
    ).catch((err: unknown) => {
      if (isPlatformLimit(err) && !StorageUnavailableError.is(err))
        throw new StorageUnavailableError(`${what}: ${(err as Error).message}`, err);
      throw err;
    });
  }
}
