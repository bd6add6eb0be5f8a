import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getEndpointFromInstructions } from '@smithy/core/endpoints';
import { unavailable, type SatchelError } from '../model/errors.js';
import {
  assertSafeKey,
  isPlatformLimit,
  isSafeKey,
  DEFAULT_PING_DEADLINE_MS,
  PreconditionFailedError,
  StorageUnavailableError,
  type ListOptions,
  type ListPage,
  type ObjectStore,
  type PutOptions,
  type StoragePing,
  type StoredObject,
  utf8Length,
} from './port.js';
import {
  defaultRetryPolicy,
  probe,
  withRetry,
  type AttemptContext,
  type RetryPolicy,
} from './retry.js';

/**
 * How long the adapter waits for S3 before it gives up. With the server paused or unreachable, every call
 * fails with StorageUnavailableError within `deadlineMs` (plus at most one backoff), so the HTTP layer can
 * answer 503 within 10 s.
 */
export interface S3Timeouts {
  /** Setting up the TCP (and TLS) connection, per attempt. Default 2000 ms. */
  connectMs?: number;
  /**
   * One attempt: from sending the request to the last byte of the answer (bodies up to 1 MiB), and the
   * longest silence tolerated on an open connection. Default 3000 ms.
   */
  requestMs?: number;
  /** All attempts of one call, with the waits between them; then StorageUnavailableError. Default 8000 ms. */
  deadlineMs?: number;
  /**
   * The slowest transfer tolerated for big bodies: an attempt (and the deadline) get one second more per
   * this many bytes beyond the first MiB (a GET's as they arrive, never for the length it claims), so a
   * 32 MiB session on a slow link is not cut off, and a body that trickles slower is. Default 1 MiB/s.
   */
  minBytesPerSecond?: number;
}

/** The defaults of S3Timeouts. */
export const DEFAULT_S3_TIMEOUTS: Required<S3Timeouts> = {
  connectMs: 2000,
  requestMs: 3000,
  deadlineMs: 8000,
  minBytesPerSecond: 1024 * 1024,
};

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket (`S3_PREFIX`), e.g. `satchel/`. */
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** With temporary credentials (STS, a Lambda execution role): sent as X-Amz-Security-Token. */
  sessionToken?: string;
  /** Unconditional bodies at or above this size go through a multipart upload (lib-storage). */
  multipartThreshold?: number;
  /** Attempts and backoff; its deadline and attempt timeout are taken from `timeouts` when set there. */
  retry?: RetryPolicy;
  /** Connect, attempt and total timeouts (defaults in DEFAULT_S3_TIMEOUTS). */
  timeouts?: S3Timeouts;
  /** A ready client, e.g. one with custom middleware; the connection options above are then ignored. */
  client?: S3Client;
  /**
   * Sends the GET, HEAD, PUT and DELETE of single objects instead of the SDK, to the endpoint the client
   * resolves and signed with its credentials: `nodeWire` (lib/storage/s3-node.ts) on Node, where the
   * SDK's own cost per request is most of an append's time; listings too. Batch deletes and multipart
   * uploads always go through the SDK.
   */
  wire?: (target: S3WireTarget) => S3Wire;
}

/** What a wire needs to address and sign requests the way the store's S3 client would. */
export interface S3WireTarget {
  /**
   * Where the bucket's objects are (the URL a key's encoded path is appended to) and the region to sign
   * for: the endpoint the client resolves for the bucket, through the SDK's own rules (a configured
   * endpoint, path or virtual-hosted style, `AWS_ENDPOINT_URL_S3`, FIPS, dual-stack, other partitions).
   */
  locate: () => Promise<{ url: URL; signingRegion: string }>;
  /** The client's credential provider (memoized and refreshed by the SDK). */
  credentials: () => Promise<{
    accessKeyId: string;
    secretAccessKey: string;
    sessionToken?: string;
  }>;
  connectMs: number;
  /** The longest silence on an open connection. */
  requestMs: number;
  /** The client's clock correction, shared: a wire that finds the server's clock far off sets it. */
  clock: { offset: number };
  /** The store's S3 client: wires of stores on one client share one pool of connections, as the SDK does. */
  pool: object;
}

export interface S3WireRequest {
  method: 'GET' | 'HEAD' | 'PUT' | 'DELETE';
  /** The object's key in the bucket (the store's prefix included), unencoded; '' for the bucket itself. */
  key: string;
  /** Query parameters (a listing's), unencoded. */
  query?: Record<string, string>;
  headers: Record<string, string>;
  body?: Uint8Array;
  signal: AbortSignal;
  /** Called as the answer's body arrives, with the size of each piece. */
  onData?: (bytes: number) => void;
  /** Called when the answer's headers arrive, with the body's length they declare (when they do). */
  onLength?: (bytes: number) => void;
}

