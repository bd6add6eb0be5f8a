import type { SatchelClient } from '../client/client.js';
import { SatchelApiError, SatchelConnectionError, SatchelResponseError } from '../client/errors.js';
import type { AuditRecord, PipelineCounts, Session } from '../client/types.js';
import {
  createBody,
  odekFileText,
  parseOdekFile,
  replaceBody,
  stampsUpdatedAt,
  unkeptTimes,
  type OdekSession,
} from './format.js';
import { cappedAlike, firstDifference, refNotes, sameJson, storedOnlyRefs } from './match.js';

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

/**
 * The server could not be reached while a file was imported, or answered with a page that is not
 * Satchel's (a gateway's 504): the import cannot go on. `mayHaveWritten`: a create or replace of the
 * file was sent and may have been stored.
 */
export class ImportInterrupted extends Error {
  constructor(
    readonly error: Error,
    readonly mayHaveWritten: boolean,
  ) {
    super(error.message);
    this.name = 'ImportInterrupted';
  }
}

export interface ImportOptions {
  overwrite?: boolean;
  /** The server's time, as far as its answers told it: a file without `updated_at` gets it. */
  now?: () => number;
}

/**
 * Imports one odek file's text. Throws a refused token (401, 403) as it came, and ImportInterrupted when
 * the server cannot be reached or what answered is not Satchel.
 */
export async function importOdekFile(
  client: SatchelClient,
  source: string,
  text: string,
  options: ImportOptions = {},
): Promise<ImportOutcome> {
  const parsed = parseOdekFile(text);
  if (!parsed.ok) return { source, status: 'failed', reason: parsed.reason, notes: [] };
  const { session, unknownFields } = parsed;
  const base = { source, id: session.id, notes: fileNotes(session, unknownFields) };
  let wrote = false;
  try {
    return await importSession(client, session, base, options, () => (wrote = true));
  } catch (err) {
    if (err instanceof CannotCompare) return { ...base, status: 'failed', reason: err.message };
    if (SatchelApiError.is(err) && err.fromSatchel) {
      // A refused token fails every file alike: the import stops, with one error (exit 1).
      if (err.status === 401 || err.status === 403) throw err;
      return { ...base, status: 'failed', reason: describeApiError(err) };
    }
    // A gateway's page, not Satchel's: whether a write reached Satchel is unknown, as after no answer.
    // So is a success that is not Satchel's answer (another JSON service, a proxy's own 200).
    if (SatchelApiError.is(err) || SatchelResponseError.is(err))
      throw new ImportInterrupted(err, wrote);
    if (SatchelConnectionError.is(err))
      throw new ImportInterrupted(err, wrote && err.mayHaveLanded !== false);
    throw err;
  }
}

/**
 * Why a top-level field is left out: it is not in Satchel's stored format (the contract's list). odek's
 * own `buffer`, `pinned`, token counts and `redact_boundary*` are among them (review s62d: the report said
 * odek did not define them).
 */
export const NOT_STORED_FORMAT = "not in Satchel's stored format";

/** What the file itself has that the import cannot carry. */
function fileNotes(session: OdekSession, unknownFields: string[]): string[] {
  const times = unkeptTimes(session);
  const many = unknownFields.length > 1;
  return [
    ...(unknownFields.length
      ? [
          `not imported: field${many ? 's' : ''} ${unknownFields.join(', ')} ` +
            `(${NOT_STORED_FORMAT})`,
        ]
      : []),
    ...(times.length
      ? [`${times.join(' and ')} not kept (not an RFC 3339 time with an offset)`]
      : []),
    ...refFieldsNote(session),
  ];
}

/** What an external ref holds beyond the fields the create and replace take. */
const REF_FIELDS = new Set(['kind', 'uri', 'created_by', 'read_only', 'created_at']);

/**
 * The ref fields an import leaves out (a ref carries only REF_FIELDS into the store), named: the report
 * says what was not imported rather than `created` alone (review s58c). The first few, and how many more.
 */
function refFieldsNote(session: OdekSession): string[] {
  const left = session.external_refs.flatMap((ref, i) =>
    Object.keys(ref)
      .filter((k) => !REF_FIELDS.has(k))
      .map((k) => `external_refs[${i}].${k}`),
  );
  if (left.length === 0) return [];
  const more = left.length > 5 ? ` and ${left.length - 5} more` : '';
  return [
    `not imported: ${left.slice(0, 5).join(', ')}${more} ` +
      '(a ref keeps only kind, uri, created_by, read_only and created_at)',
  ];
}

