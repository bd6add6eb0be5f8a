import { SatchelClient } from '../client/client.js';
import { SatchelApiError, SatchelConnectionError } from '../client/errors.js';

/** Where a command writes, and what it reads from its environment: the process, or a test's buffers. */
export interface Out {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface CliIO {
  stdout: Out;
  stderr: Out;
  env: Record<string, string | undefined>;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** Exit codes, documented in docs/cli.md. */
export const EXIT = {
  ok: 0,
  /** The server answered with an error (problem+json). */
  api: 1,
  /** Bad command line: unknown command or option, malformed value, missing argument. */
  usage: 2,
  /** No answer from the server at SATCHEL_URL after retries (or none in Satchel's JSON). */
  connection: 3,
  /** An import or export ran to the end, but some sessions failed (each is reported). */
  partial: 4,
  /** A local file or folder could not be read or written (export's folder, say). */
  file: 5,
  /** A bug: an error nothing above expected (printed with its stack). */
  internal: 70,
} as const;

/** A local file or folder that cannot be read or written (an import path that does not exist): exit code 5. */
export class LocalFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalFileError';
  }
}

/**
 * The server's error with what to do next, from the command that knows (exit code 1, as any server error).
 * `detail` replaces the server's detail where that advises something the command line does differently.
 */
export class AdvisedError extends Error {
  constructor(
    readonly error: SatchelApiError,
    readonly advice: string,
    readonly detail = error.detail,
  ) {
    super(error.message);
    this.name = 'AdvisedError';
  }
}

/** A bad command line: printed with the command's usage line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const DEFAULT_URL = 'http://127.0.0.1:8787';

/**
 * The server's clock, as the Date header of its answers tells it (in whole seconds): an import stamps the
 * time a file lacks with it, as the server refuses a time more than 5 minutes ahead of its own and this
 * machine's clock may be that far off (review s67h). This machine's clock until an answer says, and while
 * the two agree within the header's second or two.
 */
export class ServerClock {
  private offset = 0;

  /** `fetchImpl`, noting the Date header of each answer. */
  watch(fetchImpl: typeof fetch): typeof fetch {
    return async (input, init) => {
      const response = await fetchImpl(input, init);
      const offset = Date.parse(response.headers.get('date') ?? '') - Date.now();
      if (!Number.isNaN(offset)) this.offset = Math.abs(offset) > 2000 ? offset : 0;
      return response;
    };
  }

  /** The server's time now, as far as its answers have told it. */
  now(): number {
    return Date.now() + this.offset;
  }
}