export interface S3WireResponse {
  status: number;
  header(name: string): string | undefined;
  body: Uint8Array;
}

export type S3Wire = (req: S3WireRequest) => Promise<S3WireResponse>;

const DEFAULT_MULTIPART_THRESHOLD = 16 * 1024 * 1024;
/**
 * The largest body a GET accepts: the largest SATCHEL_MAX_SESSION_BYTES allowed (2 GiB), far above any
 * object Satchel writes. An answer that claims more, or sends more, fails at once (503), so no server can
 * hold a GET (and its growing buffer) longer than this many bytes take at the slowest tolerated rate.
 */
const MAX_DECLARED_BYTES = 2 ** 31;
/** The longest ListObjectsV2 answer taken (16 MiB: a page of 1,000 keys of 1,024 bytes is about 1.4 MB). */
const MAX_LIST_BYTES = 2 ** 24;

/**
 * S3-compatible adapter (AWS S3, R2's S3 API, Ceph radosgw, MinIO) over @aws-sdk/client-s3.
 *
 * Preconditions use PutObject's If-Match / If-None-Match. Etags are kept unquoted inside Satchel,
 * because radosgw rejects a quoted If-Match even when it is current. A 412, a 404 NoSuchKey on an
 * If-Match write (AWS's answer to If-Match on a missing key; radosgw answers 412) both mean
 * PreconditionFailedError; AWS's 409 ConditionalRequestConflict (another write or delete of the key under
 * way) is retried, as AWS asks. A 404 with another code
 * (NoSuchBucket), and any 404 to a create-only write, is never a precondition failure: it is
 * StorageUnavailableError.
 * Conditional writes are always a single PUT: a multipart completion's preconditions are not honoured by
 * every backend, and radosgw returns no etag for it.
 */
