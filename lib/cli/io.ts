import { SatchelClient } from '../client/client.js';

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

/** Exit codes, documented in the README ("CLI"). */
export const EXIT = {
  ok: 0,
  /** The server answered with an error (problem+json). */
  api: 1,
  /** Bad command line: unknown command or option, malformed value, missing argument. */
  usage: 2,
  /** No answer from the server at SATCHEL_URL, after retries. */
  connection: 3,
  /** An import or export ran to the end, but some sessions failed (each is reported). */
  partial: 4,
  /** A local file or folder could not be read or written (export's folder, say). */
  file: 5,
  /** A bug: an error nothing above expected (printed with its stack). */
  internal: 70,
} as const;

/** A bad command line: printed with the command's usage line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** The client for SATCHEL_URL and SATCHEL_TOKEN. */
export function clientFrom(io: CliIO): SatchelClient {
  const url = io.env.SATCHEL_URL?.trim() || DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`SATCHEL_URL is not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`SATCHEL_URL must be http or https, not ${parsed.protocol}`);
  return new SatchelClient({
    url,
    token: io.env.SATCHEL_TOKEN?.trim() || undefined,
    // A CLI user waits for one person's command: fewer, shorter retries than a library default.
    retry: { retries: 3, baseDelayMs: 200, maxDelayMs: 2000, maxRetryAfterMs: 30_000 },
    headers: { 'user-agent': 'satchel-cli' },
    ...(io.fetch ? { fetch: io.fetch } : {}),
  });
}
