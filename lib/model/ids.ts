import { toHex } from './digest.js';
import { badRequest } from './errors.js';

const importedId = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const reserved = new Set(['index', 'latest']);
const namespaceName = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** A new session id: `YYYYMMDD-` (UTC date) and 32 lowercase hex from 16 random bytes. */
export function newSessionId(now: Date = new Date()): string {
  return `${idDay(now)}-${randomHex(16)}`;
}

/** The `YYYYMMDD` (UTC) that starts a new session's id. */
export function idDay(now: Date): string {
  return now.toISOString().slice(0, 10).replaceAll('-', '');
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