export class S3Store implements ObjectStore {
  readonly name: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly multipartThreshold: number;
  private readonly retry: RetryPolicy;
  private readonly timeouts: Required<S3Timeouts>;
  private readonly wire: S3Wire | undefined;
  /** Where the wire sends requests; null when the bucket's endpoint asks for a signing only the SDK does. */
  private location: Promise<WireLocation | null> | undefined;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = normalPrefix(options.prefix);
    this.name = `s3:${options.bucket}${this.prefix ? '/' + this.prefix : ''}`;
    this.multipartThreshold = options.multipartThreshold ?? DEFAULT_MULTIPART_THRESHOLD;
    this.timeouts = { ...DEFAULT_S3_TIMEOUTS, ...definedOnly(options.timeouts ?? {}) };
    const base = options.retry ?? defaultRetryPolicy;
    this.retry = {
      ...base,
      deadlineMs: options.timeouts?.deadlineMs ?? base.deadlineMs ?? this.timeouts.deadlineMs,
      attemptTimeoutMs:
        options.timeouts?.requestMs ?? base.attemptTimeoutMs ?? this.timeouts.requestMs,
    };
    this.client =
      options.client ??
      new S3Client({
        region: options.region ?? 'us-east-1',
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        forcePathStyle: options.forcePathStyle ?? false,
        ...(options.accessKeyId && options.secretAccessKey
          ? {
              credentials: {
                accessKeyId: options.accessKeyId,
                secretAccessKey: options.secretAccessKey,
                ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
              },
            }
          : {}),
        // Retries are ours (withRetry), so that they are bounded the same way on every adapter.
        maxAttempts: 1,
        // Options for whichever handler the platform uses (Node's http, or fetch in workerd): a bounded
        // connect, and an idle socket (no byte either way for requestMs) fails the attempt. The attempt's
        // total time is bounded by withRetry, which aborts the request through its signal.
        requestHandler: {
          connectionTimeout: this.timeouts.connectMs,
          socketTimeout: this.timeouts.requestMs,
        },
        // Older S3-compatible servers reject the SDK's newer default checksums.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    const config = this.client.config;
    this.wire = options.wire?.({
      locate: async () => {
        const at = await this.locate();
        if (!at) throw new Error('the wire cannot sign for this bucket'); // never asked then (wired)
        return at;
      },
      credentials: () => config.credentials(),
      connectMs: this.timeouts.connectMs,
      requestMs: this.timeouts.requestMs,
      pool: this.client,
      clock: {
        get offset() {
          return config.systemClockOffset ?? 0;
        },
        set offset(ms: number) {
          config.systemClockOffset = ms;
        },
      },
    });
  }

  /** The bucket's wire location, resolved once (again after a failure). */
  private locate(): Promise<WireLocation | null> {
    this.location ??= wireLocation(this.client, this.bucket).catch((err: unknown) => {
      this.location = undefined;
      throw err;
    });
    return this.location;
  }

  /** The wire when this store's requests go over it: it has one, and it can sign for the bucket. */
  private async wired(): Promise<S3Wire | undefined> {
    return this.wire && (await this.locate()) ? this.wire : undefined;
  }

  private full(key: string): string {
    assertSafeKey(key);
    // S3's limit of 1024 bytes is the whole key's, the store's prefix included.
    if (utf8Length(this.prefix + key) > 1024)
      throw new Error(
        `unsafe storage key (over 1024 bytes with the prefix): ${JSON.stringify(key)}`,
      );
    return this.prefix + key;
  }

  async get(key: string): Promise<StoredObject | null> {
    const Key = this.full(key);
    return this.attempt(`GET ${key}`, (ctx) => this.read(ctx, key, Key));
  }

  /** One attempt at a GET of `Key` (`key` with the store's prefix): the object, or null when it is missing. */
  private async read(ctx: AttemptContext, key: string, Key: string): Promise<StoredObject | null> {
    const wire = await this.wired();
    if (wire) {
      const res = await wire({
        method: 'GET',
        key: Key,
        headers: {},
        signal: ctx.signal,
        onLength: (declared) => this.declared(ctx, key, declared),
        onData: this.progress(ctx, key),
      });
      if (res.status === 404 && isMissingKey(wireError(res))) return null;
      const { body } = succeeded(res);
      const age = ageOf(res.header('date'), res.header('last-modified'));
      return { body, etag: unquote(res.header('etag') ?? ''), ...age };
    }
    try {
      const command = new GetObjectCommand({ Bucket: this.bucket, Key });
      let date: string | undefined;
      // The answer's Date, which the SDK's output leaves out.
      command.middlewareStack.add(
        (next) => async (args) => {
          const result = await next(args);
          date = (result.response as { headers?: Record<string, string> }).headers?.date;
          return result;
        },
        { step: 'deserialize' },
      );
      const out = await this.client.send(command, { abortSignal: ctx.signal });
      const body = out.Body!;
      // A Node stream: time is granted as its bytes arrive. Another (fetch's): by its declared length.
      const stream = body as {
        on?: (event: 'data', chunk: (bytes: Uint8Array) => void) => unknown;
        destroy?: () => void;
      };
      if (out.ContentLength !== undefined && out.ContentLength > MAX_DECLARED_BYTES) {
        stream.destroy?.();
        throw tooLarge(key, out.ContentLength);
      }
      if (typeof stream.on === 'function') {
        const arrived = this.progress(ctx, key);
        stream.on('data', (chunk) => arrived(chunk.byteLength));
      } else ctx.extend(this.transferAllowance(out.ContentLength ?? 0));
      const bytes = await body.transformToByteArray();
      return { body: bytes, etag: unquote(out.ETag ?? ''), ...ageOf(date, out.LastModified) };
    } catch (err) {
      if (isMissingKey(err)) return null;
      throw err;
    }
  }

  async head(key: string): Promise<{ etag: string } | null> {
    const Key = this.full(key);
    return this.attempt(`HEAD ${key}`, async (ctx) => {
      try {
        return await this.headOnce(ctx, Key);
      } catch (err) {
        // A HEAD's answer has no body, so a 400 has no code to tell an expired session token from a
        // wrong region (review s64g): the same key's GET, whose answer names it, is asked instead.
        if (statusOf(err) !== 400) throw err;
        const got = await this.read(ctx, key, Key);
        return got && { etag: got.etag };
      }
    });
  }

  /** One attempt at a HEAD of `Key`: its etag, or null on a 404. */
  private async headOnce(ctx: AttemptContext, Key: string): Promise<{ etag: string } | null> {
    const wire = await this.wired();
    if (wire) {
      const res = await wire({ method: 'HEAD', key: Key, headers: {}, signal: ctx.signal });
      // A HEAD's answer has no body, so no error code: any 404 reads as a missing key, even a missing bucket's.
      if (res.status === 404) return null;
      return { etag: unquote(succeeded(res).header('etag') ?? '') };
    }
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }), {
        abortSignal: ctx.signal,
      });
      return { etag: unquote(out.ETag ?? '') };
    } catch (err) {
      if (statusOf(err) === 404) return null; // as on the wire: no body, no code
      throw err;
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const Key = this.full(key);
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const ContentType = options.contentType ?? 'application/json';
    return this.attempt(
      `PUT ${key}`,
      async (ctx) => {
        ctx.extend(this.transferAllowance(body.byteLength));
        try {
          if (!conditional && body.byteLength >= this.multipartThreshold) {
            const upload = new Upload({
              client: this.client,
              params: { Bucket: this.bucket, Key, Body: body, ContentType },
            });
            const abort = () => void upload.abort().catch(() => undefined);
            ctx.signal.addEventListener('abort', abort, { once: true });
            try {
              await upload.done();
            } finally {
              ctx.signal.removeEventListener('abort', abort);
            }
            const head = await this.client.send(
              new HeadObjectCommand({ Bucket: this.bucket, Key }),
              { abortSignal: ctx.signal },
            );
            return { etag: unquote(head.ETag ?? '') };
          }
          const wire = await this.wired();
          if (wire) {
            const res = await wire({
              method: 'PUT',
              key: Key,
              headers: {
                'content-type': ContentType,
                ...(options.ifMatch !== undefined ? { 'if-match': options.ifMatch } : {}),
                ...(options.ifNoneMatch !== undefined
                  ? { 'if-none-match': options.ifNoneMatch }
                  : {}),
              },
              body,
              signal: ctx.signal,
            });
            return { etag: unquote(succeeded(res).header('etag') ?? '') };
          }
          const out = await this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key,
              Body: body,
              ContentType,
              ...(options.ifMatch !== undefined ? { IfMatch: options.ifMatch } : {}),
              ...(options.ifNoneMatch !== undefined ? { IfNoneMatch: options.ifNoneMatch } : {}),
            }),
            { abortSignal: ctx.signal },
          );
          return { etag: unquote(out.ETag ?? '') };
        } catch (err) {
          const status = statusOf(err);
          // A missing key fails only If-Match (AWS answers it 404 NoSuchKey). If-None-Match: * fails only
          // when the key exists, so a 404 there (a code-less one from a gateway) stored nothing: 503.
          const missing = options.ifMatch !== undefined && isMissingKey(err);
          if (conditional && (status === 412 || missing)) throw new PreconditionFailedError(key);
          // AWS's 409 ConditionalRequestConflict: a write or delete of the key was under way and this PUT
          // stored nothing. Not "the key exists" (after a delete it may not): AWS asks for the PUT again,
          // whose answer tells (review s64c).
          if (conditional && status === 409) Object.assign(err as object, { conflict: true });
          throw err;
        }
      },
      true,
    );
  }

  async delete(keys: string | string[]): Promise<void> {
    const all = (Array.isArray(keys) ? keys : [keys]).map((k) => this.full(k));
    if (all.length === 1) {
      await this.attempt(
        `DELETE ${all[0]}`,
        async (ctx) => {
          const wire = await this.wired();
          if (wire)
            return succeeded(
              await wire({ method: 'DELETE', key: all[0]!, headers: {}, signal: ctx.signal }),
            );
          return this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: all[0]! }), {
            abortSignal: ctx.signal,
          });
        },
        true,
      );
      return;
    }
    for (let i = 0; i < all.length; i += 1000) await this.deleteBatch(all.slice(i, i + 1000));
  }

  /**
   * One DeleteObjects of up to 1000 keys. It answers 200 with an `<Error>` per key it did not delete: a
   * missing key is no error; a transient code (InternalError, SlowDown, ...) has only those keys sent
   * again, through withRetry; any other code (AccessDenied) fails the call with StorageUnavailableError.
   */
  private async deleteBatch(batch: string[]): Promise<void> {
    let left = batch;
    await this.attempt(
      `DELETE ${batch.length} keys`,
      async (ctx) => {
        const out = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: left.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal: ctx.signal },
        );
        const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length === 0) return;
        const error = new KeysNotDeletedError(
          failed.map((e) => e.Code ?? 'unknown'),
          failed.length,
        );
        if (!error.transient) throw new StorageUnavailableError(`DELETE: ${error.message}`, error);
        // Keys the answer does not name (or names wrongly) are sent again too: never dropped.
        const named = new Set(failed.map((e) => e.Key));
        const again = left.filter((k) => named.has(k));
        left = again.length === failed.length ? again : left;
        throw error;
      },
      true,
    );
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const maxKeys = Math.min(options.limit ?? 1000, 1000);
    let from: { startAfter?: string; token?: string } = options.cursor
      ? { startAfter: this.prefix + options.cursor }
      : {};
    // An empty page marked truncated (reported on versioned buckets with many delete markers) goes on with
    // its continuation token: S3 sends one with every truncated page. A few such pages at most.
    for (let pages = 1; ; pages++) {
      const page = await this.listOnce(prefix, maxKeys, from);
      if (!(page.truncated && page.keys.length === 0 && page.next && pages < EMPTY_PAGES))
        return this.page(page.keys, page.truncated);
      from = { token: page.next };
    }
  }

  /** One ListObjectsV2 request: from the start, after a key, or on from a continuation token. */
  private async listOnce(
    prefix: string,
    maxKeys: number,
    from: { startAfter?: string; token?: string },
  ): Promise<Listing> {
    const wire = await this.wired();
    if (wire)
      return this.attempt(`LIST ${prefix}`, async (ctx) => {
        // A page of 1,000 keys is about 1.4 MB: an answer past MAX_LIST_BYTES fails the attempt at once
        // (503), where it was buffered whole, and past 512 MiB was a string too long (500, review s68d).
        let got = 0;
        const over = (bytes: number) =>
          bytes > MAX_LIST_BYTES &&
          ctx.fail(new StorageUnavailableError(`LIST ${prefix}: an answer of ${bytes} bytes`));
        const res = await wire({
          onLength: over,
          onData: (bytes) => void over((got += bytes)),
          method: 'GET',
          key: '',
          query: {
            'list-type': '2',
            prefix: this.prefix + prefix,
            'max-keys': String(maxKeys),
            ...(from.startAfter ? { 'start-after': from.startAfter } : {}),
            ...(from.token ? { 'continuation-token': from.token } : {}),
          },
          headers: {},
          signal: ctx.signal,
        });
        return parseListing(new TextDecoder().decode(succeeded(res).body));
      });
    const out = await this.attempt(`LIST ${prefix}`, (ctx) =>
      this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          MaxKeys: maxKeys,
          ...(from.startAfter ? { StartAfter: from.startAfter } : {}),
          ...(from.token ? { ContinuationToken: from.token } : {}),
        }),
        { abortSignal: ctx.signal },
      ),
    );
    return {
      keys: (out.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0 })),
      truncated: out.IsTruncated === true,
      ...(out.NextContinuationToken ? { next: out.NextContinuationToken } : {}),
    };
  }

  /** A listing's page: keys without the store's prefix; StartAfter (the last key) as the cursor. */
  private page(keys: { key: string; size: number }[], truncated: boolean): ListPage {
    // Never read as the end of the listing: without a last key there is nothing to go on from (list follows
    // a few such pages by their continuation token first).
    if (truncated && keys.length === 0)
      throw new StorageUnavailableError(
        `LIST: ${this.name} answered an empty page marked truncated`,
      );
    const listed = keys.map((o) => ({ key: o.key.slice(this.prefix.length), size: o.size }));
    // StartAfter (the last key listed, kept or not) as the cursor keeps it readable and the same on every
    // adapter; keys no call could take are left out (isSafeKey).
    return {
      objects: listed.filter((o) => isSafeKey(o.key)),
      ...(truncated ? { cursor: listed[listed.length - 1]!.key } : {}),
    };
  }

  /**
   * One LIST of at most one key under the prefix, one attempt, aborted at the deadline: it needs the same
   * permission as the store's own listings, and answers 200 on an empty bucket.
   */
  async ping(deadlineMs = DEFAULT_PING_DEADLINE_MS): Promise<StoragePing> {
    return probe(
      deadlineMs,
      (abortSignal) =>
        this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, MaxKeys: 1 }),
          { abortSignal },
        ),
      describeFailure,
    );
  }

  /** Extra time for a transfer of `bytes` beyond the first MiB at the slowest tolerated rate. */
  private transferAllowance(bytes: number): number {
    const extra = bytes - 1024 * 1024;
    return extra > 0 ? (extra / this.timeouts.minBytesPerSecond) * 1000 : 0;
  }

  /**
   * Grants an attempt the transfer allowance of an answer's body as its bytes arrive, not as its declared
   * length: a body that keeps coming at `minBytesPerSecond` is never cut off, and one that trickles slower
   * (whatever length it claims) runs out of time. Past MAX_DECLARED_BYTES the attempt fails at once.
   */
  private progress(ctx: AttemptContext, key: string): (bytes: number) => void {
    let received = 0;
    return (bytes) => {
      const before = this.transferAllowance(received);
      received += bytes;
      if (received > MAX_DECLARED_BYTES) ctx.fail(tooLarge(key, received));
      else ctx.extend(this.transferAllowance(received) - before);
    };
  }

  /** Fails the attempt at once when the answer's declared length is over MAX_DECLARED_BYTES. */
  private declared(ctx: AttemptContext, key: string, bytes: number): void {
    if (bytes > MAX_DECLARED_BYTES) ctx.fail(tooLarge(key, bytes));
  }

  /**
   * One call through withRetry. A 404 that reaches here is not a missing key (get, exists and put take
   * those): it is a missing bucket (NoSuchBucket) or the like, a storage that is not there (503), never
   * "no such object".
   */
  private attempt<T>(
    what: string,
    op: (ctx: AttemptContext) => Promise<T>,
    write = false,
  ): Promise<T> {
    const checked = (ctx: AttemptContext) =>
      op(ctx).catch((err: unknown) => {
        // workerd's `Too many subrequests.` (the Workers S3 variant, past Cloudflare's fetch limit): a 503
        // that names the limit, not retried (every attempt in the invocation would meet it).
        if (isPlatformLimit(err))
          throw new StorageUnavailableError(`${what}: ${(err as Error).message}`, err);
        const refusal = refused(err);
        if (refusal) throw refusal;
        if (statusOf(err) !== 404) throw err;
        const code = (err as { name?: string }).name ?? 'NotFound';
        throw new StorageUnavailableError(`${what}: ${this.name} answered 404 ${code}`, err);
      });
    return withRetry(what, checked, isTransient, this.retry, undefined, { write });
  }
}

