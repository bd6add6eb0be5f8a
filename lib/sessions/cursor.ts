import { badRequest } from '../model/errors.js';

/** Where a page of `list` ended: the last entry's ordering time and id (keyset pagination). */
export interface ListPosition {
  at: number;
  id: string;
}

/** An opaque, URL-safe cursor for a list position. */
export function encodeCursor(position: ListPosition): string {
  return btoa(JSON.stringify([position.at, position.id]))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The position a cursor of `encodeCursor` names; `invalid` for anything else. */
export function decodeCursor(cursor: string): ListPosition {
  try {
    const [at, id] = JSON.parse(atob(cursor.replaceAll('-', '+').replaceAll('_', '/'))) as [
      unknown,
      unknown,
    ];
    if (typeof at === 'number' && typeof id === 'string') return { at, id };
  } catch {
    // fall through
  }
  throw badRequest('cursor is not one this server issued', [
    { path: 'cursor', message: 'invalid cursor' },
  ]);
}