/** The client for SATCHEL_URL and SATCHEL_TOKEN; `clock` learns the server's time from its answers. */
export function clientFrom(io: CliIO, clock = new ServerClock()): SatchelClient {
  const url = io.env.SATCHEL_URL?.trim() || DEFAULT_URL;
  // A host and port without a scheme (`localhost:8787` parses as the scheme `localhost:`, `127.0.0.1:8787`
  // does not parse): it holds no password, so the URL meant can be shown.
  if (/^[a-z0-9.-]+:\d{1,5}(\/[^@]*)?$/i.test(url))
    throw new UsageError(`SATCHEL_URL needs its scheme: http://${url} (or https://${url})`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not echoed: a URL that does not parse may still hold a password (`https://u:p#w@host`).
    throw new UsageError(
      'SATCHEL_URL is not a URL (http[s]://host[:port]; a password in it must be percent-encoded)',
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`SATCHEL_URL must be http or https, not ${parsed.protocol}`);
  // The API's paths start with /v1 already: `…/v1` answered "no route for GET /v1/v1/sessions".
  if (/\/v1\/?$/.test(parsed.pathname))
    throw new UsageError(
      `SATCHEL_URL is the server's root, without /v1: ${parsed.origin}${parsed.pathname.replace(/\/v1\/?$/, '')}`,
    );
  // Neither is echoed: both may hold a secret.
  if (parsed.username || parsed.password)
    throw new UsageError(
      'SATCHEL_URL must not hold a user name or password; put the token in SATCHEL_TOKEN',
    );
  const token = io.env.SATCHEL_TOKEN?.trim() || undefined;
  if (token !== undefined && !HEADER_VALUE.test(token))
    throw new UsageError(
      `SATCHEL_TOKEN is not a valid token: it holds ${
        /[^\t\x20-\x7e\x80-\u{10ffff}]/u.test(token)
          ? 'a line break or another control character'
          : 'a character an HTTP header cannot carry (beyond Latin-1, such as €)'
      }`,
    );
  return new SatchelClient({
    url,
    token,
    // A CLI user waits for one person's command: fewer, shorter retries than a library default.
    retry: { retries: 3, baseDelayMs: 200, maxDelayMs: 2000, maxRetryAfterMs: 30_000 },
    headers: { 'user-agent': 'satchel-cli' },
    fetch: clock.watch(io.fetch ?? ((input, init) => fetch(input, init))),
  });
}

/** What fetch takes as a header value (and so as a Bearer token): no control characters but tab. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * No answer to a write that carried an Idempotency-Key: it may have been stored. Exit code 3, with the
 * command that retries it under the same key.
 */
export class LostWriteError extends Error {
  constructor(
    readonly error: Error,
    readonly again: string[],
    /** What to say before `again` (default: the write may have been stored; retry without storing twice). */
    readonly advice?: string,
  ) {
    super(error.message);
    this.name = 'LostWriteError';
  }
}

/**
 * Runs a keyed write; a connection error that may have reached the server becomes a LostWriteError naming
 * `again`, the rerun command (one that was refused every time stored nothing: a plain connection error),
 * and a key reused for another request (422) says what to do.
 */
export async function keyedWrite<T>(
  write: Promise<T>,
  again: string[],
  advice?: string,
): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (SatchelConnectionError.is(err) && err.mayHaveLanded !== false)
      throw new LostWriteError(err, again, advice);
    // A proxy's or gateway's error page: whether the write reached Satchel is unknown.
    if (SatchelApiError.is(err) && err.fromSatchel === false)
      throw new LostWriteError(new Error(notSatchel(err)), again, advice);
    if (SatchelApiError.is(err) && err.status === 422 && /Idempotency-Key/i.test(err.detail))
      throw new AdvisedError(
        err,
        'Give a new --idempotency-key (or none) for a new request; repeat the first request ' +
          'unchanged to get its result.',
      );
    throw err;
  }
}

/** `Idempotency-Key` as the server takes it: 1-255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The `--idempotency-key` given, checked here so a bad one is a usage error, not the server's 400. */
export function idempotencyKeyOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(value))
    throw new UsageError(
      `--idempotency-key must be 1-255 visible ASCII characters (no spaces), not ${JSON.stringify(value)}`,
    );
  return value;
}

/**
 * An option and its value for a printed command: `--name=value` when the value starts with `-`, which
 * parseArgs refuses as a separate word ("argument is ambiguous"), else the two words.
 */
export function optionWords(name: string, value: string): string[] {
  return value.startsWith('-') ? [`${name}=${value}`] : [name, value];
}

/**
 * A printed command's positional words: after `--` when one of them starts with `-` (where it is not taken
 * for an option), as they are otherwise (docs/cli.md's examples).
 */
export function positionalWords(...words: string[]): string[] {
  return words.some((w) => w.startsWith('-')) ? ['--', ...words] : words;
}

/** A word quoted for a POSIX shell, so a printed command can be pasted back as it is. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_.,:/@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** What to say of an error answer that is not Satchel's problem JSON (a proxy's or gateway's page). */
export function notSatchel(err: SatchelApiError): string {
  const said = err.detail ? ` (${err.detail.slice(0, 120).toWellFormed()})` : '';
  return `the answer ${err.status} ${err.title}${said} is not Satchel's`;
}
