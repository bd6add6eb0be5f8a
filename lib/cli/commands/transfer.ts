import { createHash, randomBytes } from 'node:crypto';
import {
  mkdir,
  open,
  readdir,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import type { SatchelClient } from '../../client/client.js';
import { SatchelApiError } from '../../client/errors.js';
import {
  describeApiError,
  exportOdekFile,
  ImportInterrupted,
  importOdekFile,
  NOT_STORED_FORMAT,
  type ImportOptions,
  type ImportOutcome,
  type ImportStatus,
} from '../../odek/transfer.js';
import { textNestedPast } from '../../model/json-depth.js';
import { MAX_JSON_DEPTH } from '../../model/requests.js';
import { createBody, parseOdekFile } from '../../odek/format.js';
import { integerArg, stringOpt } from '../args.js';
import { eachLimit } from '../batch.js';
import type { Command, CommandContext } from '../command.js';
import { EXIT, LocalFileError, LostWriteError, notSatchel, UsageError } from '../io.js';
import { valueNestedPast } from '../json-depth.js';
import { Progress } from '../progress.js';
import { inert } from '../render.js';
import { sessionIdArg } from './session.js';

/** `satchel import` and `satchel export`: odek session files in, odek session files out. */

const CONCURRENCY_OPTION = { concurrency: { type: 'string' as const, short: 'j' } };

/**
 * `mkdir -p` that names the file in the way (not the folder asked for) and always ends: Node 20's
 * recursive mkdir retries for ever where mkdir answers ENOENT under a folder that exists (`/proc`).
 */
async function makeFolder(folder: string): Promise<void> {
  const missing: string[] = [];
  for (let at = path.resolve(folder); ;) {
    const found = await stat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw err;
    });
    if (found?.isDirectory()) break;
    if (found !== undefined) {
      throw new LocalFileError(
        missing.length === 0
          ? `${folder} is a file, not a folder: name a folder to export into`
          : `${at} is a file, so ${folder} cannot be made: name a folder to export into`,
      );
    }
    missing.push(at);
    if (path.dirname(at) === at) break;
    at = path.dirname(at);
  }
  for (const dir of missing.reverse()) {
    await mkdir(dir).catch(async (err: NodeJS.ErrnoException) => {
      // Made by someone else meanwhile: fine when it is a folder.
      if (err.code !== 'EEXIST' || !(await stat(dir)).isDirectory()) throw err;
    });
  }
}

