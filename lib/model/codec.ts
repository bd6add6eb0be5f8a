import { corrupt } from './errors.js';
import { PARTS_FIELD, toPublicContent } from './parts.js';
import { text, utf8 } from './bytes.js';
import { storedSessionSchema, type Message, type Session, type StoredSession } from './session.js';

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
  const [pre, post, ...list] = coreChunks(session, prior);
  const json = list.length === 1 ? list[0]! : concat(...list);
  return { core: concat(pre!, json, post!), messages: { messages: session.messages, json } };
}

/**
 * The same bytes in pieces, `[pre, post, ...messages]`, none copied: the part before the messages array
 * (up to `"messages":`), the part after it (without the closing brace), and the array in one or two
 * pieces (the prior encoding's bytes, then the new messages).
 */
function coreChunks(session: StoredSession, prior?: EncodedMessages): Uint8Array[] {
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
  if (
    !prior ||
    prior.messages.length > list.length ||
    !prior.messages.every((m, i) => m === list[i])
  )
    return [pre, post, utf8(JSON.stringify(list))];
  const added = list.slice(prior.messages.length);
  // A lazy encoding's pieces, unjoined: a GET sends them as they are.
  const pieces = encodedPieces(prior);
  if (added.length === 0) return [pre, post, ...pieces];
  const tail = utf8((prior.messages.length > 0 ? ',' : '') + JSON.stringify(added).slice(1));
  const last = pieces.pop()!;
  return [pre, post, ...pieces, last.subarray(0, last.byteLength - 1), tail];
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
  const form = decodeStored(body, key);
  if (form.base) throw corrupt(`the object at ${key} is a session delta, not a whole session`);
  return form.session;
}

/** The session as the API shows it: everything but the internal bookkeeping. */
export function publicSession(session: StoredSession): Session {
  const { satchel: _bookkeeping, ...rest } = session;
  const parts = rest.messages.some((m) => PARTS_FIELD in m);
  const messages = parts ? rest.messages.map(toPublicContent) : rest.messages;
  return { ...rest, messages, metadata: rest.metadata ?? {} } as Session;
}

const BOOKKEEPING = utf8(',"satchel":');
const NO_METADATA = utf8(',"metadata":{}}');
const CLOSE = utf8('}');

/**
 * The public JSON of a session (what `publicSession` gives, up to the order of unknown fields) as byte
 * pieces to send one after the other, without encoding the messages again: cut from a stored whole
 * object's bytes (written by Satchel: bookkeeping last), or built from `prior`, an encoding of a prefix
 * of its messages. Null when the session has a message with content parts (answered in another form),
 * or the bytes are not Satchel's.
 */
export function publicChunks(
  session: StoredSession,
  from: { body: Uint8Array } | { prior: EncodedMessages },
): Uint8Array[] | null {
  if (session.messages.some((m) => PARTS_FIELD in m)) return null;
  const end = session.metadata ? CLOSE : NO_METADATA;
  if ('prior' in from) {
    const [pre, post, ...list] = coreChunks(session, from.prior);
    return [pre!, ...list, post!, end];
  }
  const { body } = from;
  if (!session.satchel) return null;
  // Quotes inside strings are escaped and no record holds a `satchel` key: the last match is the field.
  const at = findBytes(body, BOOKKEEPING, true);
  return at < 0 ? null : [body.subarray(0, at), end];
}

/**
 * The public JSON of a large session straight from the bytes of its base and segments, for a reader that
 * holds none of them (a GET need not parse them): the delta's fields and messages (`head`) around the
 * base's messages array, cut from its object, and the segments' arrays. Null when the bytes are not as
 * the delta names them, or a message has content parts (answered in another form).
 */
export function publicChunksOfParts(
  head: StoredSession,
  base: BaseRef,
  baseBody: Uint8Array,
  segs: readonly SegRef[],
  segBodies: readonly Uint8Array[],
): Uint8Array[] | null {
  if (head.messages.some((m) => PARTS_FIELD in m)) return null;
  const first = messagesOf(baseBody, base.json, []);
  const framed = (b: Uint8Array, ref: SegRef) =>
    b.byteLength === ref.json && b[0] === 91 && b[b.byteLength - 1] === 93;
  if (!first || !segs.every((ref, i) => framed(segBodies[i]!, ref))) return null;
  // The base's own id, before its messages (only scalar fields precede them).
  const id = utf8(`"id":${JSON.stringify(head.id)}`);
  const opening = first.json.byteOffset - baseBody.byteOffset - MESSAGES_KEY.byteLength;
  if (findBytes(baseBody.subarray(0, opening), id) < 0) return null;
  if (holdsParts(baseBody, first.json) || segBodies.some((b) => holdsParts(b))) return null;
  // Stand-ins for the parts' messages: the same (null) objects in the encoding and in the session.
  const slots = new Array<Message>(heldMessages(base, segs)).fill(null as unknown as Message);
  const prior = lazyJoin(slots, first.json, segBodies);
  const [pre, post, ...list] = coreChunks(
    { ...head, messages: slots.concat(head.messages) },
    prior,
  );
  return [pre!, ...list, post!, head.metadata ? CLOSE : NO_METADATA];
}

