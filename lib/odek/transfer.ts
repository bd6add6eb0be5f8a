import type { SatchelClient } from '../client/client.js';
import { SatchelApiError } from '../client/errors.js';
import type { Session } from '../client/types.js';
import {
  createBody,
  odekFileText,
  parseOdekFile,
  replaceBody,
  unkeptTimes,
  type OdekSession,
} from './format.js';
import { firstDifference, sameJson, storedOnlyRefs } from './match.js';

/**
 * Moving sessions between odek files and a Satchel server, one session at a time, through the HTTP API
 * (so every import passes the save pipeline). File access stays with the caller.
 *
 * Import is idempotent: it creates the session under its own id; when the id exists, it reads the stored
 * session and compares (`firstDifference`): the same content is `unchanged`, different content is
 * `failed` with the first difference and left alone, unless `overwrite` is set, in which case the file
 * replaces it (PUT with If-Match of the revision just read: a session that changes in between is not
 * overwritten blindly) and the outcome is `replaced`.
 */

export type ImportStatus = 'created' | 'unchanged' | 'replaced' | 'failed';

export interface ImportOutcome {
  /** Where the session came from (a file path). */
  source: string;
  id?: string;
  status: ImportStatus;
  /** Why it failed. */
  reason?: string;
  /** What the server did on the way in (redactions, the size cap) and fields that were not carried. */
  notes: string[];
}

/** Imports one odek file's text. Throws only when the server cannot be reached (SatchelConnectionError). */
export async function importOdekFile(
  client: SatchelClient,
  source: string,
  text: string,
  options: { overwrite?: boolean } = {},
): Promise<ImportOutcome> {
  const parsed = parseOdekFile(text);
  if (!parsed.ok) return { source, status: 'failed', reason: parsed.reason, notes: [] };
  const { session, unknownFields } = parsed;
  const times = unkeptTimes(session);
  const notes = [
    ...(unknownFields.length
      ? [
          `not imported: field${unknownFields.length > 1 ? 's' : ''} ${unknownFields.join(', ')} (not odek's)`,
        ]
      : []),
    ...(times.length
      ? [`${times.join(' and ')} not kept (not an RFC 3339 time with an offset)`]
      : []),
  ];
  const base = { source, id: session.id, notes };
  // A create whose attempt got no answer and whose retry met the id (409): maybe its own session.
  let lostCreate = false;
  try {
    try {
      const created = await client.create(createBody(session));
      return {
        ...base,
        status: 'created',
        notes: [...notes, ...(await pipelineNotes(client, session, created.session))],
      };
    } catch (err) {
      if (!(SatchelApiError.is(err) && err.status === 409)) throw err;
      lostCreate = err.afterLostAttempt;
    }
    const stored = await client.get(session.id);
    const difference = firstDifference(session, stored.session);
    const extra = storedOnlyRefs(session, stored.session);
    const kept = extra
      ? [
          `the stored session keeps ${extra} external ref${extra > 1 ? 's' : ''} the file lacks ` +
            '(refs are add-only: no import or replace drops one)',
        ]
      : [];
    if (difference === null && lostCreate && stored.session.revision === 1) {
      // The file's content at revision 1, after an attempt of this create got no answer: it made it.
      const made = await pipelineNotes(client, session, stored.session);
      return { ...base, status: 'created', notes: [...notes, ...made] };
    }
    if (difference === null) return { ...base, status: 'unchanged', notes: [...notes, ...kept] };
    if (!options.overwrite) {
      return {
        ...base,
        status: 'failed',
        reason: `exists with different content (${difference}); --overwrite replaces it`,
      };
    }
    await client.replace(session.id, replaceBody(session), { ifMatch: stored.etag });
    return {
      ...base,
      status: 'replaced',
      notes: [...notes, `replaced: it differed in ${difference}`, ...kept],
    };
  } catch (err) {
    // A refused token fails every file alike: the import stops, with one error (exit 1).
    if (SatchelApiError.is(err) && err.status !== 401 && err.status !== 403)
      return { ...base, status: 'failed', reason: describeApiError(err) };
    throw err;
  }
}

/** The session as odek file text, and its file name (`<id>.json`, as odek names them). */
export async function exportOdekFile(
  client: SatchelClient,
  id: string,
): Promise<{ name: string; text: string }> {
  const { session } = await client.get(id);
  return { name: `${session.id}.json`, text: odekFileText(session) };
}

/** One line for a problem: title, detail and the fields validation named. */
export function describeApiError(err: SatchelApiError): string {
  const fields = err.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return `${err.status} ${err.title}: ${err.detail}${fields ? ` (${fields})` : ''}`;
}

/**
 * What the save pipeline did to an imported session. The create answers the session, not a receipt, so
 * the counts come from its audit record, read only when the stored session differs from the file.
 */
async function pipelineNotes(
  client: SatchelClient,
  file: OdekSession,
  stored: Session,
): Promise<string[]> {
  const untouched =
    file.task === stored.task &&
    sameJson(file.messages, stored.messages) &&
    sameJson(
      file.external_refs.map((r) => r.uri),
      stored.external_refs.map((r) => r.uri),
    );
  if (untouched) return [];
  const record = (await client.audit(stored.id)).find((r) => r.revision === stored.revision);
  if (!record) return [];
  const notes: string[] = [];
  if (record.redactions > 0)
    notes.push(`${record.redactions} secret${record.redactions > 1 ? 's' : ''} redacted`);
  if (record.dropped_groups > 0)
    notes.push(
      `size cap: ${record.dropped_groups} oldest message group${record.dropped_groups > 1 ? 's' : ''} dropped`,
    );
  // With the system prompt alone over the cap, the first user message is not stored (a create's
  // Satchel-Dropped-First-User-Message): the file had one, the session has none.
  const users = (ms: readonly { role: string }[]) => ms.filter((m) => m.role === 'user').length;
  if (users(file.messages) > 0 && users(stored.messages) === 0)
    notes.push(
      'size cap: the first user message was not stored (with the system prompt, over the cap)',
    );
  return notes;
}
