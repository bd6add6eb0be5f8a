import type { SatchelClient } from '../client/client.js';
import {
  badPort,
  SatchelApiError,
  SatchelConnectionError,
  SatchelResponseError,
} from '../client/errors.js';
import { parse } from './args.js';
import type { Command, CommandContext } from './command.js';
import { continueCommand } from './commands/continue.js';
import { search } from './commands/search.js';
import { append, cleanup, create, list, remove, show, trim } from './commands/session.js';
import { exportCommand, importCommand } from './commands/transfer.js';
import {
  AdvisedError,
  clientFrom,
  DEFAULT_URL,
  EXIT,
  LocalFileError,
  LostWriteError,
  notSatchel,
  ServerClock,
  shellQuote,
  UsageError,
  type CliIO,
  type Out,
} from './io.js';

/**
 * The `satchel` command line: finds the command, parses its options, maps every failure to an
 * exit code.
 */

const COMMANDS: Command[] = [
  list,
  show,
  create,
  append,
  remove,
  trim,
  cleanup,
  continueCommand,
  search,
  importCommand,
  exportCommand,
];

const OVERVIEW = `satchel: the command line for a Satchel session store

Usage: satchel <command> [options]

${COMMANDS.map((c) => `  ${c.name.padEnd(16)} ${c.summary}`).join('\n')}

Every command takes --help and --json. satchel --version prints the version.

Environment:
  SATCHEL_URL     the server (default ${DEFAULT_URL})
  SATCHEL_TOKEN   a token of the server's SATCHEL_TOKENS (not needed for a local server without them)

Exit codes: 0 done · 1 the server answered an error · 2 bad command line · 3 server unreachable ·
4 import or export finished with failures · 5 a local file could not be read or written`;

/** The `satchel` package's version (packages/client/package.json; test/cli/cli.test.ts keeps them equal). */
export const VERSION = '0.1.0';

