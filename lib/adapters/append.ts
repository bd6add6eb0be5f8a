import { SatchelApiError, type SatchelClient } from '../client/index.js';
import type { MessageInput, Tagged, WriteReceipt } from '../client/index.js';

/** How an adapter's first write makes its session. */
export interface SessionDefaults {
  /** The task of a session the adapter creates (default: the framework's name). */
  task?: string;
  /** The metadata of a session the adapter creates (string keys and values). */
  metadata?: Record<string, string>;
  /** Secret values to redact from what is stored (sent as `Satchel-Secrets`, never stored). */
  secrets?: string[];
}

/**
 * Appends messages as one keyed request. A session that does not exist yet is created empty first, then
 * the append is sent again under the same key: creating it with the messages would store them twice
 * when a create's answer is lost and its retry meets the session it made. A 409 to the create is another
 * writer's session, which the append then joins (or, after a lost answer, maybe its own: `createEmpty`).
 * A session this call made for an append the server refuses (a 4xx: nothing of it was stored) is deleted
 * again, if it is still as made.
 */
export async function appendOrCreate(
  client: SatchelClient,
  id: string,
  messages: MessageInput[],
  key: string,
  defaults: SessionDefaults & { task: string },
  /** A read just found no session: create first instead of an append bound to answer 404. */
  knownMissing = false,
): Promise<WriteReceipt> {
  const call = { idempotencyKey: key, ...(defaults.secrets ? { secrets: defaults.secrets } : {}) };
  if (!knownMissing) {
    try {
      return await client.append(id, { messages }, call);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
  const made = await createEmpty(client, id, defaults);
  try {
    return await client.append(id, { messages }, call);
  } catch (err) {
    // Refused (a 413 stores nothing): the empty session made for it goes too, unless it has changed since.
    if (made && SatchelApiError.is(err) && err.status >= 400 && err.status < 500) {
      await client.delete(id, { ifMatch: made.etag }).catch(() => undefined);
    }
    throw err;
  }
}

/**
 * Creates the session empty (the secrets sent with it too: its task and metadata are redacted as stored,
 * also when the append after it never arrives). Its ETag, or null when the session is another writer's
 * (a 409). A 409 after an attempt that got no answer may be this create's own session: it is taken as
 * made when the read finds it still as a create leaves it (updated_at at created_at, no messages), so a refused first
 * append deletes it as it would after an answered create (`If-Match` keeps a session changed since).
 */
async function createEmpty(
  client: SatchelClient,
  id: string,
  defaults: SessionDefaults & { task: string },
): Promise<Tagged | null> {
  const call = defaults.secrets ? { secrets: defaults.secrets } : {};
  try {
    const metadata = defaults.metadata ? { metadata: defaults.metadata } : {};
    return await client.create({ id, task: defaults.task, ...metadata }, call);
  } catch (err) {
    if (!isStatus(err, 409)) throw err;
    if (!(err as SatchelApiError).afterLostAttempt) return null;
  }
  // A read that fails leaves it as another writer's: kept, whatever the append's answer.
  const read = await client.get(id).catch(() => null);
  // As a create leaves it: every later write moves updated_at past created_at (a create starts above
  // the revisions of a session deleted under the id, so its revision is not always 1).
  const s = read?.session;
  return s && s.created_at === s.updated_at && s.messages.length === 0 ? read : null;
}

/**
 * A change based on the revision read: reads the session, then runs `write` with it (its ETag for
 * If-Match); a write that landed in between (412) reads again, at most 5 times. Null when the session
 * does not exist.
 */
export async function onRevision<T>(
  client: SatchelClient,
  id: string,
  write: (read: Tagged) => Promise<T>,
): Promise<T | null> {
  for (let attempt = 0; ; attempt++) {
    let read: Tagged;
    try {
      read = await client.get(id);
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
    try {
      return await write(read);
    } catch (err) {
      if (!isStatus(err, 412) || attempt >= 4) throw err;
    }
  }
}

/** True for a `SatchelApiError` with this status. */
export function isStatus(err: unknown, status: number): boolean {
  return SatchelApiError.is(err) && err.status === status;
}

/** A plain-object copy without one key (the verbatim copy of an item whose content is stored as `content`). */
export function without<T extends object>(value: T, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = value as Record<string, unknown>;
  return rest;
}
