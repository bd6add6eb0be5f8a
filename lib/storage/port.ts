/**
 * The object-store port: the one interface every storage backend implements.
 *
 * It is deliberately small (get, put with a precondition, delete, list) so that each adapter is short
 * and dull, and so that compare-and-swap on a single object is the only concurrency primitive the rest
 * of Satchel relies on.
 */

/** An object read from the store, with the backend's opaque entity tag. */
export interface StoredObject {
  body: Uint8Array;
  etag: string;
}

/** Preconditions for a write; at most one of the two is set. */
export interface PutOptions {
  /** Write only if the object exists and its current etag equals this one. */
  ifMatch?: string;
  /** `*`: write only if no object exists at the key (create-only). */
  ifNoneMatch?: '*';
  contentType?: string;
}

/** One key in a listing. */
export interface ListedObject {
  key: string;
  size: number;
}

/** A page of a listing; `cursor` is set when more keys follow. */
export interface ListPage {
  objects: ListedObject[];
  cursor?: string;
}

export interface ListOptions {
  cursor?: string;
  /** Page size hint, at most 1000. */
  limit?: number;
}

/** The port. Keys are `/`-separated, never start with `/`, and never hold `.` or `..` segments. */
export interface ObjectStore {
  /** A short name for logs and health output, e.g. `local:.satchel` or `s3:bucket`. */
  readonly name: string;
  /** Reads an object, or null when the key does not exist. */
  get(key: string): Promise<StoredObject | null>;
  /** Writes an object; throws PreconditionFailedError when a precondition does not hold. */
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }>;
  /** Deletes keys; deleting a missing key is not an error. */
  delete(keys: string | string[]): Promise<void>;
  /** Lists keys under a prefix in ascending byte order, one page at a time. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
}

const PRECONDITION = Symbol.for('satchel.precondition-failed');
const UNAVAILABLE = Symbol.for('satchel.storage-unavailable');

/**
 * A write's precondition did not hold (If-Match stale or on a missing key, If-None-Match on an existing
 * key). The same error whatever the backend; test with `PreconditionFailedError.is(err)`.
 */
export class PreconditionFailedError extends Error {
  readonly [PRECONDITION] = true;
  constructor(readonly key: string) {
    super(`precondition failed for ${key}`);
    this.name = 'PreconditionFailedError';
  }
  /** True for a precondition failure from any adapter (works across bundles, unlike instanceof). */
  static is(err: unknown): err is PreconditionFailedError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[PRECONDITION] === true;
  }
}

/** The backend could not be reached or kept failing after bounded retries. Maps to HTTP 503. */
export class StorageUnavailableError extends Error {
  readonly [UNAVAILABLE] = true;
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'StorageUnavailableError';
  }
  /** True for an unavailability error from any adapter. */
  static is(err: unknown): err is StorageUnavailableError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[UNAVAILABLE] === true;
  }
}

/** Rejects keys that could escape a prefix or a folder; adapters call it on every key they touch. */
export function assertSafeKey(key: string): void {
  if (key.length === 0 || key.length > 1024 || key.startsWith('/') || key.includes('\\') || key.includes('\0')) {
    throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
  for (const segment of key.split('/')) {
    if (segment === '.' || segment === '..') throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
}

/** Encodes UTF-8 text for a put. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Decodes a stored body as UTF-8 text. */
export function text(body: Uint8Array): string {
  return new TextDecoder().decode(body);
}
