import { text, utf8 } from './bytes.js';

// A continue lease as stored at `keys.lease`: lib/continue/lease.ts takes and releases it; a session's
// delete (lib/sessions/parts.ts) erases one nobody holds any more.

/** The stored form of a lease. */
export function encodeLease(lease: { owner: string; expiresAt: number }): Uint8Array {
  return utf8(
    JSON.stringify({ owner: lease.owner, expires_at: new Date(lease.expiresAt).toISOString() }),
  );
}

/** Reads a stored lease; null when it is not one (it is then treated as expired). */
export function parseLease(body: Uint8Array): { owner: string; expiresAt: number } | null {
  try {
    const value = JSON.parse(text(body)) as { owner?: unknown; expires_at?: unknown };
    const expiresAt = typeof value.expires_at === 'string' ? Date.parse(value.expires_at) : NaN;
    if (typeof value.owner === 'string' && Number.isFinite(expiresAt))
      return { owner: value.owner, expiresAt };
  } catch {
    // fall through
  }
  return null;
}
