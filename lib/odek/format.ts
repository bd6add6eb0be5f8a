import {
  changedNumber,
  jsonPathAt,
  MAY_CHANGE,
  overflowingNumber,
  pathText,
} from '../model/json-numbers.js';
import { toStoredContent } from '../model/parts.js';
import type * as z from 'zod';
import type {
  CreateSessionInput,
  ExternalRefInput,
  ReplaceInput,
  Session,
} from '../client/types.js';
import { SESSION_FIELDS, withoutNullFields } from '../model/codec.js';
import { externalRefInputSchema, storedSessionSchema } from '../model/session.js';
import { createBodySchema } from '../model/requests.js';
import type { ExternalRef, StoredSession } from '../model/session.js';

/**
 * odek's session file (`~/.odek/sessions/<id>.json`), both ways: reading one for import (old files
 * without `provider`, `external_refs` or the taint fields included) and writing one for export.
 *
 * What an import carries: id, task, model, provider, messages (every field of every message), external
 * refs (their `created_at` when it is an RFC 3339 time), sandbox, untrusted_ingested, episode_untrusted,
 * Satchel's `metadata` (which an export writes), and created_at / updated_at (through the create
 * route's optional times). What it cannot: turns and episode_taint_tracked (the server derives both),
 * and top-level fields odek does not define (reported per file).
 */

/** Fields the server sets itself; an import neither sends nor compares them. */
export const SERVER_OWNED = [
  'created_at',
  'updated_at',
  'turns',
  'episode_taint_tracked',
  'revision',
] as const;

/** The odek file schema with times optional (an import does not need them); Satchel's bookkeeping ignored. */
const odekFileSchema = storedSessionSchema
  .omit({ satchel: true })
  .partial({ created_at: true, updated_at: true });

export type OdekFileResult =
  { ok: true; session: OdekSession; unknownFields: string[] } | { ok: false; reason: string };

/** An odek session as read, normalised by the stored-format schema (defaults for absent fields). */
export type OdekSession = z.output<typeof odekFileSchema>;

// `metadata` is Satchel's (v1.1), which an export writes: an import carries it.
const KNOWN = new Set<string>([...SESSION_FIELDS, 'satchel', 'metadata']);

/** Parses one odek session file's text. */
export function parseOdekFile(text: string): OdekFileResult {
  let raw: unknown;
  try {
    // A byte order mark (a Windows editor's UTF-8) is not part of the JSON.
    raw = JSON.parse(text.replace(/^\ufeff/, ''));
  } catch (err) {
    // Only where: the engine's message quotes the text around it, which may be part of a secret.
    const at = /at position (\d+)/.exec((err as Error).message)?.[1];
    return { ok: false, reason: `not JSON${at ? ` (at character ${at})` : ''}` };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return { ok: false, reason: 'not an odek session: not a JSON object' };
  // JSON.parse rounds an integer past 2^53, makes 1e-400 0 and 1e400 Infinity (sent on, it would be stored
  // as null): such a file is refused, as the server refuses such a body, rather than imported changed.
  const changed = MAY_CHANGE.test(text) ? changedNumber(text) : null;
  if (changed !== null) {
    // The path, not the number: it may be a secret's (a numeric PIN under `password`), and import output
    // ends up in terminals and CI logs (until review s59h it was quoted).
    const at = `at ${pathText(jsonPathAt(text, changed.at)) || '(root)'}`;
    return {
      ok: false,
      reason: changed.zero
        ? `a non-zero number JavaScript reads as 0 ${at}`
        : `a number JavaScript cannot keep ${at} (past 2^53; write it as a string)`,
    };
  }
  const overflow = /\d[eE]\+?\d{3}|\d{309}/.test(text) ? overflowingNumber(text) : null;
  if (overflow !== null)
    return { ok: false, reason: `a number past the range of a double: ${overflow.slice(0, 40)}` };
  const parsed = odekFileSchema.safeParse(withoutNullFields(raw as Record<string, unknown>));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : '(root)';
    return { ok: false, reason: `not an odek session: ${where}: ${issue.message}` };
  }
  const session = parsed.data;
  const unknownFields = Object.keys(raw).filter((k) => !KNOWN.has(k));
  for (const k of [...unknownFields, 'satchel']) delete (session as Record<string, unknown>)[k];
  return { ok: true, session, unknownFields };
}

