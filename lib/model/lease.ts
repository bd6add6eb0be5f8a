import { text, utf8 } from './bytes.js';

// A continue lease as stored at `keys.lease`: lib/continue/lease.ts takes and releases it; a session's
// delete (lib/sessions/parts.ts) erases one nobody holds any more.

/** A lease as stored: `ttlMs` (`ttl_ms`) is how long it lives from when storage wrote it. */
export interface StoredLease {
  owner: string;
  expiresAt: number;
  /** Absent in leases stored before 2026-12-06: those expire by `expiresAt` alone. */
  ttlMs?: number;
}

/** The stored form of a lease. */
export function encodeLease(lease: StoredLease): Uint8Array {
  const { owner, expiresAt, ttlMs } = lease;
  const expires_at = new Date(expiresAt).toISOString();
  return utf8(
    JSON.stringify(
      ttlMs === undefined ? { owner, expires_at } : { owner, expires_at, ttl_ms: ttlMs },
    ),
  );
}

/** Reads a stored lease; null when it is not one (it is then treated as expired). */
export function parseLease(body: Uint8Array): StoredLease | null {
  try {
    const value = JSON.parse(text(body)) as {
      owner?: unknown;
      expires_at?: unknown;
      ttl_ms?: unknown;
    };
    const expiresAt = typeof value.expires_at === 'string' ? Date.parse(value.expires_at) : NaN;
    const ttl = value.ttl_ms;
    if (typeof value.owner === 'string' && Number.isFinite(expiresAt))
      return {
        owner: value.owner,
        expiresAt,
        ...(typeof ttl === 'number' && ttl >= 0 && Number.isFinite(ttl) ? { ttlMs: ttl } : {}),
      };
  } catch {
    // fall through
  }
  return null;
}

/**
 * Storage tells an object's age in whole seconds (S3's Last-Modified and Date) or coarser (a local folder
 * on a filesystem with 2 s file times, FAT): an age read as `a` may be up to two seconds more than it is.
 */
const AGE_GRAIN_MS = 2000;

/**
 * How long the lease read as `found` still lives, in ms; expired at 0 or less (so is one that is no lease,
 * and one its holder released by storing `expires_at` at 0). Measured on storage's clock when the backend
 * tells the object's age (`StoredObject.age`) and the lease its lifetime: the lease counts from when
 * storage wrote it, after its holder started counting, so neither the holder's clock nor this machine's
 * matters. Otherwise (a lease stored before `ttl_ms`, a backend that does not tell) by the holder's
 * `expires_at` against this machine's clock, `now`.
 */
export function leaseLeft(found: { body: Uint8Array; age?: number }, now: number): number {
  const held = parseLease(found.body);
  if (!held || held.expiresAt === 0) return 0;
  if (found.age !== undefined && held.ttlMs !== undefined)
    return held.ttlMs + AGE_GRAIN_MS - found.age;
  return held.expiresAt - now;
}
