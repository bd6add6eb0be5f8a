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
  /**
   * How long ago the object was written, in ms, by storage's own clock where the backend tells: S3 the
   * answer's `Date` less the object's `Last-Modified` (whole seconds each), R2 the binding's `uploaded`,
   * a local folder the file's modification time (one machine's clock). Never more than the time since
   * the write was sent (up to a second more on S3). Undefined when the backend does not tell.
   */
  age?: number;
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
  /**
   * The etag of the object at exactly this key (the one `get` and `put` give), or null when there is none,
   * without its body: one request of the cheaper class where the backend has one (S3 HEAD and R2 head are
   * billed as reads; a LIST is billed as a write on S3 and R2). Optional: without it, `objectExists`
   * lists the key.
   */
  head?(key: string): Promise<{ etag: string } | null>;
  /**
   * A cheap probe of the backend for health checks: one request (no retries) that must answer within
   * `deadlineMs` (default 1500). Never throws; says whether storage answered, how fast, and if not, why,
   * in words safe to show an unauthenticated caller (no secrets, no absolute local paths).
   * Optional so that wrappers and test doubles need not implement it.
   */
  ping?(deadlineMs?: number): Promise<StoragePing>;
}

/** What `ObjectStore.ping` found. */
export interface StoragePing {
  ok: boolean;
  /** Time until the answer, or until the probe gave up. */
  latencyMs: number;
  /**
   * When not ok, the class of the failure: `timeout` (no answer within the deadline), `unreachable`
   * (connection refused, reset, DNS), `denied` (credentials or permissions refused: 401/403),
   * `not-found` (the bucket or folder does not exist), `error` (anything else, e.g. a 5xx).
   */
  reason?: 'timeout' | 'unreachable' | 'denied' | 'not-found' | 'error';
  /** One short line for the health output and logs, e.g. `no answer within 1500 ms`, `HTTP 403 AccessDenied`. */
  error?: string;
}

/** The ping deadline used when none is given. */
export const DEFAULT_PING_DEADLINE_MS = 1500;

const PRECONDITION = Symbol.for('satchel.precondition-failed');
const UNAVAILABLE = Symbol.for('satchel.storage-unavailable');

/**
 * A write's precondition did not hold (If-Match stale or on a missing key, If-None-Match on an existing
 * key). The same error whatever the backend; test with `PreconditionFailedError.is(err)`.
 */
export class PreconditionFailedError extends Error {
  readonly [PRECONDITION] = true;
  /**
   * True when an earlier attempt of this same call got no answer (timeout, dropped connection, 5xx) before
   * the retry that failed its precondition: that earlier attempt may itself have been the write that now
   * makes the precondition fail (a lost answer). The caller should read the object and look for its own
   * write (a write id inside the body) before reporting a conflict.
   */
  readonly afterLostAnswer: boolean;
  /** With `afterLostAnswer`: such an attempt got no answer at all (a timeout, a broken connection). */
  readonly noAnswer: boolean;
  constructor(
    readonly key: string,
    options: { afterLostAnswer?: boolean; noAnswer?: boolean } = {},
  ) {
    super(
      `precondition failed for ${key}${options.afterLostAnswer ? ' (after an attempt whose answer was lost)' : ''}`,
    );
    this.name = 'PreconditionFailedError';
    this.afterLostAnswer = options.afterLostAnswer ?? false;
    this.noAnswer = this.afterLostAnswer && (options.noAnswer ?? true);
  }
  /** True for a precondition failure from any adapter (works across bundles, unlike instanceof). */
  static is(err: unknown): err is PreconditionFailedError {
    return (
      typeof err === 'object' &&
      err !== null &&
      (err as Record<symbol, unknown>)[PRECONDITION] === true
    );
  }
}

/** The backend could not be reached or kept failing after bounded retries. Maps to HTTP 503. */
/**
 * Whether `err` (or one of its causes) is workerd refusing more subrequests in this invocation (Cloudflare's
 * limit per request: 50 fetches on the Free plan, 1,000 binding operations): no retry within the request
 * can succeed.
 */
export function isPlatformLimit(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (/Too many (?:subrequests|API requests by single Worker invocation)/i.test(e.message))
      return true;
  return false;
}