export const importCommand: Command = {
  name: 'import',
  summary: 'import odek session files (a folder like ~/.odek/sessions, or files)',
  help: `satchel import <folder | file.json>... [--overwrite] [--concurrency N] [--json]

Imports odek session files through the server, so every one passes the save pipeline (secrets
redacted, size cap). A folder means its *.json files. odek's index.json, latest.json and vectors_meta.json
are skipped, also when named as files (a shell glob; vectors_meta.json only when it holds no session);
so is a folder's file that holds a JSON object with neither id nor messages (not a session; named as a
file, it fails). Each session keeps its id. Old files
without provider, external_refs or the taint fields import too.

Re-importing changes nothing: a session whose id exists with the same content is "unchanged" (the
comparison allows for what the server redacted). One whose id exists with different content is
"failed: exists with different content (where)" and left alone, unless --overwrite: then the file
replaces it (PUT with If-Match of the revision just read; refs and the sticky flags sandbox,
untrusted_ingested and episode_untrusted can be added, never removed). A stored ref never changes: one
the file has with another read_only or created_at is kept as stored, and the report says so.

Kept: the id, task, model, provider, every message with every field, external refs, the flags
sandbox, untrusted_ingested and episode_untrusted, and the session's created_at and updated_at (a file
without them gets the time of the import; a replace with --overwrite keeps the stored session's created_at
and stamps updated_at with its own time). Refs stored beyond the file's are kept and named in the report.
Derived again by the server: turns and episode_taint_tracked.
Left out: top-level fields not in Satchel's stored format, odek's buffer, pinned, input_tokens,
output_tokens and redact_boundary(_fp) among them (named per file; the session is still imported).
Files that share an id but differ (a backup copy next to the original) all fail, none imported: keep one.

  --overwrite        replace sessions that exist with different content
  --concurrency N    files in flight at once (default 8)
  --json             {"created","unchanged","replaced","failed","skipped","results":[{source,id,status,reason,notes}]}

Exit code 4 when any file failed (each is listed with its reason), 5 when a path cannot be read,
1 when the server refuses the token (the import stops at once), 3 when the server stops answering (the
files that may have been imported are named; rerunning the import is safe).`,
  options: { overwrite: { type: 'boolean' }, ...CONCURRENCY_OPTION },
  async run(ctx) {
    if (ctx.args.positionals.length === 0) throw new UsageError('missing <folder | file.json>');
    const concurrency = concurrencyOf(ctx);
    const overwrite = ctx.args.values.overwrite === true;
    const options = { overwrite, now: ctx.serverNow };
    const found = await sessionFiles(ctx.args.positionals);
    const { refused, read, others } = await sharedIds(found.files, found.listed, concurrency);
    const files = found.files.filter((f) => !others.has(f));
    const skipped = [...found.skipped, ...others];
    if (files.length === 0)
      throw new UsageError(`no odek session files (*.json) in ${ctx.args.positionals.join(', ')}`);
    const client = ctx.client();
    const tally: Record<ImportStatus, number> = {
      created: 0,
      unchanged: 0,
      replaced: 0,
      failed: 0,
    };
    const results: ImportOutcome[] = [];
    // Files whose create or replace got no answer (or a gateway's page): they may have been imported.
    const inFlight: string[] = [];
    // With --json, stderr holds only the JSON error: no progress lines.
    const progress = new Progress(ctx.json ? QUIET : ctx.io.stderr, files.length, 'import');
    try {
      await eachLimit(files, concurrency, async (file) => {
        const outcome =
          refused.get(file) ??
          (await importFile(client, file, read.get(file), options).catch((err: unknown) => {
            if (err instanceof ImportInterrupted && err.mayHaveWritten) inFlight.push(file);
            throw err;
          }));
        results.push(outcome);
        tally[outcome.status]++;
        progress.tick(counts(tally));
      });
    } catch (err) {
      progress.abort();
      const landed = inFlight.length ? `; may have been imported: ${inFlight.join(', ')}` : '';
      if (!ctx.json)
        ctx.io.stderr.write(
          inert(
            `import stopped after ${results.length} of ${files.length} files (${counts(tally)})${landed}\n`,
          ),
        );
      throw importStopped(err, inFlight, ctx.args.positionals, overwrite);
    }
    results.sort((a, b) => a.source.localeCompare(b.source));
    if (ctx.json) ctx.printJson({ ...tally, skipped, results });
    else printImport(ctx, files.length, tally, skipped, results);
    return tally.failed ? EXIT.partial : EXIT.ok;
  },
};

/** One file's import: its text (read already when it can be read only once), then the server. */
async function importFile(
  client: SatchelClient,
  file: string,
  read: Source | undefined,
  options: ImportOptions,
): Promise<ImportOutcome> {
  const source = read ?? (await readSource(file));
  if ('reason' in source)
    return { source: file, status: 'failed', reason: source.reason, notes: [] };
  return tooDeep(file, source.text) ?? importOdekFile(client, file, source.text, options);
}

/**
 * A file whose session is nested deeper than the server takes, as its failed outcome: the server refuses
 * such a body (400), and past V8's stack the client's JSON.stringify of it threw RangeError, which stopped
 * the whole import (review s60d). Only what the import sends counts (not a top-level field outside
 * Satchel's stored format, which it leaves out); the parse runs only for text that nests that deep.
 */
function tooDeep(file: string, text: string): ImportOutcome | undefined {
  if (!textNestedPast(text, MAX_JSON_DEPTH)) return undefined;
  const parsed = parseOdekFile(text);
  if (!parsed.ok) return undefined; // importOdekFile says why
  const at = valueNestedPast(createBody(parsed.session), MAX_JSON_DEPTH);
  if (at === null) return undefined;
  const reason = `nested deeper than ${MAX_JSON_DEPTH} levels at ${at} (the server refuses such a body)`;
  return { source: file, id: parsed.session.id, status: 'failed', reason, notes: [] };
}