/** Runs one command line (without `node` and the script) and returns its exit code. */
export async function main(argv: string[], io: CliIO): Promise<number> {
  // Only an option: a `--json` after `--` is text (a message, a task), not a request for JSON errors.
  const end = argv.indexOf('--');
  const json = (end < 0 ? argv : argv.slice(0, end)).includes('--json');
  if (
    argv.length === 0 ||
    (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help'))
  ) {
    (argv.length === 0 ? io.stderr : io.stdout).write(OVERVIEW + '\n');
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (argv.length === 1 && ['--version', '-V', 'version'].includes(argv[0]!)) {
    io.stdout.write(`satchel ${VERSION}\n`);
    return EXIT.ok;
  }
  const found = findCommand(argv);
  if (!found) return unknownCommand(argv, io, json);
  const { command, rest } = found;
  let client: SatchelClient | undefined;
  const clock = new ServerClock();
  try {
    const args = parse(rest, command.options);
    if (args.values.help === true) {
      io.stdout.write(`Usage: ${command.help}\n`);
      return EXIT.ok;
    }
    const ctx: CommandContext = {
      io,
      args,
      json: args.values.json === true,
      client: () => (client ??= clientFrom(io, clock)),
      serverNow: () => clock.now(),
      width: io.stdout.isTTY && io.stdout.columns ? io.stdout.columns : 100,
      print: (text) => void io.stdout.write(text),
      printJson: (value) => void io.stdout.write(JSON.stringify(value, null, 2) + '\n'),
    };
    return await command.run(ctx);
  } catch (err) {
    return reportFailure(err, command, io, json);
  }
}

/** No command matched: the `session` group's listing for `satchel session [--help]`, else usage. */
function unknownCommand(argv: string[], io: CliIO, json: boolean): number {
  const group = argv[0] === 'session';
  const word = group ? argv[1] : argv[0];
  if (group && (word === undefined || word.startsWith('-'))) {
    const text = `Usage: satchel session <command>\n\n${COMMANDS.filter((c) =>
      c.name.startsWith('session '),
    )
      .map((c) => `  ${c.name.padEnd(16)} ${c.summary}`)
      .join('\n')}\n`;
    const help = word === '--help' || word === '-h';
    (help ? io.stdout : io.stderr).write(text);
    return help ? EXIT.ok : EXIT.usage;
  }
  const name = JSON.stringify(group ? `session ${word}` : word);
  return usageError(io, `unknown command ${name}; \`satchel --help\` lists them`, json);
}

/** Maps a command's failure to its message and exit code; rethrows what is not a known failure. */
function reportFailure(err: unknown, command: Command, io: CliIO, json: boolean): number {
  if (err instanceof UsageError) {
    return usageError(
      io,
      `${command.name}: ${err.message}\nUsage: ${command.help.split('\n')[0]}\n` +
        `(satchel ${command.name} --help for more)`,
      json,
    );
  }
  if (SatchelApiError.is(err) && err.fromSatchel === false) {
    const detail = `${notSatchel(err)}: is SATCHEL_URL a Satchel server, and is what is in front of it up?`;
    io.stderr.write(
      json ? JSON.stringify({ error: 'connection', detail }) + '\n' : `satchel: ${detail}\n`,
    );
    return EXIT.connection;
  }
  if (SatchelApiError.is(err) || err instanceof AdvisedError) {
    reportApiError(err, io, json);
    return EXIT.api;
  }
  if (err instanceof LocalFileError) {
    io.stderr.write(
      json
        ? JSON.stringify({ error: 'file', detail: err.message }) + '\n'
        : `satchel: ${err.message}\n`,
    );
    return EXIT.file;
  }
  const unreachable = connectionMessage(err);
  if (unreachable !== undefined) {
    io.stderr.write(
      json
        ? JSON.stringify({ error: 'connection', detail: unreachable }) + '\n'
        : `satchel: ${unreachable}\n`,
    );
    return EXIT.connection;
  }
  const fsError = err as NodeJS.ErrnoException;
  if (
    err instanceof Error &&
    typeof fsError.code === 'string' &&
    typeof fsError.syscall === 'string'
  ) {
    const detail = `${fsError.syscall} ${fsError.path ?? ''}: ${fsError.code}`.replace(' :', ':');
    io.stderr.write(
      json ? JSON.stringify({ error: 'file', detail }) + '\n' : `satchel: ${detail}\n`,
    );
    return EXIT.file;
  }
  throw err;
}

/** What to say when no (Satchel) answer came (exit code 3); undefined for other failures. */
function connectionMessage(err: unknown): string | undefined {
  if (err instanceof LostWriteError)
    return (
      `${err.message}. ${err.advice ?? 'The write may have been stored. To retry it without storing it twice:'}\n` +
      `  ${err.again.map(shellQuote).join(' ')}`
    );
  // Nothing was sent: fetch (and every browser) refuses the fetch spec's "bad ports" outright.
  if (SatchelConnectionError.is(err) && badPort(err.cause))
    return (
      `${err.message}. fetch refuses port ${new URL(err.url).port} (one of its "bad ports"; ` +
      'browsers refuse it too): start the server on another PORT and set SATCHEL_URL to match.'
    );
  if (SatchelConnectionError.is(err))
    return (
      `${err.message}. Is the server running? ` + 'Start one with `npm start`, or set SATCHEL_URL.'
    );
  if (SatchelResponseError.is(err)) return `${err.message}: is SATCHEL_URL a Satchel server?`;
  return undefined;
}

/** Writes a server's problem (with any advice) as JSON or as text for people. */
function reportApiError(err: SatchelApiError | AdvisedError, io: CliIO, json: boolean): void {
  const advised = err instanceof AdvisedError ? err : undefined;
  const apiError = advised?.error ?? (err as SatchelApiError);
  if (json)
    io.stderr.write(
      JSON.stringify(advised ? { ...apiError.problem, advice: advised.advice } : apiError.problem) +
        '\n',
    );
  else io.stderr.write(describeProblem(apiError, io, advised));
}

/** The command named by the first one or two words, and the arguments after them. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

/** The start of the 401 detail of a server that has no SATCHEL_TOKENS (lib/http/auth.ts, NO_TOKENS_CONFIGURED). */
const NO_TOKENS = /^no SATCHEL_TOKENS is configured/;

/**
 * A problem for people: its title and detail, the fields a validation error names, and what to do
 * next where the server's own advice speaks HTTP (a 401 says to send a header; the CLI's user sets
 * SATCHEL_TOKEN).
 */
function describeProblem(err: SatchelApiError, io: CliIO, advised?: AdvisedError): string {
  const lines: string[] = [];
  // A server without SATCHEL_TOKENS refuses every token and says what to set: no token of its to pick.
  if (err.status === 401 && !NO_TOKENS.test(err.detail)) {
    lines.push(
      io.env.SATCHEL_TOKEN?.trim()
        ? `satchel: ${err.title}: ${err.detail}. ` +
            "SATCHEL_TOKEN is not one of the server's tokens (its SATCHEL_TOKENS); " +
            'check it, and that SATCHEL_URL is the server you mean.'
        : `satchel: ${err.title}: this server needs a token. ` +
            'Set SATCHEL_TOKEN to one of its tokens (its SATCHEL_TOKENS).',
    );
  } else lines.push(`satchel: ${err.title}: ${advised?.detail ?? err.detail}`);
  for (const e of err.errors) lines.push(`  ${e.path}: ${e.message}`);
  if (advised) lines.push(advised.advice);
  return lines.join('\n') + '\n';
}

function usageError(io: CliIO, message: string, json: boolean): number {
  io.stderr.write(
    json ? JSON.stringify({ error: 'usage', detail: message }) + '\n' : `satchel: ${message}\n`,
  );
  return EXIT.usage;
}

/**
 * The process entry: argv, env and the real streams; resolves to the exit code once stdout is
 * flushed.
 */
export async function runFromProcess(): Promise<number> {
  const stdout = closable(process.stdout);
  const stderr = closable(process.stderr);
  let code: number;
  try {
    code = await main(process.argv.slice(2), { stdout, stderr, env: process.env });
  } catch (err) {
    stderr.write(
      `satchel: unexpected error: ${
        err instanceof Error ? (err.stack ?? err.message) : String(err)
      }\n`,
    );
    code = EXIT.internal;
  }
  if (!stdout.closed) await flushed(process.stdout);
  return lostOutput(stdout, stderr) ?? code;
}

/** Resolves once what was written to `stream` is out, or it failed (its 'error' then came too). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('error', () => resolve());
    stream.write('', () => resolve());
  });
}

/**
 * Exit code 5 (a local file could not be written) when stdout failed other than by its reader going away
 * (ENOSPC: a full disk), said in one line on stderr: the output is incomplete. Undefined otherwise, also
 * when only stderr failed (what was lost there is progress and messages; the exit code still tells).
 */
function lostOutput(stdout: ClosableOut, stderr: ClosableOut): number | undefined {
  const code = stdout.failed?.code;
  if (stdout.failed === undefined || code === 'EPIPE') return undefined;
  stderr.write(`satchel: cannot write to stdout: ${code ?? stdout.failed.message}\n`);
  return EXIT.file;
}

/** A process stream as the CLI writes it: `closed` once a write failed, `failed` with that error. */
type ClosableOut = Out & {
  readonly closed: boolean;
  readonly failed: NodeJS.ErrnoException | undefined;
};

/**
 * A process stream whose reader may go away: `satchel session list | head` closes stdout early, and
 * `satchel import <folder> 2>&1 | head` stderr (its progress lines). That is not an error: what is written
 * after it goes nowhere, and the command runs to its end and exits with its own code (an import with a
 * failed file still exits 4; before review s58c one died half way through its files, exit code 1). Any
 * other failed write (a full disk) is kept for runFromProcess: rethrown from this handler, it was an
 * uncaught exception with a stack and exit code 1 (review s60d).
 */
function closable(stream: NodeJS.WriteStream): ClosableOut {
  let failed: NodeJS.ErrnoException | undefined;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    failed ??= err;
  });
  return {
    write: (chunk: string) => (failed ? true : stream.write(chunk)),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
    get closed() {
      return failed !== undefined;
    },
    get failed() {
      return failed;
    },
  };
}
