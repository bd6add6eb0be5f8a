import { integerArg, externalRefs, stringOpt, type Options } from '../args.js';
import type { Command } from '../command.js';
import { SatchelApiError } from '../../client/errors.js';
import { newSessionId } from '../../model/ids.js';
import {
  AdvisedError,
  EXIT,
  idempotencyKeyOption,
  keyedWrite,
  optionWords,
  positionalWords,
  UsageError,
} from '../io.js';
import { sessionTable, transcript } from '../render.js';
import type { SessionSummary } from '../../client/types.js';

/** `satchel session …`: odek's session commands against the server. */

const REF_OPTION: Options = { 'external-ref': { type: 'string', multiple: true } };
const REF_HELP = `  --external-ref kind=uri | kind=…,uri=…[,created_by=…][,read_only=true]
                    attach an external ref (repeatable; created_by defaults to cli)`;

/** What to do when a command on the latest session finds none. */
export const NO_SESSIONS_ADVICE =
  'There are no sessions in this namespace yet: create one with `satchel session create "task"`, ' +
  "or import odek's with `satchel import ~/.odek/sessions`.";

/** `n thing` or `n things`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export const list: Command = {
  name: 'session list',
  summary: 'list sessions, newest first',
  help: `satchel session list [--limit N] [--json]

Lists sessions, newest first (by last update): ID, Turns, Model, Task. At most 20 unless --limit.

  --limit N   how many (1 or more; pages of 100 are fetched as needed)
  --json      {"sessions": [...]} with each session's metadata`,
  options: { limit: { type: 'string', short: 'n' } },
  async run(ctx) {
    if (ctx.args.positionals.length)
      throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args.positionals[0])}`);
    const limitArg = stringOpt(ctx.args.values, 'limit');
    const limit = limitArg === undefined ? 20 : integerArg(limitArg, '--limit', 1);
    const client = ctx.client();
    const sessions: SessionSummary[] = [];
    if (limit <= 100) sessions.push(...(await client.list({ limit })).sessions);
    else {
      for await (const s of client.listAll()) {
        sessions.push(s);
        if (sessions.length >= limit) break;
      }
    }
    if (ctx.json) ctx.printJson({ sessions });
    else ctx.print(sessionTable(sessions, ctx.width));
    return EXIT.ok;
  },
};

export const show: Command = {
  name: 'session show',
  summary: 'show a session as a transcript (the latest without an id)',
  help: `satchel session show [id] [--full] [--json]

Shows a session as a readable transcript: a header (task, model, turns, flags, external refs), then
every message under its role, tool calls indented under the assistant message that made them and tool
results labelled with their call. Without an id, the most recently updated session.

  --full      tool results whole (otherwise cut to 20 lines)
  --json      the raw session object, as stored`,
  options: { full: { type: 'boolean' } },
  async run(ctx) {
    const [id, extra] = ctx.args.positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
    sessionIdArg(id);
    const client = ctx.client();
    let session;
    try {
      ({ session } = id === undefined ? await client.latest() : await client.get(id));
    } catch (err) {
      if (id === undefined && SatchelApiError.is(err) && err.status === 404)
        throw new AdvisedError(err, NO_SESSIONS_ADVICE);
      throw err;
    }
    if (ctx.json) ctx.printJson(session);
    else ctx.print(transcript(session, { full: ctx.args.values.full === true }));
    return EXIT.ok;
  },
};

export const remove: Command = {
  name: 'session delete',
  summary: 'delete a session with its audit log and search entries',
  help: `satchel session delete <id> [--json]

Deletes the session, its audit log and its search entries.`,
  options: {},
  async run(ctx) {
    const id = sessionIdArg(exactlyOne(ctx.args.positionals, '<id>'));
    await ctx.client().delete(id);
    if (ctx.json) ctx.printJson({ deleted: id });
    else ctx.print(`Deleted session ${id}\n`);
    return EXIT.ok;
  },
};

export const trim: Command = {
  name: 'session trim',
  summary: 'keep the system message and the newest messages, n in all',
  help: `satchel session trim <id> <n> [--idempotency-key KEY] [--json]

Keeps n messages (n ≥ 2, the system message counts) and drops the oldest others, never splitting a tool
call from its results (so it may keep fewer). Prints: Trimmed session X: A → B messages (C dropped)

The request carries an Idempotency-Key, so a retry after a lost answer prints the counts of the trim
that landed. Give your own with --idempotency-key to make a rerun of the whole command answer them too.

  --idempotency-key KEY   1-255 visible ASCII characters (default: a new random key)`,
  options: { 'idempotency-key': { type: 'string' } },
  async run(ctx) {
    const [id, n, extra] = ctx.args.positionals;
    if (id === undefined || n === undefined) throw new UsageError('needs <id> and <n>');
    sessionIdArg(id);
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
    const keep = integerArg(n, '<n>', 2);
    const key =
      idempotencyKeyOption(stringOpt(ctx.args.values, 'idempotency-key')) ?? crypto.randomUUID();
    // An id that starts with '-' goes after `--`, where it is not taken for an option.
    const again = id.startsWith('-')
      ? [
          'satchel',
          'session',
          'trim',
          ...optionWords('--idempotency-key', key),
          '--',
          id,
          String(keep),
        ]
      : ['satchel', 'session', 'trim', id, String(keep), ...optionWords('--idempotency-key', key)];
    const out = await keyedWrite(ctx.client().trim(id, keep, { idempotencyKey: key }), again);
    if (ctx.json) ctx.printJson(out);
    else
      ctx.print(
        `Trimmed session ${out.id}: ${out.before} → ${plural(out.after, 'message')} (${out.dropped} dropped)\n`,
      );
    return EXIT.ok;
  },
};

export const cleanup: Command = {
  name: 'session cleanup',
  summary: 'delete sessions not updated for <days> days',
  help: `satchel session cleanup <days> [--json]

Deletes every session not updated in the last <days> days. 0 deletes every session of the namespace.
A server that deletes a batch per call (a Worker) is called again until none is left.`,
  options: {},
  async run(ctx) {
    const days = integerArg(exactlyOne(ctx.args.positionals, '<days>'), '<days>', 0);
    const client = ctx.client();
    let out = await client.cleanup(days);
    const total = { ...out };
    // Again while some are left and fewer each time (sessions written meanwhile could keep it going).
    for (let before = Infinity; out.remaining && out.remaining < before;) {
      before = out.remaining;
      try {
        out = await client.cleanup(days);
      } catch (err) {
        // What the calls before it deleted was acknowledged: it is printed before the error (review s55d).
        const partial = { deleted: total.deleted, remaining: before, uncounted: true as const };
        if (ctx.json) ctx.printJson(partial);
        else
          ctx.print(
            `Deleted ${plural(partial.deleted, 'session')}, then a call failed (sessions it deleted are ` +
              `not counted); up to ${before} more are left: run it again\n`,
          );
        throw err;
      }
      total.deleted += out.deleted;
      if (out.uncounted) total.uncounted = true;
    }
    if (out.remaining) total.remaining = out.remaining;
    else delete total.remaining;
    if (ctx.json) ctx.printJson(total);
    else
      ctx.print(
        `Deleted ${plural(total.deleted, 'session')}${days === 0 ? '' : ` not updated in ${plural(days, 'day')}`}` +
          (total.uncounted
            ? ' (an earlier attempt got no answer or failed: sessions it deleted are not counted)'
            : '') +
          (total.remaining ? `; ${total.remaining} more are left: run it again` : '') +
          '\n',
      );
    return EXIT.ok;
  },
};

export const create: Command = {
  name: 'session create',
  summary: 'create a session and print its id',
  help: `satchel session create "task" [--system TEXT] [--model M] [--provider P] [--id ID] [--external-ref …] [--json]

Creates a session for the task and prints its id.

  --system TEXT     a system prompt as the first message
  --model M, --provider P
                    the model the session runs with (continue uses it)
  --id ID           your own id (1-128 of A-Z a-z 0-9 . _ -)
${REF_HELP}
  --json            the created session`,
  options: {
    ...REF_OPTION,
    system: { type: 'string' },
    model: { type: 'string' },
    provider: { type: 'string' },
    id: { type: 'string' },
  },
  async run(ctx) {
    const task = words(ctx.args.positionals, '"task"');
    const refs = externalRefs(ctx.args.values);
    const system = stringOpt(ctx.args.values, 'system');
    const model = stringOpt(ctx.args.values, 'model');
    const provider = stringOpt(ctx.args.values, 'provider');
    const given = sessionIdArg(stringOpt(ctx.args.values, 'id'), '--id');
    // Chosen here when not given, so that a create whose answer was lost can name the session it made.
    const id = given ?? newSessionId();
    const client = ctx.client();
    const again = ['satchel', 'session', 'create', ...optionWords('--id', id)];
    for (const [name, value] of [
      ['--system', system],
      ['--model', model],
      ['--provider', provider],
    ] as const)
      if (value !== undefined) again.push(...optionWords(name, value));
    again.push(...refArgs(ctx.args.values), ...positionalWords(task));
    const made = client.create({
      task,
      id,
      ...(model !== undefined ? { model } : {}),
      ...(provider !== undefined ? { provider } : {}),
      ...(system !== undefined ? { messages: [{ role: 'system', content: system }] } : {}),
      ...(refs.length ? { external_refs: refs } : {}),
    });
    const advice =
      `The session may have been created as ${id}: \`satchel session show ${id}\` tells. ` +
      'If it is not there, create it under that id:';
    const { session } = await keyedWrite(made, again, advice).catch((err: unknown) => {
      if (!(SatchelApiError.is(err) && err.status === 409 && err.afterLostAttempt)) throw err;
      // An id this command chose is nobody else's: the session is its unanswered attempt's.
      if (given === undefined) return client.get(id);
      // The id is the caller's: the session there may be the unanswered attempt's, or another's.
      throw new AdvisedError(
        err,
        'An earlier attempt of this command got no answer and may have created it: ' +
          `\`satchel session show ${id}\` shows the session there.`,
      );
    });
    if (ctx.json) ctx.printJson(session);
    else ctx.print(`${session.id}\n`);
    return EXIT.ok;
  },
};

export const append: Command = {
  name: 'session append',
  summary: 'append a message to a session, without a model turn',
  help: `satchel session append <id> "message" [--role R] [--idempotency-key KEY] [--external-ref …] [--json]

Appends one message to the session, after whatever other devices stored meanwhile (no If-Match), and
prints the new revision. No model turn runs (\`satchel continue\` runs one).

The request carries an Idempotency-Key, so the client's own retries never store the message twice. Give
your own with --idempotency-key to make a retry of the whole command a no-op as well: the same key with
the same message answers the first result and stores nothing; with a different message it is refused (422).

  --role R                user (default), assistant or system
  --idempotency-key KEY   1-255 visible ASCII characters (default: a new random key)
${REF_HELP}
  --json                  the write receipt`,
  options: { ...REF_OPTION, role: { type: 'string' }, 'idempotency-key': { type: 'string' } },
  async run(ctx) {
    const [id, ...rest] = ctx.args.positionals;
    if (id === undefined) throw new UsageError('missing <id>');
    sessionIdArg(id);
    const content = words(rest, '"message"');
    const role = stringOpt(ctx.args.values, 'role') ?? 'user';
    if (role !== 'user' && role !== 'assistant' && role !== 'system')
      throw new UsageError(`--role must be user, assistant or system, not ${JSON.stringify(role)}`);
    const key =
      idempotencyKeyOption(stringOpt(ctx.args.values, 'idempotency-key')) ?? crypto.randomUUID();
    const refs = externalRefs(ctx.args.values);
    const again = ['satchel', 'session', 'append', ...optionWords('--idempotency-key', key)];
    if (role !== 'user') again.push('--role', role);
    again.push(...refArgs(ctx.args.values), ...positionalWords(id, content)); // a message may start with '-'
    const receipt = await keyedWrite(
      ctx
        .client()
        .append(
          id,
          { messages: [{ role, content }], ...(refs.length ? { external_refs: refs } : {}) },
          { idempotencyKey: key },
        ),
      again,
    );
    if (ctx.json) ctx.printJson(receipt);
    else
      ctx.print(
        `Appended 1 message to session ${receipt.id} ` +
          `(revision ${receipt.revision}, ${plural(receipt.turns, 'turn')})\n`,
      );
    return EXIT.ok;
  },
};

export { REF_HELP, REF_OPTION };

/** The --external-ref options as given, for a printed command that repeats them. */
export function refArgs(values: Record<string, unknown>): string[] {
  const given = values['external-ref'];
  const list = Array.isArray(given)
    ? (given as string[])
    : typeof given === 'string'
      ? [given]
      : [];
  return list.flatMap((v) => optionWords('--external-ref', v));
}

/**
 * A session id given on the command line: an empty one would name the session list, and `.` or `..`
 * another route (a URL resolves them as path segments; the client refuses to send them).
 */
export function sessionIdArg<T extends string | undefined>(id: T, name = '<id>'): T {
  if (id === '') throw new UsageError(`${name} must not be empty`);
  if (id === '.' || id === '..')
    throw new UsageError(`${name} must not be "." or ".." (no session has such an id)`);
  return id;
}

/** The single positional a command needs (not empty). */
export function exactlyOne(positionals: string[], name: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${name}`);
  if (positionals.length > 1)
    throw new UsageError(`expected one ${name}, got ${positionals.length} arguments`);
  if (positionals[0] === '') throw new UsageError(`${name} must not be empty`);
  return positionals[0]!;
}

/** Free text given as one quoted argument or as several words. */
export function words(positionals: string[], name: string): string {
  const text = positionals.join(' ');
  if (!text.trim()) throw new UsageError(`missing ${name}`);
  return text;
}