/**
 * What an import that cannot go on throws: after a create or replace that may have been stored, the
 * files it may have imported and the rerun (an import is idempotent: what it made is then unchanged);
 * else the error as it came (no answer at all: "Is the server running?"; a gateway's page).
 */
function importStopped(
  err: unknown,
  inFlight: string[],
  paths: string[],
  overwrite: boolean,
): unknown {
  if (!(err instanceof ImportInterrupted)) return err;
  const cause = SatchelApiError.is(err.error) ? new Error(notSatchel(err.error)) : err.error;
  if (inFlight.length === 0) return err.error;
  const again = [
    'satchel',
    'import',
    ...(overwrite ? ['--overwrite'] : []),
    ...(paths.some((p) => p.startsWith('-')) ? ['--'] : []),
    ...paths,
  ];
  const many = inFlight.length > 1;
  return new LostWriteError(
    cause,
    again,
    inert(
      `${inFlight.join(', ')} may have been imported (${many ? 'their writes' : 'its write'} got no ` +
        "answer of Satchel's). Rerunning the import is safe: a session it made is then unchanged:",
    ),
  );
}

/** The import's report for people: what was skipped, what failed or has notes, and the counts. */
function printImport(
  ctx: CommandContext,
  total: number,
  tally: Record<ImportStatus, number>,
  skipped: string[],
  results: ImportOutcome[],
): void {
  // File names, ids, reasons and field names come from the files: inert, as stored text is.
  for (const s of skipped)
    ctx.print(inert(`skipped    ${s}: ${ownFile(s) ? "odek's own file, " : ''}not a session\n`));
  for (const r of results) {
    if (r.status === 'failed')
      ctx.print(inert(`failed     ${r.source}${r.id ? ` (${r.id})` : ''}: ${r.reason}\n`));
    else if (r.status === 'replaced' || r.notes.length)
      ctx.print(inert(`${r.status.padEnd(10)} ${r.id} (${r.notes.map(noteText).join('; ')})\n`));
  }
  ctx.print(`Imported ${total} file${total === 1 ? '' : 's'}: ${counts(tally, true)}\n`);
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'export sessions as odek session files',
  help: `satchel export <id>... <folder> [--concurrency N] [--json]
satchel export --all <folder> [--concurrency N] [--json]

Writes each session as <folder>/<id>.json in odek's format (compact JSON, odek's fields in odek's order,
without Satchel's revision), so odek can load it and \`satchel import\` can bring it back. Existing files
of the same name are replaced (odek's own index.json, latest.json and vectors_meta.json never: that
session fails; in a folder that does not tell case apart, as on macOS, neither is a file of another session
whose id differs only in case), each written with mode 0600 as odek writes its own. The folder is created
when missing.

  --all              every session of the namespace
  --concurrency N    sessions in flight at once (default 8)
  --json             {"exported","folder","files":[...],"failed":[{id,reason}]}

Exit code 4 when any session failed (each is listed with its reason).`,
  options: { all: { type: 'boolean' }, ...CONCURRENCY_OPTION },
  async run(ctx) {
    const all = ctx.args.values.all === true;
    const positionals = ctx.args.positionals;
    const folder = positionals[positionals.length - 1];
    if (folder === undefined) throw new UsageError('missing <folder>');
    if (!all && positionals.length < 2)
      throw new UsageError('needs <id>... <folder>, or --all <folder>');
    if (all && positionals.length > 1) throw new UsageError('--all takes only <folder>');
    for (const id of positionals.slice(0, -1)) sessionIdArg(id);
    const concurrency = concurrencyOf(ctx);
    const client = ctx.client();
    const ids = all ? await everySession(client) : [...new Set(positionals.slice(0, -1))];
    await makeFolder(folder);
    const names = new FolderNames(await foldsCase(folder));
    const files: string[] = [];
    const failed: { id: string; reason: string }[] = [];
    const progress = new Progress(ctx.json ? QUIET : ctx.io.stderr, ids.length, 'export');
    try {
      await eachLimit(ids, concurrency, async (id) => {
        try {
          const { name, text } = await exportOdekFile(client, id);
          const file = path.join(folder, name);
          const refused = await names.refusal(file, id);
          if (refused !== undefined) failed.push({ id, reason: refused });
          else files.push(await writeAtomically(file, text));
        } catch (err) {
          // A gateway's page (not Satchel's problem) stops the export as no answer does (exit 3).
          if (!SatchelApiError.is(err) || !err.fromSatchel) throw err;
          failed.push({ id, reason: describeApiError(err) });
        }
        progress.tick(
          `written ${files.length}${failed.length ? ` · failed ${failed.length}` : ''}`,
        );
      });
    } catch (err) {
      progress.abort();
      if (!ctx.json)
        ctx.io.stderr.write(
          `export stopped after ${files.length + failed.length} of ${ids.length} sessions\n`,
        );
      throw err;
    }
    files.sort();
    if (ctx.json) ctx.printJson({ exported: files.length, folder, files, failed });
    else {
      for (const f of failed) ctx.print(`failed     ${f.id}: ${f.reason}\n`);
      ctx.print(
        ids.length === 0
          ? 'No sessions to export.\n'
          : `Exported ${files.length} session${files.length === 1 ? '' : 's'} to ${folder}` +
              `${failed.length ? ` (${failed.length} failed)` : ''}\n`,
      );
    }
    return failed.length ? EXIT.partial : EXIT.ok;
  },
};

