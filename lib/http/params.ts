import type { Context } from 'hono';
import { badRequest, preconditionRequired } from '../model/errors.js';
import type { ExpectedRevision } from '../model/revision.js';
import { instantOf } from '../model/session.js';
import { parseIfMatch, type Env } from './context.js';

/** Parsing of path, query and header parameters into what operations take; each failure names its parameter. */

/** A path parameter the route's path declares. */
export function param(c: Context<Env>, name: string): string {
  const value = c.req.param(name);
  if (value === undefined) throw new Error(`route has no path parameter ${name}`);
  return value;
}

/** `limit`: 1-100, default 20. */
export function parseLimit(value: string | undefined): number {
  if (value === undefined || value === '') return 20;
  // Digits only: Number() would read 0x10, 1e1 and " 10" too.
  if (!/^(100|[1-9]\d?)$/.test(value))
    throw badRequest('limit must be an integer from 1 to 100', [
      { path: 'limit', message: 'must be an integer from 1 to 100' },
    ]);
  return Number(value);
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * `updated_after`: an RFC 3339 time as epoch ms (past the millisecond as a fraction, as the list's times);
 * a `+` offset that arrived as a space gets a hint.
 */
export function parseUpdatedAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (rfc3339.test(value) && isRealTime(value)) return instantOf(value);
  // An unencoded `+` in a query string decodes to a space: say how to send it.
  const hint = /^\S+ \d{2}:\d{2}$/.test(value)
    ? ' (encode the "+" of the offset as %2B, or use Z)'
    : '';
  throw badRequest(`updated_after must be an RFC 3339 time${hint}`, [
    { path: 'updated_after', message: `not RFC 3339${hint}` },
  ]);
}

/** `If-Match` where a write needs it (a replace): 428 without it. */
export function requireIfMatch(c: Context<Env>): ExpectedRevision {
  const ifMatch = parseIfMatch(c.req.header('if-match'));
  if (ifMatch === undefined)
    throw preconditionRequired('PUT needs If-Match with the revision you read');
  return ifMatch;
}

/**
 * The pairs to filter a list by, each `metadata.<key>=<value>` or `metadata[<key>]=<value>` (OpenAPI's
 * deepObject form): a session matches when its metadata holds every one. 400 for a key given twice (two
 * values, or both forms), an empty key, or any other parameter that starts with `metadata`, which would
 * otherwise be ignored and answer every session.
 */
export function parseMetadataFilter(
  queries: Record<string, string[]>,
): [string, string][] | undefined {
  const pairs = new Map<string, string>();
  for (const [name, values] of Object.entries(queries)) {
    if (!name.startsWith('metadata')) continue;
    const key = /^metadata\.(.+)$/s.exec(name)?.[1] ?? /^metadata\[(.+)\]$/s.exec(name)?.[1];
    if (key === undefined || values.length > 1 || pairs.has(key)) {
      const detail = `${name}: one metadata.<key>=<value> or metadata[<key>]=<value> per key`;
      throw badRequest(detail, [{ path: name, message: detail }]);
    }
    pairs.set(key, values[0]!);
  }
  return pairs.size ? [...pairs] : undefined;
}

/** The parameters of `GET /v1/sessions` besides the metadata filter. */
const LIST_PARAMS = new Set(['limit', 'cursor', 'updated_after']);

/**
 * 400 for a list parameter given twice or one the list does not know (a misspelled `updated_afer` would
 * otherwise be ignored and answer every session, as a second `limit` would answer the first's page).
 */
export function assertListParams(queries: Record<string, string[]>): void {
  for (const [name, values] of Object.entries(queries)) {
    if (name.startsWith('metadata')) continue; // parseMetadataFilter's
    const known = LIST_PARAMS.has(name);
    if (known && values.length === 1) continue;
    const shown = name.slice(0, 64).toWellFormed();
    const detail = known
      ? `${shown}: given ${values.length} times; give it once`
      : `${shown}: not a parameter of this list (limit, cursor, updated_after, metadata.<key>)`;
    throw badRequest(detail, [{ path: shown, message: detail }]);
  }
}

/**
 * Whether an RFC 3339-shaped time names a real instant. `Date.parse` answers NaN for most that do not
 * (month 13, minute 60, a leap second, an offset of 24 hours), which would make `updated_after` keep
 * nothing, but takes February 30 as March 2 and 24:00 as the next midnight.
 */
function isRealTime(value: string): boolean {
  const day = Number(value.slice(8, 10));
  const date = new Date(Date.UTC(Number(value.slice(0, 4)), Number(value.slice(5, 7)) - 1, day));
  return (
    !Number.isNaN(Date.parse(value)) && date.getUTCDate() === day && value.slice(11, 13) < '24'
  );
}
