import { corrupt } from './errors.js';
import { PARTS_FIELD, toPublicContent } from './parts.js';
import { text, utf8 } from './bytes.js';
import { storedSessionSchema, type Session, type StoredSession } from './session.js';

/** The stored format's fields in odek's order (also the order of an odek export). */
export const SESSION_FIELDS = [
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
  return concat(encodeCoreParts(session).core, encodeTail(session));
}

/** The encoded `messages` array of a stored session, kept with the cached copy so an append can reuse it. */
export interface EncodedMessages {
  /** The message objects the bytes encode (compared by identity). */
  messages: readonly unknown[];
  json: Uint8Array;
}

const MESSAGES_SLOT = '\u0001satchel-messages\u0001';

/**
 * Everything but the bookkeeping, as UTF-8 without the closing brace (the large, expensive part), and
 * the encoded messages array on its own. When `prior` encodes a prefix of `session.messages` (the same
 * objects: an append), only the new messages are serialised and the prior bytes are reused.
 */
export function encodeCoreParts(
  session: StoredSession,
  prior?: EncodedMessages,
): { core: Uint8Array; messages: EncodedMessages } {
  const ordered: Record<string, unknown> = {};
  for (const key of SESSION_FIELDS)
    ordered[key] = key === 'messages' ? MESSAGES_SLOT : session[key];
  for (const [key, value] of Object.entries(session))
    if (!(key in ordered) && key !== 'satchel') ordered[key] = value;
  const json = JSON.stringify(ordered);
  // Only scalar fields precede messages, and quotes inside strings are escaped: the first match is the slot.
  const slot = `"messages":${JSON.stringify(MESSAGES_SLOT)}`;
  const at = json.indexOf(slot);
  const pre = utf8(json.slice(0, at + '"messages":'.length));
  const post = utf8(json.slice(at + slot.length, -1));
  const list = session.messages;
  let messagesJson: Uint8Array;
  if (
    prior &&
    prior.messages.length <= list.length &&
    prior.messages.every((m, i) => m === list[i])
  ) {
    const added = list.slice(prior.messages.length);
    if (added.length === 0) messagesJson = prior.json;
    else {
      const tail = utf8((prior.messages.length > 0 ? ',' : '') + JSON.stringify(added).slice(1));
      messagesJson = concat(prior.json.subarray(0, prior.json.byteLength - 1), tail);
    }
  } else messagesJson = utf8(JSON.stringify(list));
  return {
    core: concat(pre, messagesJson, post),
    messages: { messages: list, json: messagesJson },
  };
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
    throw corrupt(`the object at ${key} is not valid JSON`);
  }
  const parsed = storedSessionSchema.safeParse(raw);
  if (!parsed.success) throw corrupt(`the object at ${key} is not a valid session`);
  return parsed.data;
}

/** The session as the API shows it: everything but the internal bookkeeping. */
export function publicSession(session: StoredSession): Session {
  const { satchel: _bookkeeping, ...rest } = session;
  const parts = rest.messages.some((m) => PARTS_FIELD in m);
  const messages = parts ? rest.messages.map(toPublicContent) : rest.messages;
  return { ...rest, messages, metadata: rest.metadata ?? {} } as Session;
}

const BOOKKEEPING = utf8(',"satchel":');

/**
 * The public JSON of a stored object, cut from its bytes without encoding it again, when the bytes are
 * exactly what `publicSession` would give: written by Satchel (bookkeeping last), with metadata, and no
 * message with content parts (those are answered in another form). Else null.
 */
export function publicBytes(session: StoredSession, body: Uint8Array): Uint8Array | null {
  if (!session.satchel || !session.metadata || session.messages.some((m) => PARTS_FIELD in m))
    return null;
  // Quotes inside strings are escaped and no record holds a `satchel` key: the last match is the field.
  for (let at = body.lastIndexOf(44); at >= 0; at = at > 0 ? body.lastIndexOf(44, at - 1) : -1)
    if (BOOKKEEPING.every((b, i) => body[at + i] === b))
      return concat(body.subarray(0, at), utf8('}'));
  return null;
}