const PARTS_KEY = utf8(`"${PARTS_FIELD}":`);
/** Searched for from its underscore, a byte much rarer in JSON than its opening quote. */
const PARTS_ANCHOR = PARTS_KEY.indexOf(0x5f);

/** What `holdsParts` found, per part body (a part never changes): a cached copy's next GET scans nothing. */
const partsSeen = new WeakMap<Uint8Array, boolean>();

/** Whether a part's messages (`within` its `body`) hold a message with content parts. */
function holdsParts(body: Uint8Array, within = body): boolean {
  let seen = partsSeen.get(body);
  if (seen === undefined) {
    seen = findBytes(within, PARTS_KEY, false, PARTS_ANCHOR) >= 0;
    partsSeen.set(body, seen);
  }
  return seen;
}

/**
 * Where `pattern` first (or last) occurs in `body`, or -1 (no Buffer: this runs in Workers too); found from
 * its byte at `anchor`, which should be a rare one.
 */
function findBytes(body: Uint8Array, pattern: Uint8Array, last = false, anchor = 0): number {
  const byte = pattern[anchor]!;
  const step = (from: number) =>
    last ? (from < 0 ? -1 : body.lastIndexOf(byte, from)) : body.indexOf(byte, from);
  const n = pattern.byteLength;
  for (
    let at = step(last ? body.byteLength - 1 : anchor);
    at >= 0;
    at = step(last ? at - 1 : at + 1)
  ) {
    const from = at - anchor;
    let i = 0;
    while (i < n && body[from + i] === pattern[i]) i++;
    if (i === n) return from;
  }
  return -1;
}

/** How many messages a delta's base and segments hold together. */
export function heldMessages(base: SegRef, segs: readonly SegRef[]): number {
  return segs.reduce((n, s) => n + s.messages, base.messages);
}

/**
 * A large session's base (docs/design.md, "Base, segments and delta"): an immutable object holding the whole
 * session, as stored, at revision `revision` with its first `messages` messages.
 */
export interface BaseRef extends SegRef {
  revision: number;
}

/**
 * A run of a large session's messages between its base and its delta (docs/design.md, "Base, segments and delta"):
 * an immutable object whose body is the encoded messages array, `json` bytes long.
 */
export interface SegRef {
  key: string;
  messages: number;
  /** Bytes of its encoded messages array (so a writer knows the whole size without reading it). */
  json: number;
}

/**
 * What a session object holds: the whole session, or (a large session) its delta: every field but the
 * messages its base and its segments already hold, and the parts it builds on. `bytes` is the whole
 * session's size.
 */
export type StoredObjectForm =
  | { session: StoredSession; base?: undefined; segs?: undefined }
  | { session: StoredSession; base: BaseRef; segs: SegRef[]; bytes: number };

const DELTA_FIELD = 'satchel_delta';
/**
 * A delta with segments had its own field: a Satchel that knows only base and delta then refuses it as
 * corrupt, where it would read `satchel_delta` without the segments' messages. Since 2026-12-03 every
 * delta is written with it, with `dir` and its refs as rows.
 */
const PARTS_DELTA_FIELD = 'satchel_parts';

/**
 * The opening of a delta object, `{"satchel_parts":{dir,base,segs,bytes},"session":`: the session as
 * stored follows, with only the messages after the parts', then `}`. It has no top-level `id`, so nothing
 * reads it as a whole session by mistake. Every part is in the base's folder, `dir`, and each ref is a
 * row `[key within dir, messages, json]` (the base's with its revision fourth): a delta is written on
 * every append, and field names and the folder's path in every ref were most of its refs' bytes.
 */
export function deltaOpening(base: BaseRef, segs: readonly SegRef[], bytes: number): Uint8Array {
  const dir = base.key.slice(0, base.key.lastIndexOf('/') + 1);
  // Each ref (only refs have a `key`) as a row: its key within `dir`, its counts, the base's revision.
  const refs = JSON.stringify({ dir, base, segs, bytes }, (k, v) => {
    if (!v?.key) return v;
    if (!v.key.startsWith(dir)) throw new Error(`part ${v.key} is not in its base's folder ${dir}`);
    return [v.key.slice(dir.length), v.messages, v.json, ...(k === 'base' ? [v.revision] : [])];
  });
  return utf8(`{"${PARTS_DELTA_FIELD}":${refs},"session":`);
}

