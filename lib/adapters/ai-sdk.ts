// Load and save a Vercel AI SDK chat (`UIMessage[]`) in a Satchel session: `loadUIMessages` before the
// model call, `saveUIMessages` from `toUIMessageStreamResponse({ onFinish })`.
import type { UIMessage } from 'ai';
import type { CallOptions, Message, MessageInput, SatchelClient } from '../client/index.js';
import { appendOrCreate, isStatus, onRevision, without, type SessionDefaults } from './append.js';
import { toUIParts } from './parts.js';
import { sha256Hex } from './sha256.js';

/** The extra message field that keeps a UIMessage's own fields (id, metadata…) beside its parts. */
export const UI_MESSAGE_FIELD = 'ai_sdk_message';

/** The server's bound on a part's `type`; a message with a longer one is stored whole in UI_MESSAGE_FIELD. */
const MAX_PART_TYPE = 64;

export interface SaveOptions extends SessionDefaults {
  /**
   * What is stored already: the messages `loadUIMessages` gave (or their ids). Those are skipped with no
   * request; without it, one GET finds the stored ids first.
   */
  known?: readonly (string | { id: string })[];
  /**
   * The request regenerates an answer (useChat's `regenerate()`, trigger `regenerate-message`): the stored
   * answer after the newest known message of `messages` (up to the next user message), where the client
   * dropped it, is replaced by the new messages, in one PUT based on the revision read. Later turns stay.
   */
  regenerate?: boolean;
}

export interface SaveResult {
  /** How many messages this call appended (0 with no `replaced`: nothing was new, and nothing written). */
  appended: number;
  /** 1 when a stored message was replaced by its continued form (see `saveUIMessages`); absent otherwise. */
  replaced?: number;
  /** With `regenerate`: how many stored messages were removed (the answer regenerated, its tool results). */
  removed?: number;
  /**
   * The server had stored these new messages already under this save's key (an earlier save of them
   * within 24 h, or this call's own attempt whose answer was lost): nothing was written now (`appended: 0`),
   * and messages removed since (another device's pop) stay removed.
   */
  replayed?: true;
}

/** The chat's messages as UIMessages, oldest first; `[]` for a chat not stored yet. One GET. */
export async function loadUIMessages<M extends UIMessage = UIMessage>(
  client: SatchelClient,
  chatId: string,
  call?: CallOptions,
): Promise<M[]> {
  try {
    const { session } = await client.get(chatId, call);
    return toUIMessages<M>(session.messages).filter((m) => m !== undefined);
  } catch (err) {
    if (isStatus(err, 404)) return [];
    throw err;
  }
}

/**
 * Appends the messages after the newest one stored (by id), as one request whose Idempotency-Key is made
 * from the chat id and the new ids: an `onFinish` that runs twice, or a retry, stores nothing twice. A
 * message before that one which is not stored was removed (the size cap, a trim, a pop by another
 * device), and a save never restores it; nor one after it that another device popped within 24 h of its
 * save: the same new ids make the same key, so the append is that save's replay (`replayed: true`,
 * `appended: 0`). Messages already stored are not rewritten (appends only, so
 * writers never overwrite each other), but for one: the newest of `messages` whose id is known, when it
 * comes back changed under its id (the AI SDK continues an assistant message after a client-side tool
 * result or an approval, as the last of `messages`, also when another device has added turns since), is
 * replaced by id together with the new ones in one PUT based on the revision read. A message list with an
 * empty or repeated id (replies of a `toUIMessageStreamResponse` without `generateMessageId` all have the
 * id "") is refused with a TypeError, and so is a change to an older known message, which a save cannot
 * store: both before any write.
 */
export async function saveUIMessages(
  client: SatchelClient,
  chatId: string,
  messages: readonly UIMessage[],
  options: SaveOptions = {},
): Promise<SaveResult> {
  assertIds(messages);
  const knownList = options.known
    ? options.known.map((k) => (typeof k === 'string' ? { id: k } : k))
    : await loadUIMessages(client, chatId);
  const known = new Map(knownList.map((m) => [m.id, m] as const));
  // New: what follows the newest stored message. An unknown one before it was stored and removed since
  // (the size cap, a trim, a pop); written again, it came back after the newest turn (review s60e).
  // Another writer's message (FOREIGN id) not stored was stored and removed since: never written again.
  const fresh = messages
    .slice(messages.findLastIndex((m) => known.has(m.id)) + 1)
    .filter((m) => !m.id.startsWith(FOREIGN));
  const continued = continuedOf(messages, known);
  if (options.regenerate && !continued && known.size > 0)
    return regenerateSave(client, chatId, messages, known, fresh, options);
  if (continued) return continueNewest(client, chatId, continued, fresh, options);
  if (fresh.length === 0) return { appended: 0 };
  const key = `ai-sdk-${sha256Hex(JSON.stringify([chatId, fresh.map((m) => m.id)]))}`;
  const receipt = await appendOrCreate(client, chatId, fresh.map(fromUIMessage), key, {
    ...options,
    task: options.task ?? taskOf(messages),
    metadata: { framework: 'ai-sdk', ...options.metadata },
  });
  // A replay (the client's append answer, passed on) stored nothing: a stale copy saved after another
  // device popped these messages answered `appended: 2` with neither stored (review s64e).
  const replayed = 'replayed' in receipt && receipt.replayed === true;
  return replayed ? { appended: 0, replayed: true } : { appended: fresh.length };
}