/** The create body that imports an odek session under its own id; `now`: the server's time, when known. */
export function createBody(session: OdekSession, now?: number): CreateSessionInput {
  return {
    id: session.id,
    task: session.task,
    ...(session.model ? { model: session.model } : {}),
    ...(session.provider ? { provider: session.provider } : {}),
    messages: session.messages,
    external_refs: session.external_refs.map(refInput),
    sandbox: session.sandbox,
    untrusted_ingested: session.untrusted_ingested,
    episode_untrusted: session.episode_untrusted,
    ...(session.metadata && Object.keys(session.metadata).length
      ? { metadata: session.metadata }
      : {}),
    ...timesOf(session, now),
  };
}

/**
 * The file's own times, when they are RFC 3339 times the create route takes (older files may lack them);
 * RFC 3339 allows a lower-case `t` and `z`, read as upper-case. An `updated_at` the import cannot read (or
 * lacks) beside a `created_at` it can is the time of the import (review s53d: sent alone, `created_at`
 * became `updated_at` too, and a session imported a minute ago listed as months old, for a cleanup to
 * take); one it cannot read beside an `updated_at` it can is that `updated_at` (the route's rule). The
 * time of the import is the server's, as far as the CLI knows it (review s67h: the server refuses a time
 * more than 5 minutes ahead of its own).
 */
function timesOf(
  session: OdekSession,
  now = Date.now(),
): { created_at?: string; updated_at?: string } {
  const created = fileTime(session.created_at);
  const updated =
    fileTime(session.updated_at) ??
    (created && new Date(Math.max(now, Date.parse(created))).toISOString());
  return {
    ...(created ? { created_at: created } : {}),
    ...(updated ? { updated_at: updated } : {}),
  };
}

function fileTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = createBodySchema.shape.created_at.safeParse(value.toUpperCase());
  return parsed.success ? parsed.data : undefined;
}

/** True when the import stamps `updated_at` itself: the file has a `created_at` it keeps, no `updated_at`. */
export function stampsUpdatedAt(session: OdekSession): boolean {
  return !fileTime(session.updated_at) && !!fileTime(session.created_at);
}

/** The times a file has that the import cannot keep (not RFC 3339 with an offset); the server sets them. */
export function unkeptTimes(session: OdekSession): string[] {
  return (['created_at', 'updated_at'] as const).filter((k) => {
    const v: unknown = session[k];
    return typeof v === 'string' && v !== '' && fileTime(v) === undefined;
  });
}

/**
 * The replace body that overwrites a stored session with an odek session (`import --overwrite`);
 * `messages` in place of the file's (the stored ones, when they are the file's as the size cap kept them).
 */
export function replaceBody(
  session: OdekSession,
  messages: ReplaceInput['messages'] = session.messages,
): ReplaceInput {
  // A replace keeps the stored session's times (the route takes none).
  const { id: _id, created_at: _c, updated_at: _u, ...body } = createBody(session);
  // The file's model and provider even when empty: a PUT without them keeps the stored ones.
  return {
    ...body,
    model: session.model ?? '',
    provider: session.provider ?? '',
    messages,
  };
}

/** An external ref as the create route takes it: its time kept when it is one the route accepts. */
export function refInput(ref: ExternalRef): ExternalRefInput {
  const createdAt = externalRefInputSchema.shape.created_at.safeParse(ref.created_at);
  return {
    kind: ref.kind,
    uri: ref.uri,
    created_by: ref.created_by,
    read_only: ref.read_only,
    ...(createdAt.success && createdAt.data ? { created_at: createdAt.data } : {}),
  };
}

/** A session as an odek file: compact JSON, odek's fields in odek's order, no Satchel `revision`. */
export function odekFileText(session: Session | StoredSession): string {
  const out: Record<string, unknown> = {};
  for (const key of SESSION_FIELDS) if (key !== 'revision') out[key] = session[key];
  // odek reads `content` as a string: messages sent as parts go back to their stored form.
  out.messages = (session.messages as readonly { content?: unknown }[]).map((m) =>
    toStoredContent(m),
  );
  for (const [key, value] of Object.entries(session))
    if (!(key in out) && key !== 'revision' && key !== 'satchel') out[key] = value;
  if (session.metadata && Object.keys(session.metadata).length === 0) delete out.metadata;
  return JSON.stringify(out);
}
