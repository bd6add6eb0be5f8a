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
import { assertSafeKey, PreconditionFailedError, type ListOptions, type ListPage, type ObjectStore, type PutOptions, type StoredObject } from './port.js';
import { withRetry, type RetryPolicy } from './retry.js';

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
  retry?: RetryPolicy;
  /** A ready client, e.g. one with custom middleware; the connection options above are then ignored. */
  client?: S3Client;
}

const DEFAULT_MULTIPART_THRESHOLD = 16 * 1024 * 1024;

/**
 * S3-compatible adapter (AWS S3, R2's S3 API, Ceph radosgw, MinIO) over @aws-sdk/client-s3.
 *
 * Preconditions use PutObject's If-Match / If-None-Match. Etags are kept unquoted inside Satchel,
 * because radosgw rejects a quoted If-Match even when it is current. A 412, a 404 on a conditional
 * write (If-Match on a missing key) and AWS's 409 ConditionalRequestConflict all mean the same thing:
 * PreconditionFailedError. Conditional writes are always a single PUT: a multipart completion's
 * preconditions are not honoured by every backend, and radosgw returns no etag for it.
 */
export class S3Store implements ObjectStore {
  readonly name: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly multipartThreshold: number;
  private readonly retry: RetryPolicy | undefined;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? options.prefix.replace(/^\/+/, '').replace(/\/*$/, '/') : '';
    this.name = `s3:${options.bucket}${this.prefix ? '/' + this.prefix : ''}`;
    this.multipartThreshold = options.multipartThreshold ?? DEFAULT_MULTIPART_THRESHOLD;
    this.retry = options.retry;
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
        // Older S3-compatible servers reject the SDK's newer default checksums.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
  }

  private full(key: string): string {
    assertSafeKey(key);
    return this.prefix + key;
  }

  async get(key: string): Promise<StoredObject | null> {
    const Key = this.full(key);
    return this.attempt(`GET ${key}`, async () => {
      try {
        const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
        const body = await out.Body!.transformToByteArray();
        return { body, etag: unquote(out.ETag ?? '') };
      } catch (err) {
        if (statusOf(err) === 404) return null;
        throw err;
      }
    });
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const Key = this.full(key);
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const ContentType = options.contentType ?? 'application/json';
    return this.attempt(`PUT ${key}`, async () => {
      try {
        if (!conditional && body.byteLength >= this.multipartThreshold) {
          await new Upload({ client: this.client, params: { Bucket: this.bucket, Key, Body: body, ContentType } }).done();
          const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
          return { etag: unquote(head.ETag ?? '') };
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
        );
        return { etag: unquote(out.ETag ?? '') };
      } catch (err) {
        const status = statusOf(err);
        if (conditional && (status === 412 || status === 404 || status === 409)) throw new PreconditionFailedError(key);
        throw err;
      }
    });
  }

  async delete(keys: string | string[]): Promise<void> {
    const all = (Array.isArray(keys) ? keys : [keys]).map((k) => this.full(k));
    if (all.length === 1) {
      await this.attempt(`DELETE ${all[0]}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: all[0]! })));
      return;
    }
    for (let i = 0; i < all.length; i += 1000) {
      const batch = all.slice(i, i + 1000);
      const out = await this.attempt(`DELETE ${batch.length} keys`, () =>
        this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })),
      );
      const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) throw new Error(`delete failed for ${failed.length} keys: ${failed[0]?.Code ?? 'unknown'}`);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const out = await this.attempt(`LIST ${prefix}`, () =>
      this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          MaxKeys: Math.min(options.limit ?? 1000, 1000),
          ...(options.cursor ? { StartAfter: this.prefix + options.cursor } : {}),
        }),
      ),
    );
    const objects = (out.Contents ?? []).map((o) => ({ key: o.Key!.slice(this.prefix.length), size: o.Size ?? 0 }));
    // StartAfter (the last key) as the cursor keeps it readable and the same on every adapter.
    return { objects, ...(out.IsTruncated && objects.length > 0 ? { cursor: objects[objects.length - 1]!.key } : {}) };
  }

  private attempt<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withRetry(what, op, isTransient, this.retry);
  }
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** 5xx, SlowDown/throttling, and errors that never got an HTTP answer (network, timeouts). */
export function isTransient(err: unknown): boolean {
  const status = statusOf(err);
  const name = (err as { name?: string; Code?: string }).name ?? '';
  if (name === 'SlowDown' || name === 'ThrottlingException' || name === 'RequestTimeout') return true;
  if (status !== undefined) return status >= 500 || status === 429;
  const code = (err as { code?: string }).code ?? '';
  return (
    /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR/.test(code) ||
    name === 'TimeoutError' ||
    name === 'NetworkingError' ||
    (name === 'TypeError' && /fetch failed|network/i.test((err as Error).message ?? ''))
  );
}