export interface WireLocation {
  url: URL;
  signingRegion: string;
}

/**
 * The endpoint the client sends a bucket's object requests to, as its own endpoint middleware finds it,
 * and the region to sign for; null when that endpoint asks for anything but SigV4 for `s3` (a directory
 * bucket's `sigv4-s3express`, a multi-region access point's `sigv4a`, Outposts, Object Lambda), which
 * only the SDK signs: such a store sends everything through the SDK.
 */
export async function wireLocation(client: S3Client, bucket: string): Promise<WireLocation | null> {
  const config = client.config;
  const endpoint = await getEndpointFromInstructions(
    { Bucket: bucket, Key: 'k' },
    GetObjectCommand as unknown as Parameters<typeof getEndpointFromInstructions>[1],
    config as unknown as Parameters<typeof getEndpointFromInstructions>[2],
  );
  const schemes = endpoint.properties?.authSchemes as
    { name?: string; signingName?: string; signingRegion?: string }[] | undefined;
  const scheme = schemes?.[0];
  if (scheme && (scheme.name !== 'sigv4' || (scheme.signingName ?? 's3') !== 's3')) return null;
  return {
    url: new URL(endpoint.url.href),
    signingRegion: scheme?.signingRegion ?? (await config.region()),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A ping failure in words safe for an unauthenticated caller: status and S3 error code, or the network error
 * code; for a bucket in another region, the region to set (which S3 tells anyone who asks).
 */
function describeFailure(err: unknown): Pick<StoragePing, 'reason' | 'error'> {
  const status = statusOf(err);
  const name = (err as { name?: string }).name ?? 'Error';
  if (status !== undefined) {
    const label = answerLabel(err, status);
    const at = otherRegion(err);
    if (at)
      return {
        reason: 'error',
        error: at.region
          ? `${label}: the bucket is in ${at.region}, ${regionAdvice(at)}`
          : `${label}: check S3_REGION and S3_ENDPOINT`,
      };
    if (status === 401 || status === 403 || TOKEN_CODES.test(name))
      return { reason: 'denied', error: label };
    if (status === 404) return { reason: 'not-found', error: label };
    return { reason: 'error', error: label };
  }
  const code = (err as { code?: string }).code ?? '';
  if (name === 'TimeoutError' || code === 'ETIMEDOUT')
    return { reason: 'timeout', error: 'timed out' };
  if (/^[A-Z_]{3,32}$/.test(code)) return { reason: 'unreachable', error: code };
  if (name === 'CredentialsProviderError') return { reason: 'denied', error: 'no credentials' };
  return { reason: 'unreachable', error: /^[A-Za-z]{1,64}$/.test(name) ? name : 'error' };
}

/**
 * Storage refusing Satchel's credentials (a 401 or 403, an expired session token's 400), or none found, or
 * answering for a bucket in another region: a 503 that says so and what to set (a bare 500 until reviews
 * s62g and s64g), its S3 error the cause; undefined for any other failure. Refused before it was applied, a
 * write did not land; an earlier attempt whose answer was lost still makes it "may have landed"
 * (withRetry's `settled`).
 */
function refused(err: unknown): SatchelError | undefined {
  const status = statusOf(err);
  const at = otherRegion(err);
  let detail: string | undefined;
  if (at && status !== undefined) {
    const label = answerLabel(err, status);
    detail = at.region
      ? `storage says the bucket is in ${at.region} (${label}): ${regionAdvice(at)}`
      : `storage refused the request as addressed (${label}); check that S3_REGION is the bucket's ` +
        'region, and S3_ENDPOINT when set';
  } else {
    const { reason, error } = describeFailure(err);
    if (reason === 'denied') detail = credentialsAdvice(error!);
  }
  return detail === undefined ? undefined : Object.assign(unavailable(detail, 2), { cause: err });
}

/** What to check when storage refuses the credentials (`error`: describeFailure's, its status and code). */
function credentialsAdvice(error: string): string {
  if (error === 'no credentials')
    return (
      'storage credentials could not be loaded (CredentialsProviderError); check AWS_PROFILE, or set ' +
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
    );
  if (/RequestTimeTooSkewed/.test(error))
    return `storage refused the request's time (${error}); check this machine's clock`;
  // Keys it knows, without the permission (review s63g): the policy, not the keys, is to check.
  if (/AccessDenied/.test(error))
    return (
      `storage denied the request (${error}); check that the credentials' policy allows the S3 ` +
      'actions docs/deploy.md lists on this bucket and prefix'
    );
  // Temporary credentials (`aws sso login`, `aws sts assume-role`) expire after hours (review s64g).
  if (/ExpiredToken|TokenRefreshRequired/.test(error))
    return (
      `storage refused Satchel's credentials: the session token has expired (${error}); refresh the ` +
      'temporary credentials (AWS_SESSION_TOKEN with its AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ' +
      'the AWS_PROFILE they come from)'
    );
  if (/InvalidToken/.test(error))
    return (
      `storage refused Satchel's credentials: the session token is not valid (${error}); check ` +
      'AWS_SESSION_TOKEN, and that it goes with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
    );
  return `storage refused Satchel's credentials (${error}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
}

/** S3's codes for temporary credentials it does not take: HTTP 400, not 403 (HADOOP-18353). */
const TOKEN_CODES = /^(ExpiredToken|TokenRefreshRequired|InvalidToken)$/;
/** S3's codes for a request signed for (or sent to the endpoint of) another region than the bucket's. */
const REGION_CODES =
  /^(AuthorizationHeaderMalformed|PermanentRedirect|TemporaryRedirect|Redirect|IllegalLocationConstraintException)$/;
/** A region name, as S3_REGION takes it (lib/server/config.ts). */
const REGION_NAME = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/** An error answer's status and S3 error code, `HTTP 403 AccessDenied`; the status alone without a code. */
function answerLabel(err: unknown, status: number): string {
  const name = (err as { name?: string }).name ?? '';
  // The SDK names a code-less answer (a HEAD's) `Unknown`: the status alone says as much.
  const code = /^[A-Za-z]{1,64}$/.test(name) && name !== 'Unknown' ? name : '';
  return `HTTP ${status} ${code}`.trim();
}

/** Where storage says the bucket is, when that is not where the request was signed for or sent. */
interface OtherRegion {
  /** The bucket's region, from the answer's `<Region>` or `x-amz-bucket-region`; none when it names none. */
  region?: string;
  /** Sent to another region's endpoint (a redirect), not only signed for another region. */
  redirected: boolean;
}

/**
 * Whether storage answered that the bucket is in another region than the request was signed for or sent to
 * (S3_REGION unset for a bucket outside us-east-1: review s64g), and which; undefined when it did not.
 */
function otherRegion(err: unknown): OtherRegion | undefined {
  const status = statusOf(err);
  const name = (err as { name?: string }).name ?? '';
  if (status !== 301 && status !== 307 && !REGION_CODES.test(name)) return undefined;
  const e = err as { Region?: unknown; $response?: { headers?: Record<string, unknown> } };
  const named = e.Region ?? e.$response?.headers?.['x-amz-bucket-region'];
  return {
    ...(typeof named === 'string' && REGION_NAME.test(named) ? { region: named } : {}),
    redirected: name !== 'AuthorizationHeaderMalformed',
  };
}

/**
 * What to set for a bucket in another region: S3_REGION; and S3_ENDPOINT too after a redirect, which a
 * configured endpoint needs (without one, the endpoint follows the region).
 */
function regionAdvice(at: OtherRegion): string {
  const also = at.redirected ? " (and S3_ENDPOINT, if set, to that region's endpoint)" : '';
  return `set S3_REGION=${at.region}${also}`;
}

/** A GET's answer larger than any object: not retried (it would be again), 503. */
function tooLarge(key: string, bytes: number): StorageUnavailableError {
  return new StorageUnavailableError(
    `GET ${key}: the answer's body (${bytes} bytes) is larger than any object (${MAX_DECLARED_BYTES} bytes)`,
  );
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

/** The wire's answer when it is a 2xx, as the SDK takes it; otherwise its error, thrown. */
function succeeded(res: S3WireResponse): S3WireResponse {
  if (res.status < 200 || res.status >= 300) throw wireError(res);
  return res;
}

/**
 * An error answer of the wire as the SDK would throw it: named by S3's error code, with the status in
 * `$metadata`, so that retries, preconditions and ping descriptions read both the same way.
 */
function wireError(res: S3WireResponse): Error {
  const xml = new TextDecoder().decode(res.body.subarray(0, 4096));
  const code = /<Code>([^<]{1,64})<\/Code>/.exec(xml)?.[1];
  const message = /<Message>([^<]{0,300})<\/Message>/.exec(xml)?.[1];
  // The bucket's region, where storage names it (a wrong region's answer): as the SDK's error carries it.
  const region =
    /<Region>([^<]{1,64})<\/Region>/.exec(xml)?.[1] ?? res.header('x-amz-bucket-region');
  return Object.assign(new Error(message || code || `HTTP ${res.status}`), {
    name: code ?? (res.status === 404 ? 'NotFound' : `HTTP${res.status}`),
    $metadata: { httpStatusCode: res.status },
    ...(region ? { Region: region } : {}),
  });
}

/** A ListObjectsV2 page: its keys, whether more follow, and the token that goes on from it. */
interface Listing {
  keys: { key: string; size: number }[];
  truncated: boolean;
  next?: string;
}

/** Empty pages marked truncated a listing follows before it fails as storage unavailable. */
const EMPTY_PAGES = 10;

/**
 * A ListObjectsV2 answer: each `<Contents>`' key (XML entities decoded) and size, and whether more follow.
 * An answer that is not one (no `<ListBucketResult`) is an error, never an empty page.
 */
export function parseListing(xml: string): Listing {
  if (!xml.includes('<ListBucketResult')) throw new Error('LIST answer is not a ListBucketResult');
  const keys: { key: string; size: number }[] = [];
  for (const [, body] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const key = /<Key>([\s\S]*?)<\/Key>/.exec(body!)?.[1];
    if (key === undefined) throw new Error('LIST answer has an entry without a key');
    keys.push({ key: unescapeXml(key), size: Number(/<Size>(\d+)<\/Size>/.exec(body!)?.[1] ?? 0) });
  }
  const next = /<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(xml)?.[1];
  return {
    keys,
    truncated: /<IsTruncated>\s*true\s*<\/IsTruncated>/.test(xml),
    ...(next ? { next: unescapeXml(next) } : {}),
  };
}

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g, (_, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10))
      : ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" } as Record<string, string>)[e]!,
  );
}