export class StorageUnavailableError extends Error {
  readonly [UNAVAILABLE] = true;
  /**
   * For a write (put or delete): true when an attempt may have reached the backend before its answer was
   * lost, so the write may have happened even though this error says it did not complete. A later
   * create-only retry of the same write then fails its precondition; look for the own write id.
   */
  readonly mayHaveLanded: boolean;
  /**
   * With `mayHaveLanded`: such an attempt got no answer at all (a timeout, a broken connection), where an
   * error answer (a 5xx) came from a backend that most likely did not store it.
   */
  readonly noAnswer: boolean;
  constructor(
    message: string,
    override readonly cause?: unknown,
    options: { mayHaveLanded?: boolean; noAnswer?: boolean } = {},
  ) {
    super(message);
    this.name = 'StorageUnavailableError';
    this.mayHaveLanded = options.mayHaveLanded ?? false;
    this.noAnswer = this.mayHaveLanded && (options.noAnswer ?? true);
  }
  /** True for an unavailability error from any adapter. */
  static is(err: unknown): err is StorageUnavailableError {
    return (
      typeof err === 'object' &&
      err !== null &&
      (err as Record<symbol, unknown>)[UNAVAILABLE] === true
    );
  }
}

/**
 * Rejects keys that could escape a prefix or a folder, keys with an empty segment (`a//b`, a trailing
 * `/`): the local store would map those onto another key's file, and keys some adapter cannot keep apart
 * or delete, so every adapter takes the same keys:
 * - a segment starting with `.` (`.`, `..`, and the local store's own `.tmp-` files and `.locks` folder);
 * - text that is not well-formed UTF-16 (a lone surrogate: two such keys are one file, one S3 key);
 * - characters XML 1.0 cannot carry (controls other than tab, LF and CR, U+FFFE, U+FFFF): S3's batch
 *   delete could never name them;
 * - more than 1024 bytes in UTF-8 (S3's limit).
 * Satchel's own keys never hold any of these (ids, namespaces and hook names are [A-Za-z0-9._-], not
 * starting with `.`). Adapters call it on every key they touch.
 */
export function assertSafeKey(key: string): void {
  if (
    key.length === 0 ||
    key.length > 1024 ||
    key.startsWith('/') ||
    key.includes('\\') ||
    UNSAFE_CHARACTER.test(key) ||
    LONE_SURROGATE.test(key) ||
    /(^|\/)(\.|\/|$)/.test(key) ||
    utf8Length(key) > 1024
  ) {
    throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
}

/**
 * Whether `key` passes assertSafeKey. Listings drop the keys that fail it (objects Satchel never wrote: a
 * Mac's `._<id>.json` copied into the bucket), so no listed key makes a later get or delete throw (until
 * 2026-12-06 one such key made a manifest rebuild, and every list of its namespace, answer 500: review
 * s58f). A listing's cursor is still the last key listed, so paging goes on past them.
 */
export function isSafeKey(key: string): boolean {
  try {
    assertSafeKey(key);
    return true;
  } catch {
    return false;
  }
}

/** Characters XML 1.0 cannot carry (NUL included): a DeleteObjects request could not name the key. */
const UNSAFE_CHARACTER = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;
/** A surrogate without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The length of well-formed `text` in UTF-8 bytes. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // 2 bytes below U+0800, 3 above; a surrogate pair (2 units) is 4 bytes.
    if (unit >= 0x80) bytes += unit < 0x800 || (unit >= 0xd800 && unit < 0xe000) ? 1 : 2;
  }
  return bytes;
}

/** A code unit from which JS string order and UTF-8 byte order can differ (surrogates and U+E000 on). */
const WIDE = /[\uD800-\uFFFF]/;

/** A UTF-16 code unit's rank in code point order, which is UTF-8 byte order: surrogates rank above U+FFFF. */
function rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

/** Compares keys in ascending UTF-8 byte order, as S3 and R2 list them (`ObjectStore.list`). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * Sorts keys in place in ascending UTF-8 byte order. Without a code unit from U+D800 on (nearly always),
 * that is JS string order, and the native sort is used.
 */
export function sortKeys(keys: string[]): string[] {
  return keys.some((k) => WIDE.test(k)) ? keys.sort(compareKeys) : keys.sort();
}

export { text, utf8 } from '../model/bytes.js';
