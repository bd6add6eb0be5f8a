import { toHex } from '../digest.js';
import { badRequest } from '../errors.js';

const importedId = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const reserved = new Set(['index', 'latest']);
const namespaceName = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** A new session id: `YYYYMMDD-` (UTC date) and 32 lowercase hex from 16 random bytes. */
export function newSessionId(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 10).replaceAll('-', '')}-${randomHex(16)}`;
}

/** True for an id a client may name: 1-128 of [A-Za-z0-9._-], not starting with `.`, not reserved. */
export function isValidSessionId(id: string): boolean {
  return importedId.test(id) && !reserved.has(id);
}

/** Throws a 400 naming the field when `id` cannot be a session id. */
export function assertSessionId(id: string, path = 'id'): void {
  if (!isValidSessionId(id)) {
    const detail = reserved.has(id)
      ? `"${id}" is a reserved name and cannot be a session id`
      : 'a session id is 1-128 of [A-Za-z0-9._-] and does not start with "."';
    throw badRequest(detail, [{ path, message: detail }]);
  }
}

/** True for a namespace name (the part of a token entry before `=` or `/`). */
export function isValidNamespace(ns: string): boolean {
  return namespaceName.test(ns);
}

/** Random hex of `bytes` bytes, for write ids and similar. */
export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Where things live in the bucket; docs/design.md describes the layout. */
export const keys = {
  namespace: (ns: string) => `ns/${ns}/`,
  sessions: (ns: string) => `ns/${ns}/sessions/`,
  session: (ns: string, id: string) => `ns/${ns}/sessions/${id}.json`,
  manifest: (ns: string) => `ns/${ns}/m/`,
  root: (ns: string, seq: number) => `ns/${ns}/m/r/${String(seq).padStart(12, '0')}.json`,
  /** Pages carry a random part: two compactors racing for one seq must never overwrite each other's pages. */
  page: (ns: string, seq: number, i: number) => `ns/${ns}/m/g/${String(seq).padStart(12, '0')}-${randomHex(6)}-${i}.json`,
  log: (ns: string, at: number, writeId: string) => `ns/${ns}/m/l/${String(at).padStart(13, '0')}-${writeId}.json`,
  pending: (ns: string, id: string, writeId: string) => `ns/${ns}/m/p/${id}/${writeId}`,
  audit: (ns: string, id: string) => `ns/${ns}/audit/${id}/`,
  /** The session's continue lease: at most one model turn runs on a session at a time. */
  lease: (ns: string, id: string) => `ns/${ns}/lease/${id}.json`,
  /** Which session `continue` on `latest` chose for an Idempotency-Key (by its hash), so a repeat goes there too. */
  latestChoice: (ns: string, keyHash: string) => `ns/${ns}/continue/latest/${keyHash}.json`,
  /** One webhook delivery's marker: which session it went to, and whether it is done. */
  hookDelivery: (ns: string, hook: string, deliveryHash: string) => `ns/${ns}/hooks/${hook}/${deliveryHash}.json`,
};
