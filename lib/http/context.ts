import { text, fromBase64 } from '../model/bytes.js';
import type { Context } from 'hono';
import type { RequestContext, Schedule } from '../model/context.js';
import { badRequest } from '../model/errors.js';
import { describeError } from '../model/log.js';
import type { ExpectedRevision } from '../model/revision.js';
import type { Services } from '../server/services.js';
import type { WriteContext, WriteResult } from '../sessions/store.js';
import { concat, publicSession } from '../model/codec.js';
import type { StoredSession } from '../model/session.js';
import { MIN_KNOWN_VALUE } from '../pipeline/redact.js';
import type { AuthVariables } from './auth.js';

/**
 * The one request context: Hono's context carries the services (`c.var.services`) and the caller
 * (`c.var.caller`: namespace, device, scope); `requestContext(c)` turns them into what operations take.
 */
export type Env = { Variables: AuthVariables & { services: Services } };

/** Background work of this request: waitUntil on Workers, the process elsewhere. */
export function scheduler(c: Context<Env>): Schedule {
  const { background, log } = c.var.services;
  let ctx: { waitUntil(p: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx; // Hono throws where there is none (Node, Lambda): once per request, not per work
  } catch {
    return (work) => background.track(work);
  }
  return (work) =>
    ctx.waitUntil(
      work.catch((err) => log.warn('background work failed', { error: describeError(err) })),
    );
}

/** The caller's namespace. */
export function namespaceOf(c: Context<Env>): string {
  return c.var.caller.namespace;
}

/** Who asks and how to keep background work alive, for read operations. */
export function requestContext(c: Context<Env>): RequestContext {
  return { device: c.var.caller.device, schedule: scheduler(c) };
}

/** The context of a write: the request context plus Idempotency-Key and per-request secrets (400 when malformed). */
export function writeContext(c: Context<Env>): WriteContext {
  const key = c.req.header('idempotency-key');
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw badRequest('Idempotency-Key must be 1-255 visible ASCII characters', [
      { path: 'Idempotency-Key', message: 'invalid' },
    ]);
  }
  const secrets = requestSecrets(c.req.header('satchel-secrets'));
  return {
    ...requestContext(c),
    ...(key ? { idempotencyKey: key } : {}),
    ...(secrets.length ? { knownValues: secrets } : {}),
  };
}

/**
 * `Satchel-Secrets`: secret values for this request only, as base64 of a JSON array of strings, each at
 * least `MIN_KNOWN_VALUE` characters. They are redacted from everything this request stores, in every
 * encoding, and never stored themselves.
 */
export function requestSecrets(header: string | undefined): string[] {
  if (!header) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text(fromBase64(header.trim())));
  } catch {
    // not base64 of JSON: refused below
  }
  if (
    Array.isArray(parsed) &&
    parsed.every((v) => typeof v === 'string' && v.isWellFormed()) &&
    parsed.length <= 100
  ) {
    // A shorter value would not be redacted (it would destroy ordinary text): refused, not ignored. An
    // empty one (an unset variable in the caller's list) names no secret: it is left out.
    const values = parsed.filter((v) => v.trim() !== '');
    if (values.every((v) => v.length >= MIN_KNOWN_VALUE)) return values;
    throw badRequest(`Satchel-Secrets values must be at least ${MIN_KNOWN_VALUE} characters long`, [
      { path: 'Satchel-Secrets', message: 'too short' },
    ]);
  }
  throw badRequest('Satchel-Secrets must be base64 of a JSON array of at most 100 strings', [
    { path: 'Satchel-Secrets', message: 'invalid' },
  ]);
}

/** A session's ETag: its revision as a strong tag. */
export function etag(revision: number): string {
  return `"${revision}"`;
}

/**
 * Parses If-Match: `*` is any revision; a list of tags matches when any one does (RFC 9110 13.1.1). A tag is
 * opaque: it matches only as the server wrote it (`"7"`, weak `W/"7"`, or the bare `7`), so `"07"` is not
 * `"7"`; a tag that is not a revision, or a field that is not a list of tags as a whole (`"1"x`), never
 * matches (until 2026-12-06 the digits of any quoted piece did: review s52g).
 */
export function parseIfMatch(header: string | undefined): ExpectedRevision | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return 'any';
  const revisions = (entityTags(header) ?? [])
    .map((tag) => /^(?:W\/)?"(0|[1-9]\d{0,14})"$|^(0|[1-9]\d{0,14})$/.exec(tag))
    .flatMap((m) => (m ? [Number(m[1] ?? m[2])] : []));
  if (revisions.length === 0) return 'unmatchable';
  return revisions.length === 1 ? revisions[0]! : revisions;
}

/**
 * The tags of an If-Match or If-None-Match list (a quoted tag may hold a comma: `"9,3"` is one tag;
 * empty elements and blanks around commas are allowed), or null when the field is not such a list.
 */
function entityTags(header: string): string[] | null {
  const tags: string[] = [];
  const element = /[ \t]*(?:((?:W\/)?"[^"]*")|([^\s,"]+))?[ \t]*(,|$)/y;
  element.lastIndex = 0;
  while (element.lastIndex < header.length) {
    const at = element.lastIndex;
    const m = element.exec(header);
    if (!m) return null;
    const tag = m[1] ?? m[2];
    if (tag !== undefined) tags.push(tag);
    if (m[3] === '' || element.lastIndex === at) break;
  }
  return tags;
}

/**
 * Answers a session with its ETag, or 304 when `If-None-Match` holds it (unless `conditional` is false).
 * `chunks`, when given, are its public JSON in pieces (store.getStored): sent one after the other, so a
 * 10 MB session is neither encoded nor copied again.
 */
export function sendSession(
  c: Context<Env>,
  session: StoredSession,
  conditional = true,
  chunks?: Uint8Array[] | null,
): Response {
  c.header('ETag', etag(session.revision));
  const inm = conditional ? c.req.header('if-none-match') : undefined;
  if (inm && noneMatch(inm, session.revision)) {
    return c.body(null, 304);
  }
  if (!chunks) return c.json(publicSession(session));
  const length = chunks.reduce((n, b) => n + b.byteLength, 0);
  const json = { 'content-type': 'application/json' };
  // A small session is joined (a copy costs less than a stream); a large one streams its pieces.
  if (length <= STREAM_FROM) return c.body(concat(...chunks) as Uint8Array<ArrayBuffer>, 200, json);
  const body = new ReadableStream<Uint8Array>({
    start(out) {
      for (const chunk of chunks) if (chunk.byteLength) out.enqueue(chunk);
      out.close();
    },
  });
  return c.body(body, 200, { ...json, 'content-length': String(length) });
}

/** Whether an `If-None-Match` header holds the revision's tag (`*`, or the tag, weak or strong). */
export function noneMatch(header: string, revision: number): boolean {
  const tag = etag(revision);
  return (
    header.trim() === '*' || (entityTags(header) ?? []).some((t) => t.replace(/^W\//, '') === tag)
  );
}

/** Bodies above this many bytes are streamed in pieces rather than joined. */
const STREAM_FROM = 256 * 1024;

/** Answers a write receipt with the new ETag (and `Idempotent-Replayed` on a replay). */
export function sendReceipt(c: Context<Env>, result: WriteResult): Response {
  markReplay(c, result);
  c.header('ETag', etag(result.receipt.revision));
  return c.json(result.receipt);
}

/** Sets `Idempotent-Replayed: true` when nothing was written because an earlier attempt had landed. */
export function markReplay(c: Context<Env>, result: { replayed: boolean }): void {
  if (result.replayed) c.header('Idempotent-Replayed', 'true');
}
