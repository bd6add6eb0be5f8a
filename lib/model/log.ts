/**
 * The one logger: one line per event, JSON (for machines) or pretty (for a person at a terminal), or
 * nothing (`SATCHEL_LOG=off`). Callers pass fields, never request bodies, headers or tokens; on top of
 * that every string of every line goes through `redact` (the save pipeline's redactor, injected by the
 * server: this layer cannot import the pipeline), so a secret-looking id or error text is masked too.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export type LogLevel = 'info' | 'warn' | 'error';

/** `SATCHEL_LOG`: `json` lines, `pretty` lines, or `off`. */
export type LogFormat = 'json' | 'pretty' | 'off';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty', 'off'];

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** One log event, as a JSON line holds it. */
export interface LogRecord {
  t: string;
  level: LogLevel;
  msg: string;
  [field: string]: string | number | boolean | null | undefined;
}

export interface LoggerOptions {
  /** Drop info lines (tests that only care about warnings and errors). */
  quiet?: boolean;
  /** Default `json`. */
  format?: LogFormat;
  /** Applied to the message and every string field before a line is written. */
  redact?: (text: string) => string;
  /** Where a finished line goes (default: info to stdout, warn and error to stderr). */
  write?: (level: LogLevel, line: string, record: LogRecord) => void;
  /** The clock (tests). */
  now?: () => Date;
}

/** A logger writing one line per event in `format`, every string redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const redact = options.redact ?? ((s: string) => s);
  const now = options.now ?? (() => new Date());
  const write = options.write ?? writeConsole;
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (format === 'off' || (level === 'info' && options.quiet)) return;
    const record: LogRecord = { t: now().toISOString(), level, msg: safely(redact, msg) };
    for (const [k, v] of Object.entries(fields ?? {})) {
      if (v === undefined || k === 't' || k === 'level' || k === 'msg') continue;
      record[k] = typeof v === 'string' ? safely(redact, v).slice(0, FIELD_CHARS) : v;
    }
    write(level, format === 'pretty' ? prettyLine(record) : JSON.stringify(record), record);
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** `SATCHEL_LOG` as a format; unset or empty: `pretty` on a terminal, `json` otherwise. Null when not a format. */
export function parseLogFormat(value: string | undefined, isTTY: boolean): LogFormat | null {
  if (value === undefined || value.trim() === '') return isTTY ? 'pretty' : 'json';
  const v = value.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(v) ? (v as LogFormat) : null;
}

/** `12:03:04.567 INFO  request method=GET route=/v1/sessions status=200 ms=3`: time, level, message, fields. */
export function prettyLine(record: LogRecord): string {
  const { t, level, msg, ...fields } = record;
  const time = t.slice(11, 23);
  const parts = [time, level.toUpperCase().padEnd(5), msg];
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const text = String(v);
    parts.push(`${k}=${/^[^\s"=]+$/.test(text) ? text : JSON.stringify(text)}`);
  }
  return parts.join(' ');
}

/** A short description of an error for logs: its name and message, never a stack or a body. */
export function describeError(err: unknown): string {
  // Bounded, not cut short: the logger cuts a field only after redacting it (a secret cut in two
  // would no longer match its rule, and half of it would be logged).
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return withoutIds(text.slice(0, 64 * 1024));
}

/**
 * A 5xx's message as the log may hold it (docs/configuration.md: never a raw id): an object key (it
 * holds the namespace and the session id: `the object at ns/a/sessions/<id>.json is not valid JSON`)
 * becomes `<key>`, and the ids a delete's or a cleanup's 503 names become `<id>` and `<ids>`. The answer
 * keeps them: the caller sent those ids or may read them.
 */
export function withoutIds(message: string): string {
  return message
    .replace(/[^\s(),;'"]*\bns\/[^\s(),;'"]*/g, '<key>')
    .replace(/\bsession \S+ is gone\b/g, 'session <id> is gone')
    .replace(/\bsession \S+ may have been stored\b/g, 'session <id> may have been stored')
    .replace(/(delete each again: )[^;]*/g, '$1<ids>');
}

/** A logged string field's longest form, cut after redaction. */
const FIELD_CHARS = 1000;

function writeConsole(level: LogLevel, line: string): void {
  if (level === 'info') console.log(line);
  else console.error(line);
}

/** A redactor that throws must not take the log line (or the request) down with it. */
function safely(redact: (s: string) => string, text: string): string {
  try {
    return redact(text);
  } catch {
    return '[unredactable]';
  }
}