/**
 * A 404 that means "no such key": S3's NoSuchKey (also its answer to If-Match on a missing key), or a 404
 * without a code (a body-less answer, as a HEAD's). NoSuchBucket and any other code are not.
 */
function isMissingKey(err: unknown): boolean {
  if (statusOf(err) !== 404) return false;
  const { name, Code } = err as { name?: string; Code?: string };
  const code = Code ?? name;
  return code === 'NoSuchKey' || code === 'NotFound';
}

/** S3_PREFIX as a key prefix: no empty segments, and '/' at its end unless it is empty (the bucket root). */
function normalPrefix(prefix: string | undefined): string {
  const kept = (prefix ?? '')
    .split('/')
    .filter((segment) => segment !== '')
    .join('/');
  return kept ? `${kept}/` : '';
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/**
 * The per-key error codes of a DeleteObjects answer that mean "try again": S3's 5xx codes and its
 * throttling, a request that took too long, a conflicting operation in progress.
 */
const TRANSIENT_KEY_CODES = new Set([
  'InternalError',
  'ServiceUnavailable',
  'SlowDown',
  'RequestTimeout',
  'OperationAborted',
  'ThrottlingException',
  'Throttling',
  'TooManyRequests',
]);

/**
 * Keys a DeleteObjects answer (a 200) says were not deleted, and their codes. Transient (retried by
 * withRetry) when every code is one of TRANSIENT_KEY_CODES.
 */
class KeysNotDeletedError extends Error {
  readonly transient: boolean;
  /** The status of the answer that named them: the backend answered (retry.ts reads it). */
  readonly $metadata = { httpStatusCode: 200 };
  constructor(codes: string[], count: number) {
    const shown = [...new Set(codes)].map((c) => (/^[A-Za-z]{1,64}$/.test(c) ? c : 'unknown'));
    super(`${count} key${count === 1 ? '' : 's'} not deleted: ${shown.slice(0, 3).join(', ')}`);
    this.name = 'KeysNotDeletedError';
    this.transient = codes.every((c) => TRANSIENT_KEY_CODES.has(c));
  }
}

/** 5xx, SlowDown/throttling, and errors that never got an HTTP answer (network, timeouts). */
export function isTransient(err: unknown): boolean {
  // Thrown by an attempt on purpose; its words (a key's) must not read as a network error's below.
  if (StorageUnavailableError.is(err)) return false;
  if (err instanceof KeysNotDeletedError) return err.transient;
  if ((err as { conflict?: boolean } | null)?.conflict) return true;
  const status = statusOf(err);
  const name = (err as { name?: string; Code?: string }).name ?? '';
  if (name === 'SlowDown' || name === 'ThrottlingException' || name === 'RequestTimeout')
    return true;
  if (status !== undefined) return status >= 500 || status === 429;
  const code = (err as { code?: string }).code ?? '';
  return (
    /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR/.test(code) ||
    name === 'TimeoutError' ||
    name === 'NetworkingError' ||
    // No HTTP answer came: undici's `TypeError: fetch failed`, workerd's `Error: Network connection lost.`
    /fetch failed|network|connection (lost|reset|refused|closed)|socket hang up/i.test(
      (err as Error).message ?? '',
    )
  );
}

/**
 * An object's age by storage's clock: the answer's `Date` less the object's `Last-Modified` (both whole
 * seconds), or nothing when either is missing or unreadable.
 */
function ageOf(date: string | undefined, modified: string | Date | undefined): { age?: number } {
  const now = date ? Date.parse(date) : NaN;
  const at = modified instanceof Date ? modified.getTime() : modified ? Date.parse(modified) : NaN;
  return Number.isFinite(now) && Number.isFinite(at) ? { age: now - at } : {};
}
