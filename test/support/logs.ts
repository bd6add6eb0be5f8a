import { createLogger, type LogFields, type Logger, type LogRecord } from '../../lib/model/log.js';

/**
 * A logger for tests that keeps its lines instead of printing them, so a passing run is quiet and a test
 * can assert the errors it provokes. When a test fails, the lines logged during it are printed
 * (test/support/setup.ts), so a failure still shows everything the server said.
 */
export interface CapturedLogs extends Logger {
  /** Every line so far (at most the last 5,000), oldest first. */
  readonly records: LogRecord[];
  /** Lines whose message matches (a string is an exact match), optionally at one level. */
  find(msg: string | RegExp, level?: LogRecord['level']): LogRecord[];
  /** Forgets the lines so far. */
  clear(): void;
}

const MAX_RECORDS = 5000;

/** Every capturing logger of this test file, for the failure report. */
export const activeCaptures = new Set<CapturedLogs>();

/** A logger that captures its lines (JSON records, redacted like the server's when `redact` is given). */
export function captureLogs(options: { redact?: (s: string) => string } = {}): CapturedLogs {
  const records: LogRecord[] = [];
  const inner = createLogger({
    format: 'json',
    ...(options.redact ? { redact: options.redact } : {}),
    write: (_level, _line, record) => {
      records.push(record);
      if (records.length > MAX_RECORDS) records.splice(0, records.length - MAX_RECORDS);
    },
  });
  const logs: CapturedLogs = {
    records,
    info: (m: string, f?: LogFields) => inner.info(m, f),
    warn: (m: string, f?: LogFields) => inner.warn(m, f),
    error: (m: string, f?: LogFields) => inner.error(m, f),
    find: (msg, level) =>
      records.filter(
        (r) =>
          (typeof msg === 'string' ? r.msg === msg : msg.test(r.msg)) &&
          (level === undefined || r.level === level),
      ),
    clear: () => void records.splice(0),
  };
  activeCaptures.add(logs);
  return logs;
}

/** A capture fed with raw output lines (a child process, workerd): JSON log lines become records. */
export function captureLines(): CapturedLogs & { add(text: string): void } {
  const logs = captureLogs();
  const add = (text: string) => {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let record: LogRecord | undefined;
      try {
        const parsed: unknown = JSON.parse(line);
        if (parsed && typeof parsed === 'object' && 'msg' in parsed) record = parsed as LogRecord;
      } catch {
        // plain text
      }
      logs.records.push(record ?? { t: new Date().toISOString(), level: 'info', msg: line });
    }
  };
  return Object.assign(logs, { add });
}

/**
 * Captures what code running in this process writes with console.log/info/warn/error (a bundled entry's
 * logger), until `restore()`.
 */
export function captureConsole(): CapturedLogs & { restore(): void } {
  const logs = captureLines();
  const methods = ['log', 'info', 'warn', 'error'] as const;
  const originals = methods.map((m) => console[m]);
  for (const m of methods)
    console[m] = (...args: unknown[]) => logs.add(args.map(String).join(' '));
  const restore = () => methods.forEach((m, i) => (console[m] = originals[i]!));
  return Object.assign(logs, { restore });
}