/** Every id a non-empty string, none twice: ids decide what is stored already and what is replaced. */
function assertIds(messages: readonly UIMessage[]): void {
  const seen = new Set<string>();
  for (const m of messages) {
    if (typeof m?.id !== 'string' || m.id === '')
      throw new TypeError(
        'saveUIMessages: every message needs a non-empty id (give toUIMessageStreamResponse a generateMessageId)',
      );
    if (seen.has(m.id))
      throw new TypeError('saveUIMessages: two messages have the same id; each needs its own');
    seen.add(m.id);
  }
}

/**
 * The message continued under its id: the newest of `messages` whose id is known, when the known one
 * (given with its content) differs from it. Any other known message that changed cannot be stored by a
 * save (appends only): a TypeError rather than an answer that leaves it out unsaid.
 */
function continuedOf(
  messages: readonly UIMessage[],
  known: ReadonlyMap<string, { id: string } | UIMessage>,
): UIMessage | undefined {
  const changed = (m: UIMessage) => {
    const k = known.get(m.id);
    return k !== undefined && 'parts' in k && !matchesStored(m, k);
  };
  const newest = messages.findLastIndex((m) => known.has(m.id));
  // The AI SDK continues only its own messages: another writer's one changed is an edit, as an older one.
  if (messages.some((m, i) => (i !== newest || m.id.startsWith(FOREIGN)) && changed(m)))
    throw new TypeError(
      'saveUIMessages: a stored message other than the newest changed under its id; ' +
        'a save appends (and replaces a continued newest one): change older ones with client.replace',
    );
  const last = messages[newest];
  return last && changed(last) ? last : undefined;
}

/**
 * The stored message replaced by its continued form, and the new messages after the stored ones: a read,
 * then one PUT based on its revision (read again after a 412, at most 5 times). Ids decide what is stored
 * already, so a save that runs twice writes nothing the second time.
 */
async function continueNewest(
  client: SatchelClient,
  chatId: string,
  continued: UIMessage,
  fresh: readonly UIMessage[],
  options: SaveOptions,
): Promise<SaveResult> {
  const call = options.secrets ? { secrets: options.secrets } : {};
  const saved = await onRevision(client, chatId, async ({ session, etag }) => {
    const stored = toUIMessages(session.messages);
    const ids = new Set(stored.map((u) => u?.id));
    const after = fresh.filter((m) => !ids.has(m.id) && m.id !== continued.id);
    const at = stored.findIndex((u) => u?.id === continued.id);
    const same = at >= 0 && matchesStored(continued, stored[at]);
    if (same && after.length === 0) return { appended: 0 };
    const messages: MessageInput[] = session.messages.slice();
    if (at >= 0) messages[at] = fromUIMessage(continued);
    else after.unshift(continued);
    messages.push(...after.map(fromUIMessage));
    await client.replace(chatId, { ...session, messages }, { ...call, ifMatch: etag });
    return at >= 0 && !same ? { appended: after.length, replaced: 1 } : { appended: after.length };
  });
  // Deleted meanwhile: saved as a new chat.
  return saved ?? saveUIMessages(client, chatId, [continued, ...fresh], { ...options, known: [] });
}

/**
 * A regenerate's save: the answer regenerated (the stored run after the message sent again, up to the next
 * user message: the known ones the client dropped, with the tool results of other writers that follow one)
 * is replaced by the new messages, in one PUT based on the revision read (read again after a 412). Later
 * turns stay: the route cannot tell those the client dropped from those it never saw (another device's,
 * review s68e). A save that runs twice finds its messages stored and nothing to remove: it writes nothing.
 */
