import { SatchelError } from '../errors.js';
import { text, utf8 } from '../storage/port.js';
import { storedSessionSchema, type Session, type StoredSession } from './schema.js';

const ORDER = [
  'id',
  'created_at',
  'updated_at',
  'model',
  'provider',
  'turns',
  'task',
  'sandbox',
  'messages',
  'external_refs',
  'untrusted_ingested',
  'episode_untrusted',
  'episode_taint_tracked',
  'revision',
] as const;

/** Serialises a session as stored: compact JSON, odek's field order, bookkeeping last. */
export function encodeSession(session: StoredSession): Uint8Array {
  return concat(encodeCore(session), encodeTail(session));
}

/** Everything but the bookkeeping, as UTF-8 without the closing brace (the large, expensive part). */
export function encodeCore(session: StoredSession): Uint8Array {
  const ordered: Record<string, unknown> = {};
  for (const key of ORDER) ordered[key] = session[key];
  for (const [key, value] of Object.entries(session)) if (!(key in ordered) && key !== 'satchel') ordered[key] = value;
  const json = JSON.stringify(ordered);
  return utf8(json.slice(0, -1));
}

/** The closing part: the bookkeeping field (if any) and the closing brace. */
export function encodeTail(session: StoredSession): Uint8Array {
  return utf8(session.satchel ? `,"satchel":${JSON.stringify(session.satchel)}}` : '}');
}

/** Joins byte arrays into one. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Parses a stored object (Satchel's or an odek file); old files without the newer fields get defaults. */
export function decodeSession(body: Uint8Array, key: string): StoredSession {
  let raw: unknown;
  try {
    raw = JSON.parse(text(body));
  } catch {
    throw new SatchelError(500, 'Corrupt Stored Object', `the object at ${key} is not valid JSON`);
  }
  const parsed = storedSessionSchema.safeParse(raw);
  if (!parsed.success) throw new SatchelError(500, 'Corrupt Stored Object', `the object at ${key} is not a valid session`);
  return parsed.data;
}

/** The session as the API shows it: everything but the internal bookkeeping. */
export function publicSession(session: StoredSession): Session {
  const { satchel: _bookkeeping, ...rest } = session;
  return rest;
}