/** The length of two encoded arrays joined: "[a,b]" and "[c]" make "[a,b,c]". */
export function joinedLength(a: number, b: number): number {
  return b <= 2 ? a : a <= 2 ? b : a + b - 1;
}

/** Encoded arrays joined into one (`joinedLength` bytes); the first one itself when the rest are empty. */
export function joinArrays(first: Uint8Array, ...rest: Uint8Array[]): Uint8Array {
  const pieces = arrayPieces(first, rest);
  return pieces.length === 1 ? pieces[0]! : concat(...pieces);
}

/** The pieces `joinArrays` concatenates (none copied): one array, or `[`, the runs' insides with commas, `]`. */
function arrayPieces(first: Uint8Array, rest: readonly Uint8Array[]): Uint8Array[] {
  const runs = [first, ...rest].filter((a) => a.byteLength > 2);
  if (runs.length <= 1) return [runs[0] ?? first];
  const pieces = runs.flatMap((a, i) => [i ? COMMA : OPEN, a.subarray(1, a.byteLength - 1)]);
  return [...pieces, CLOSE_ARRAY];
}

const COMMA = utf8(',');
const OPEN = utf8('[');
const CLOSE_ARRAY = utf8(']');

const LENGTH = Symbol('encoded length');
const PIECES = Symbol('encoded pieces');

/**
 * An encoding of `messages` as arrays joined only when its bytes are first asked for: a cold read of a
 * large session keeps its parts' bytes as they came, and copies them into one array only when a write
 * needs them whole (a fold, or an append that extends the encoding); a GET sends them as pieces
 * (`encodedPieces`).
 */
export function lazyJoin(
  messages: readonly unknown[],
  first: Uint8Array,
  rest: readonly Uint8Array[],
): EncodedMessages {
  let json: Uint8Array | undefined;
  const length = rest.reduce((n, r) => joinedLength(n, r.byteLength), first.byteLength);
  return {
    messages,
    get json() {
      if (json) return json;
      json = joinArrays(first, ...rest);
      // Joined: the parts' buffers (a whole base object among them) are no longer held.
      [first, rest] = [json, []];
      return json;
    },
    [LENGTH]: length,
    [PIECES]: () => (json ? [json] : arrayPieces(first, rest)),
  } as EncodedMessages;
}

/** The bytes of an encoding in pieces to send one after the other: a lazy one's parts, not joined. */
export function encodedPieces(encoded: EncodedMessages): Uint8Array[] {
  return (encoded as { [PIECES]?: () => Uint8Array[] })[PIECES]?.() ?? [encoded.json];
}

/** The byte length of an encoding, without joining a lazy one. */
export function encodedLength(encoded: EncodedMessages): number {
  return (encoded as { [LENGTH]?: number })[LENGTH] ?? encoded.json.byteLength;
}

/**
 * The encoded `messages` array inside a whole object's bytes, `json` bytes long: only scalar fields come
 * before it (quotes inside strings are escaped), so the first `"messages":` is the field. Undefined when
 * the bytes there are not an array of that length.
 */
export function messagesOf(
  body: Uint8Array,
  json: number,
  messages: readonly unknown[],
): EncodedMessages | undefined {
  const at = findBytes(body, MESSAGES_KEY);
  if (at < 0) return undefined;
  const start = at + MESSAGES_KEY.byteLength;
  const bytes = body.subarray(start, start + json);
  if (bytes.byteLength !== json || bytes[0] !== 91 || bytes[json - 1] !== 93) return undefined;
  return { messages, json: bytes };
}

const MESSAGES_KEY = utf8('"messages":');

/** Parses a session object in either form (`decodeSession` for the whole one). */
export function decodeStored(body: Uint8Array, key: string): StoredObjectForm {
  const raw = parseJson(body, key);
  const obj = raw as Record<string, unknown> | null;
  const parts = obj?.[PARTS_DELTA_FIELD];
  const delta = (parts ?? obj?.[DELTA_FIELD]) as
    { base?: BaseRef; segs?: SegRef[]; bytes?: number; dir?: unknown } | undefined;
  if (delta === undefined) return { session: parseSession(raw, key, true) };
  // Refs written since 2026-12-03 are rows, `[key, messages, json, revision?]`.
  const row = (r: unknown) =>
    Array.isArray(r) ? { key: r[0], messages: r[1], json: r[2], revision: r[3] } : r;
  const base = row(delta?.base) as BaseRef | undefined;
  const segs = parts === undefined ? [] : Array.isArray(delta?.segs) ? delta.segs.map(row) : 0;
  if (
    !validRef(base) ||
    !Number.isSafeInteger(base.revision) ||
    !Array.isArray(segs) ||
    !segs.every(validRef) ||
    !Number.isSafeInteger(delta.bytes) ||
    typeof (delta.dir ?? '') !== 'string'
  )
    throw corrupt(`the object at ${key} is not a valid session delta`);
  // Since 2026-12-03 the refs hold their keys within `dir` (before, whole keys and no `dir`).
  for (const ref of [base, ...segs]) ref.key = (delta.dir ?? '') + ref.key;
  const session = parseSession((raw as { session?: unknown }).session, key);
  return { session, base, segs, bytes: delta.bytes! };
}