/** How often `export --all` lists what was written while it listed, at most. */
const CATCH_UP_ROUNDS = 5;

/**
 * The ids of every session, for `export --all`. A session written while the walk ran moves above its
 * cursor, and the walk does not show it (docs/api.md): after the walk, the sessions updated since it began
 * (less 60 s for clocks apart) are listed until a list brings no id not seen yet.
 */
async function everySession(client: SatchelClient): Promise<string[]> {
  const seen = new Set<string>();
  let since = Date.now() - 60_000;
  for await (const s of client.listAll()) seen.add(s.id);
  for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
    const began = Date.now();
    const before = seen.size;
    for await (const s of client.listAll({ updated_after: new Date(since) })) seen.add(s.id);
    if (seen.size === before) break;
    since = began - 60_000;
  }
  return [...seen];
}

/**
 * odek's own files in its sessions folder: the ids `index` and `latest` are reserved for them (skipped by
 * name), and vectors_meta.json is its session vector index's (odek since 2026-06), skipped when it holds no
 * session: `vectors_meta` is a valid Satchel id, which export writes there (review s67h).
 */
const ODEK_OWN_FILES = new Set(['index.json', 'latest.json', 'vectors_meta.json']);
const RESERVED_FILES = new Set(['index.json', 'latest.json']);

/** Whether a path is named as one of odek's own files. */
const ownFile = (file: string) => ODEK_OWN_FILES.has(path.basename(file));

/**
 * The names an export writes in one folder. odek's own files are never written over, nor a session's file
 * by another session whose id differs from it only in case, where the folder does not tell case apart
 * (macOS, Windows): there `Index.json` is odek's index.json, and `Foo.json` is foo.json (review s67k).
 */
export class FolderNames {
  /** Each name written so far (folded), and the id written there. */
  private readonly claimed = new Map<string, string>();

  constructor(private readonly fold: (name: string) => string) {}

  /** Why `file` may not be written with session `id`, or undefined when it may. */
  async refusal(file: string, id: string): Promise<string | undefined> {
    const name = this.fold(path.basename(file));
    // Claimed before any wait: two ids of one folded name may be in flight at once.
    const holder = this.claimed.get(name);
    if (holder !== undefined && holder !== id) return sharedFile(file, holder);
    this.claimed.set(name, id);
    if (!ODEK_OWN_FILES.has(name) && this.fold('A') === 'A') return undefined;
    const held = await fileHolds(file);
    if (held === 'missing') return undefined;
    if (held === 'other') {
      return ODEK_OWN_FILES.has(name)
        ? `${file} is odek's own file, not a session: not written over`
        : undefined;
    }
    return held.id !== id && this.fold(held.id) === this.fold(id)
      ? sharedFile(file, held.id)
      : undefined;
  }
}

const sharedFile = (file: string, holder: string) =>
  `${file} is session ${holder}'s file too, in a folder that does not tell case apart: not written over`;

/**
 * How a folder compares names: lower-cased when it does not tell case apart (macOS and Windows by
 * default), found by making a file of its own there and looking for its name in capitals.
 */