async function regenerateSave(
  client: SatchelClient,
  chatId: string,
  messages: readonly UIMessage[],
  known: ReadonlyMap<string, unknown>,
  fresh: readonly UIMessage[],
  options: SaveOptions,
): Promise<SaveResult> {
  const sent = messages.findLast((m) => known.has(m.id))!;
  const kept = new Set(messages.map((m) => m.id));
  const call = options.secrets ? { secrets: options.secrets } : {};
  const saved = await onRevision(client, chatId, async ({ session, etag }) => {
    const all = session.messages;
    const stored = toUIMessages(all);
    const at = stored.findIndex((u) => u?.id === sent.id);
    // The message sent again gone meanwhile (another device's trim): nothing to replace; appended.
    const from = at < 0 ? all.length : at + 1;
    let end = from;
    while (end < all.length && all[end]!.role !== 'user') end++;
    let dropping = false;
    const run = all.slice(from, end).filter((_, i) => {
      const u = stored[from + i];
      if (u !== undefined) dropping = known.has(u.id) && !kept.has(u.id);
      return !dropping;
    });
    const ids = new Set(stored.map((u) => u?.id));
    const after = fresh.filter((m) => !ids.has(m.id)).map(fromUIMessage);
    const removed = end - from - run.length;
    if (removed === 0 && after.length === 0) return { appended: 0 };
    const out: MessageInput[] = [...all.slice(0, from), ...run, ...after, ...all.slice(end)];
    await client.replace(chatId, { ...session, messages: out }, { ...call, ifMatch: etag });
    return removed ? { appended: after.length, removed } : { appended: after.length };
  });
  // Deleted meanwhile: saved as a new chat.
  return saved ?? saveUIMessages(client, chatId, messages, { ...options, known: [] });
}

/** What the server stores in place of a secret (lib/model/session.ts; the client imports no server code). */
const REDACTED = '[REDACTED]';

/**
 * Whether the client's copy of a message is the stored one, but for what redaction changed: a stored
 * string's `[REDACTED]` stands for any non-empty run of the client's text (the client keeps its secrets;
 * the server never stores them), a stored `[REDACTED]` for a number too; an inline file's bytes are read
 * so (`sameFile`), and a field's name too (`sameFields`). A difference redaction explains is not an edit:
 * until 2026-12-06 an older message holding a key made every later save a TypeError, and until review
 * s58e one holding a file or a field named by a key.
 */
function matchesStored(client: unknown, stored: unknown): boolean {
  if (typeof stored === 'string' && typeof client === 'string')
    return client === stored || redactedText(client, stored) || sameFile(client, stored);
  if (stored === REDACTED) return typeof client === 'number';
  if (Array.isArray(client))
    return (
      Array.isArray(stored) &&
      client.length === stored.length &&
      client.every((v, i) => matchesStored(v, stored[i]))
    );
  if (!isRecord(client) || !isRecord(stored)) return sameJson(client, stored);
  return sameFields(client, stored);
}

/** Whether `stored` is `text` with runs of it redacted. */
function redactedText(text: string, stored: string): boolean {
  return stored.includes(REDACTED) && redactedFrom(text, stored.split(REDACTED));
}

/**
 * Objects alike but for redaction: fields of one name match, and the client's other fields match, in
 * order, the stored ones of other names, which are theirs redacted (a name that is a key is stored as
 * `[REDACTED]`, a second such name in the object as `[REDACTED] 2`).
 */
function sameFields(client: Record<string, unknown>, stored: Record<string, unknown>): boolean {
  const kc = Object.keys(client).filter((k) => client[k] !== undefined);
  const ks = Object.keys(stored).filter((k) => stored[k] !== undefined);
  if (kc.length !== ks.length) return false;
  const inClient = new Set(kc);
  const inStored = new Set(ks);
  const renamed = ks.filter((k) => !inClient.has(k));
  return kc
    .filter((k) => inStored.has(k) || renamed.length > 0)
    .every((k) => {
      if (inStored.has(k)) return matchesStored(client[k], stored[k]);
      const as = renamed.shift()!;
      const named = redactedText(k, as) || redactedText(k, as.replace(/ \d+$/, ''));
      return named && matchesStored(client[k], stored[as]);
    });
}

/** `[REDACTED]` as the bytes of a text file: UTF-8 (or Latin-1), UTF-16LE, UTF-16BE. */
const REDACTED_BYTES = [REDACTED, REDACTED.replace(/./g, '$&\0'), REDACTED.replace(/./g, '\0$&')];

/**
 * Whether two strings are one inline file (a `data:…;base64,` URL, or bare base64) but for redaction: the
 * server decodes a text file, redacts it and encodes it again (no `[REDACTED]` in the stored string), so
 * their bytes are compared, the stored file's `[REDACTED]` standing for a run of the client's.
 */