function validRef(ref: unknown): ref is SegRef {
  const r = ref as SegRef | undefined;
  return (
    typeof r?.key === 'string' && Number.isSafeInteger(r.messages) && Number.isSafeInteger(r.json)
  );
}

/** The whole session from a delta's head, its base (checked to be the one it names) and its segments' messages. */
export function mergeParts(
  head: StoredSession,
  base: StoredSession,
  ref: BaseRef,
  runs: readonly (readonly Message[])[],
): StoredSession {
  if (
    base.id !== head.id ||
    base.revision !== ref.revision ||
    base.messages.length !== ref.messages
  )
    throw corrupt(`the base at ${ref.key} is not the one its session names`);
  return { ...head, messages: base.messages.concat(...runs, head.messages) };
}

/**
 * The messages of an immutable part Satchel stored itself (a base or a segment), checked for their shape
 * (an object with a known role, string content, and tool calls with a name and arguments) rather than
 * through the whole message schema, which they passed when they were first stored and which costs a cold
 * read of a large session about as much CPU as parsing its JSON. Null when they are not messages.
 */
function partMessages(raw: unknown): Message[] | null {
  if (!Array.isArray(raw)) return null;
  for (const m of raw as Partial<Message>[]) {
    if (typeof m?.content !== 'string' || !ROLES.has(m.role as string)) return null;
    if (
      m.tool_calls !== undefined &&
      !(Array.isArray(m.tool_calls) && m.tool_calls.every(validCall))
    )
      return null;
  }
  return raw as Message[];
}

function validCall(call: unknown): boolean {
  const f = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
  return typeof f?.name === 'string' && typeof f.arguments === 'string';
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** A segment's messages, checked to be the run its ref names (`json` bytes, `messages` of them). */
export function decodeSegment(body: Uint8Array, ref: SegRef): Message[] {
  const messages = partMessages(parseJson(body, ref.key));
  if (!messages || messages.length !== ref.messages || body.byteLength !== ref.json)
    throw corrupt(`the segment at ${ref.key} is not the one its session names`);
  return messages;
}

/** A base: its fields through the schema, its messages as `partMessages` checks them. */
export function decodeBase(body: Uint8Array, key: string): StoredSession {
  const raw = parseJson(body, key) as { messages?: unknown } | null;
  const messages = partMessages(raw?.messages);
  if (!messages) throw corrupt(`the base at ${key} is not a valid session`);
  const session = parseSession({ ...raw, messages: [] }, key);
  session.messages = messages;
  return session;
}

function parseJson(body: Uint8Array, key: string): unknown {
  try {
    return JSON.parse(text(body));
  } catch {
    throw corrupt(`the object at ${key} is not valid JSON`);
  }
}

function parseSession(raw: unknown, key: string, whole = false): StoredSession {
  // An odek file at its key (a bucket filled from odek's folder) may hold null optional message fields.
  let parsed = storedSessionSchema.safeParse(raw);
  if (!parsed.success && raw && typeof raw === 'object')
    parsed = storedSessionSchema.safeParse(withoutNullFields(raw as Record<string, unknown>));
  if (!parsed.success) throw corrupt(`the object at ${key} is not a valid session`);
  const session = parsed.data;
  // An older odek file has no `turns`: the number of its user messages, as the contract counts them.
  if (whole && (raw as { turns?: unknown }).turns === undefined)
    session.turns = session.messages.filter((m) => m.role === 'user').length;
  return session;
}

/** Optional message fields a writer may leave as null (a Go nil without `omitempty`, an SDK's dump). */
const NULLABLE_MESSAGE_FIELDS = ['name', 'tool_call_id', 'tool_calls', 'reasoning_content'];

/**
 * The file with its messages' null optional fields read as absent (as `content: null` reads as ""), and
 * `messages: null` (Go's nil slice: odek's field has no `omitempty`) as no messages.
 */
export function withoutNullFields(raw: Record<string, unknown>): Record<string, unknown> {
  if (raw.messages === null) return { ...raw, messages: [] };
  if (!Array.isArray(raw.messages)) return raw;
  const messages = raw.messages.map((m: unknown) => {
    if (!m || typeof m !== 'object' || Array.isArray(m)) return m;
    const nulls = NULLABLE_MESSAGE_FIELDS.filter((k) => (m as Record<string, unknown>)[k] === null);
    if (nulls.length === 0) return m;
    const copy = { ...(m as Record<string, unknown>) };
    for (const k of nulls) delete copy[k];
    return copy;
  });
  return { ...raw, messages };
}