export async function foldsCase(folder: string): Promise<(name: string) => string> {
  const probe = `.satchel-case-${randomBytes(4).toString('hex')}`;
  const lower = (name: string) => name.toLowerCase();
  // Not writable: each file's own write says so; meanwhile the careful answer.
  const made = await writeFile(path.join(folder, probe), '', { flag: 'wx' }).then(
    () => true,
    () => false,
  );
  if (!made) return lower;
  try {
    const found = await stat(path.join(folder, probe.toUpperCase())).catch(() => undefined);
    return found === undefined ? (name) => name : lower;
  } finally {
    await rm(path.join(folder, probe), { force: true });
  }
}

/** What a file holds, as an export may replace it: nothing, a session (its id), or something else. */
async function fileHolds(file: string): Promise<'missing' | 'other' | { id: string }> {
  const source = await readSource(file);
  if (!('text' in source))
    return (await stat(file).catch(() => null)) === null ? 'missing' : 'other';
  try {
    const value = JSON.parse(source.text.replace(/^\ufeff/, '')) as unknown;
    return isObject(value) && typeof value.id === 'string' ? { id: value.id } : 'other';
  } catch {
    return 'other';
  }
}

/** Where progress goes with --json: nowhere. */
const QUIET = { write: () => true, isTTY: false };

/**
 * The files to import: folders expanded to their *.json (sorted), files as given, each once (not odek's
 * own); `listed`: those skipped when they hold no session: only a folder named them, or odek's name
 * vectors_meta.json (review s67h).
 */
export async function sessionFiles(
  paths: string[],
): Promise<{ files: string[]; skipped: string[]; listed: Set<string> }> {
  const files = new Set<string>();
  const listed = new Set<string>();
  const skipped: string[] = [];
  for (const p of paths) {
    let info;
    try {
      info = await stat(p);
    } catch {
      throw new LocalFileError(`no such file or folder: ${p}`);
    }
    if (!info.isDirectory()) {
      // Named as a file (a shell glob of the folder), odek's own file is skipped as in the folder.
      const name = path.basename(p);
      if (RESERVED_FILES.has(name)) skipped.push(p);
      else files.add(p);
      if (ODEK_OWN_FILES.has(name)) listed.add(p);
      else listed.delete(p);
      continue;
    }
    const names = (await readdir(p))
      .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
      .sort();
    for (const name of names) {
      const file = path.join(p, name);
      if (RESERVED_FILES.has(name)) skipped.push(file);
      else if (!files.has(file)) {
        files.add(file);
        listed.add(file);
      }
    }
  }
  return { files: [...files], skipped, listed };
}

/** Writes through a temporary file and a rename, so odek never reads half a session. */
async function writeAtomically(file: string, text: string): Promise<string> {
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    // 0600 as odek writes its own (a transcript is private); the rename keeps it over a file's mode.
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return file;
}

/** A file's text, or why it cannot be read. */
type Source = { text: string; regular: boolean } | { reason: string };

/**
 * Reads one file whole. Any failure is the file's (a permission, a folder named *.json, a file too large
 * for a string): the import lists it as failed and goes on.
 */
async function readSource(file: string): Promise<Source> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    const regular = (await handle.stat()).isFile();
    const bytes = await handle.readFile();
    const text = utf8Text(bytes);
    if (text === undefined) return { reason: `not UTF-8 (at byte offset ${invalidUtf8At(bytes)})` };
    return { text, regular };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err instanceof Error ? err.message : String(err);
    return {
      reason:
        code === 'ERR_FS_FILE_TOO_LARGE' || code === 'ERR_STRING_TOO_LONG'
          ? `cannot read: too large to read whole (${message})`
          : `cannot read: ${message}`,
    };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * A file's bytes as text, or undefined when they are not UTF-8: an odek file is UTF-8, and decoding other
 * bytes would put U+FFFD where they were, an import of other text than the file holds (the server refuses
 * such a body too). A byte order mark is kept (parseOdekFile drops it).
 */
