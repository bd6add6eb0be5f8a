/**
 * The one logger: JSON lines on stdout/stderr. Callers pass fields, never request bodies, headers or
 * tokens, so nothing a client sends (secrets included) reaches a log.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** A logger writing JSON lines; `quiet` drops info lines (tests). */
export function createLogger(options: { quiet?: boolean } = {}): Logger {
  const write = (level: string, msg: string, fields?: LogFields) => {
    const line = JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields });
    if (level === 'info') {
      if (!options.quiet) console.log(line);
    } else console.error(line);
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

/** A short description of an error for logs: its name and message, never a stack or a body. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 300);
  return String(err).slice(0, 300);
}