/** The create, and after a 409 the comparison (and with `overwrite` the replace). `writing` before each write. */
async function importSession(
  client: SatchelClient,
  session: OdekSession,
  base: { source: string; id: string; notes: string[] },
  options: ImportOptions,
  writing: () => void,
): Promise<ImportOutcome> {
  const { notes } = base;
  // A create whose attempt got no answer and whose retry met the id (409): maybe its own session.
  let lostCreate = false;
  try {
    writing();
    const body = () => createBody(session, options.now?.());
    const created = await client.create(body()).catch((err: unknown) => {
      // The time stamped was this machine's, ahead of the server's: its refusal told the server's time.
      if (!(stampsUpdatedAt(session) && inFuture(err, 'updated_at'))) throw err;
      return client.create(body());
    });
    const made = created.pipeline
      ? countNotes(created.pipeline)
      : await auditNotes(client, session, created.session);
    return { ...base, status: 'created', notes: [...notes, ...made] };
  } catch (err) {
    if (!(SatchelApiError.is(err) && err.fromSatchel && err.status === 409)) throw err;
    lostCreate = err.afterLostAttempt;
  }
  const stored = await client.get(session.id);
  const difference = compare(session, stored.session);
  const kept = keptNotes(session, stored.session);
  // The file's content as a create left it, after an attempt of this create got no answer: it made it.
  // At revision 1 it is; above (an id that held a session deleted before starts above its revisions),
  // unless its audit shows a later write (read once, for this and for the notes).
  const audited =
    difference === null && lostCreate && stored.session.revision !== 1
      ? await auditAt(client, stored.session)
      : undefined;
  if (difference === null && lostCreate && (!audited || asCreated(audited))) {
    const made = await auditNotes(client, session, stored.session, audited);
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
  // A session the size cap trimmed whose messages are the file's: the stored ones go back, so the PUT
  // changes only what differs (the file's would bring back what the cap removed: 413, review s64d).
  const messages = cappedAlike(session, stored.session)
    ? stored.session.messages
    : session.messages;
  writing();
  const body = replaceBody(session, messages);
  const answer = await client.replace(session.id, body, { ifMatch: stored.etag });
  // What the replace stored, checked: a difference no PUT can make would be "replaced" on every run.
  const left = compare(session, answer.session, 'replaced, but ');
  if (left === null)
    return {
      ...base,
      status: 'replaced',
      notes: [...notes, `replaced: it differed in ${difference}`, ...kept],
    };
  return {
    ...base,
    status: 'failed',
    reason: `replaced, but the stored session still differs from the file (${left}): a replace cannot change that`,
  };
}

/** A create refused for a time more than 5 minutes ahead of the server's. */
function inFuture(err: unknown, field: string): boolean {
  return (
    SatchelApiError.is(err) &&
    err.status === 400 &&
    err.errors.some((e) => e.path === field && e.message === 'in the future')
  );
}

/** A comparison that could not be made: that file's failure, not the run's. */
class CannotCompare extends Error {}

/**
 * firstDifference, with a RangeError (a value nested past V8's stack) that file's failure: thrown on, it
 * stopped the whole import with exit 70 and the files after it were never imported (review s64d).
 */
function compare(file: OdekSession, stored: Session, after = ''): string | null {
  try {
    return firstDifference(file, stored);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new CannotCompare(`${after}could not compare with the stored session: nested too deep`);
  }
}

/** What the stored session keeps of its refs whatever the file says: refs are add-only and never change. */
function keptNotes(session: OdekSession, stored: Session): string[] {
  const extra = storedOnlyRefs(session, stored);
  return [
    ...(extra
      ? [
          `the stored session keeps ${extra} external ref${extra > 1 ? 's' : ''} the file lacks ` +
            '(refs are add-only: no import or replace drops one)',
        ]
      : []),
    ...refNotes(session, stored),
  ];
}

/** The stored session's audit record at its revision (undefined: not there yet), or why it could not be read. */
type Audited = { record?: AuditRecord | undefined } | { failed: string };

async function auditAt(client: SatchelClient, stored: Session): Promise<Audited> {
  try {
    return { record: (await client.audit(stored.id)).find((r) => r.revision === stored.revision) };
  } catch (err) {
    if (!SatchelApiError.is(err) && !SatchelConnectionError.is(err)) throw err;
    return { failed: err.message };
  }
}

/**
 * Whether a session above revision 1 holding the file's content can be this run's lost create: unless its
 * audit shows a write other than a create or import at its revision. An audit that cannot be read, or whose
 * record is not there yet, rules nothing out (auditNotes then says what could not be read).
 */
function asCreated(audited: Audited): boolean {
  if ('failed' in audited || !audited.record) return true;
  return audited.record.op === 'create' || audited.record.op === 'import';
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

/** The notes for what the save pipeline did, from a create's counts. */
function countNotes(counts: PipelineCounts): string[] {
  const notes: string[] = [];
  const { redactions, dropped_groups: dropped } = counts;
  if (redactions > 0) notes.push(`${redactions} secret${redactions > 1 ? 's' : ''} redacted`);
  if (dropped > 0)
    notes.push(`size cap: ${dropped} oldest message group${dropped > 1 ? 's' : ''} dropped`);
  if (counts.dropped_first_user_message)
    notes.push(
      'size cap: the first user message was not stored (with the system prompt, over the cap)',
    );
  return notes;
}

/** Said of a session this import created when the audit read that would say what the pipeline did fails. */
const PIPELINE_UNKNOWN = 'what the save pipeline changed could not be read';

/**
 * What the save pipeline did to a session this import created, when the create's answer did not say (its
 * answer was lost, or came without the counts): from its audit record, read only when the stored session
 * differs from the file. The session is created whatever this read meets: a failed read, or a record not
 * there yet (another instance stores it after answering), is a note, never the file's failure.
 */
async function auditNotes(
  client: SatchelClient,
  file: OdekSession,
  stored: Session,
  audited?: Audited,
): Promise<string[]> {
  const untouched =
    file.task === stored.task &&
    sameJson(file.messages, stored.messages) &&
    sameJson(
      file.external_refs.map((r) => r.uri),
      stored.external_refs.map((r) => r.uri),
    );
  if (untouched) return [];
  // With the system prompt alone over the cap, the first user message is not stored: the file had one,
  // the session has none.
  const users = (ms: readonly { role: string }[]) => ms.filter((m) => m.role === 'user').length;
  const headDropped = users(file.messages) > 0 && users(stored.messages) === 0;
  const read = audited ?? (await auditAt(client, stored));
  if ('failed' in read) return [`${PIPELINE_UNKNOWN} (${read.failed})`];
  const { record } = read;
  if (!record) return [`${PIPELINE_UNKNOWN} (its audit record is not there yet)`];
  return countNotes({
    redactions: record.redactions,
    dropped_groups: record.dropped_groups,
    dropped_first_user_message: headDropped,
  });
}