function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (err) {
    // Anything else (a text too long for a string) is the caller's to report.
    if ((err as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA')
      return undefined;
    throw err;
  }
}

/** Where the first byte sequence that is not UTF-8 starts (the Unicode standard's table 3-7), or -1. */
export function invalidUtf8At(b: Uint8Array): number {
  for (let i = 0; i < b.length;) {
    const c = b[i]!;
    const tail = c < 0x80 ? 0 : c < 0xc2 ? -1 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : c < 0xf5 ? 3 : -1;
    if (tail < 0) return i;
    // The second byte's range is narrower after E0 and F0 (overlong forms), ED (surrogates), F4 (> U+10FFFF).
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= tail; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? low : 0x80) || d > (k === 1 ? high : 0xbf)) return i;
    }
    i += tail + 1;
  }
  return -1;
}

/**
 * The files whose id another file of this import with other bytes also has (a backup copy next to the
 * original), each as its failed outcome: all of them are refused, so the run never races two versions of
 * one session (which one was stored, and which one then differed, could change from run to run). Files
 * that cannot be parsed here are left to the import, which reports them. `read`: what the import must
 * not read again, the text of a file that can be read only once (a pipe: /dev/stdin, `<(…)`) and why a
 * file could not be read; a regular file is read again, so that an import does not hold every file.
 * `others`: the files of `listed` (found in a folder, or vectors_meta.json) that hold a JSON object with neither id nor
 * messages, not a session (odek's vector index keeps such a file there: review s66d), in `files`' order.
 */
async function sharedIds(
  files: string[],
  listed: Set<string>,
  concurrency: number,
): Promise<{
  refused: Map<string, ImportOutcome>;
  read: Map<string, Source>;
  others: Set<string>;
}> {
  const byId = new Map<string, { file: string; digest: string }[]>();
  const read = new Map<string, Source>();
  const notSessions = new Set<string>();
  await eachLimit(files, concurrency, async (file) => {
    const source = await readSource(file);
    if (!('text' in source) || !source.regular) read.set(file, source);
    if (!('text' in source)) return;
    // A byte order mark is not part of the JSON (parseOdekFile drops it too), nor of the content.
    const text = source.text.replace(/^\ufeff/, '');
    let value: { id?: unknown; messages?: unknown } | null;
    try {
      value = JSON.parse(text) as typeof value;
    } catch {
      return;
    }
    const id = value?.id;
    if (listed.has(file) && isObject(value) && id === undefined && value.messages === undefined)
      notSessions.add(file);
    if (typeof id !== 'string') return;
    const digest = createHash('sha256').update(text).digest('hex');
    byId.set(id, [...(byId.get(id) ?? []), { file, digest }]);
  });
  const refused = new Map<string, ImportOutcome>();
  for (const [id, copies] of byId) {
    if (new Set(copies.map((c) => c.digest)).size < 2) continue;
    const same = copies.map((c) => c.file);
    same.sort((a, b) => a.localeCompare(b));
    for (const file of same) {
      const others = same.filter((f) => f !== file).join(', ');
      const reason = `${others} has the same id: import one file per id (none of them was imported)`;
      refused.set(file, { source: file, id, status: 'failed', reason, notes: [] });
    }
  }
  return { refused, read, others: new Set(files.filter((f) => notSessions.has(f))) };
}

/** Whether a parsed JSON value is an object (not an array, not null). */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function concurrencyOf(ctx: CommandContext): number {
  const v = stringOpt(ctx.args.values, 'concurrency');
  return v === undefined ? 8 : integerArg(v, '--concurrency', 1, 64);
}

function counts(tally: Record<ImportStatus, number>, all = false): string {
  return (Object.entries(tally) as [ImportStatus, number][])
    .filter(([status, n]) => all || n > 0 || status === 'created')
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
}

/**
 * An import note as a person reads it next to `created`: the session was imported; what was left out or
 * changed is said as such (the JSON report keeps the notes as the import made them).
 */
export function noteText(note: string): string {
  const head = 'not imported: field';
  const tail = ` (${NOT_STORED_FORMAT})`;
  if (note.startsWith(head) && note.endsWith(tail)) {
    const fields = note.slice(head.length, -tail.length).replace(/^s? /, '');
    const many = fields.includes(', ');
    return `imported without ${many ? 'fields' : 'field'} ${fields}: ${NOT_STORED_FORMAT}`;
  }
  return note.replace(/^replaced: /, '');
}