function sameFile(client: string, stored: string): boolean {
  const head = /^data:[^,]*;base64,/i;
  const hc = head.exec(client)?.[0] ?? '';
  const hs = head.exec(stored)?.[0] ?? '';
  if (hc !== hs && !redactedText(hc, hs)) return false;
  const a = bytesOf(client.slice(hc.length));
  const b = bytesOf(stored.slice(hs.length));
  return (
    a !== undefined &&
    b !== undefined &&
    REDACTED_BYTES.some((mark) => b.includes(mark) && redactedFrom(a, b.split(mark)))
  );
}

/** Base64 (or base64url) as a binary string; undefined when it is not base64. */
function bytesOf(b64: string): string | undefined {
  try {
    return atob(b64.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Whether `text` is `pieces` joined by non-empty runs: each piece between found at its first place after
 * the one before (the first place leaves the most room for the rest), so linear, with no backtracking.
 */
function redactedFrom(text: string, pieces: string[]): boolean {
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = text.indexOf(piece, at + 1);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return text.length - last.length >= at + 1;
}

/** Deep equality of JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/**
 * A UIMessage as a stored message: its parts as `content` (the server stores their text as odek's string
 * and the parts beside it), the rest of it (id, role, metadata) in UI_MESSAGE_FIELD.
 */
export function fromUIMessage(message: UIMessage): MessageInput {
  const partsFit = message.parts.every(
    (p) => typeof p.type === 'string' && p.type.length >= 1 && p.type.length <= MAX_PART_TYPE,
  );
  if (!partsFit)
    return { role: message.role, content: textOf(message), [UI_MESSAGE_FIELD]: message };
  return {
    role: message.role,
    content: message.parts as MessageInput['content'],
    [UI_MESSAGE_FIELD]: without(message, 'parts'),
  };
}

/** The id prefix of a message another writer stored (odek, the CLI, continue): one a save never writes. */
const FOREIGN = 'satchel-';

/**
 * The UIMessages of a session's messages, in their places (`undefined` for a tool result). Another
 * writer's message gets an id made from its content, the n-th copy of it `-n` more: a position named
 * another message once one before it was removed (a pop, a trim, the size cap), and a save then replaced
 * or refused that one (review s67i).
 */
function toUIMessages<M extends UIMessage>(messages: readonly Message[]): (M | undefined)[] {
  const copies = new Map<string, number>();
  return messages.map((m) => {
    const own = m[UI_MESSAGE_FIELD];
    if (own && typeof own === 'object') return toUIMessage<M>(m)[0];
    const id = foreignId(m);
    const n = copies.get(id) ?? 0;
    copies.set(id, n + 1);
    return toUIMessage<M>(m, n ? `${id}-${n}` : id)[0];
  });
}

/** Another writer's message's id: a hash of what a chat model reads of it. */
function foreignId(m: Message): string {
  const hash = sha256Hex(JSON.stringify([m.role, m.content, m.tool_calls, m.tool_call_id]));
  return FOREIGN + hash.slice(0, 32);
}

/**
 * The UIMessage of a stored message: the one it carries, or for one another writer stored (odek, the CLI,
 * continue) a text message with the id `satchel-` and a hash of its content (or `id`). Tool results of
 * other writers have no UIMessage of their own.
 */
export function toUIMessage<M extends UIMessage = UIMessage>(message: Message, id?: string): M[] {
  const stored = message[UI_MESSAGE_FIELD] as Partial<UIMessage> | undefined;
  if (stored && typeof stored === 'object') {
    const parts = stored.parts ?? (Array.isArray(message.content) ? message.content : []);
    return [{ ...stored, parts } as M];
  }
  if (message.role === 'tool') return [];
  const parts = Array.isArray(message.content)
    ? toUIParts(message.content)
    : message.content
      ? [{ type: 'text', text: message.content }]
      : [];
  return [{ id: id ?? foreignId(message), role: message.role, parts } as M];
}

function textOf(message: UIMessage): string {
  return message.parts
    .map((p) => (p.type === 'text' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}

/** A created chat's task: its first user text, cut to 200 characters. */
function taskOf(messages: readonly UIMessage[]): string {
  const first = messages.find((m) => m.role === 'user');
  const text = first ? textOf(first).trim() : '';
  // Cut on whole characters: half an emoji (a lone surrogate) is refused by the server, for every save.
  return text ? Array.from(text).slice(0, 200).join('') : 'AI SDK chat';
}
