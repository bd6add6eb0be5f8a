import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ExternalRefInput } from '../client/types.js';
import { externalRefInputSchema } from '../model/session.js';
import { UsageError } from './io.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes. */
export const COMMON: Options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export interface Parsed {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** node:util parseArgs, strict, with its errors turned into usage errors. */
export function parse(argv: string[], options: Options): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...COMMON, ...options },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Parsed['values'], positionals };
  } catch (err) {
    // A negative number is not an option: say what it is (`session cleanup -1`, `--days -3`), when the
    // error is about it (`'-1'` for `-12`; the option before it for a value), not about another argument.
    const error = err as Error & { code?: string };
    const quoted = /'(-[^']*)'/.exec(error.message)?.[1];
    const end = argv.indexOf('--');
    const options = end < 0 ? argv : argv.slice(0, end);
    const negative = options.find(
      (a, i) =>
        /^-\d/.test(a) &&
        quoted !== undefined &&
        (a.startsWith(quoted) ||
          (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && options[i - 1] === quoted)),
    );
    if (negative !== undefined)
      throw new UsageError(`${negative} is a negative number: counts and days are 0 or more`);
    throw new UsageError(
      (err as Error).message.replace(/\. To specify a positional argument.*$/s, ''),
    );
  }
}

/** A whole number in [min, max] from an argument, or a usage error naming it. */
export function integerArg(
  value: string | undefined,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) throw new UsageError(`missing ${name}`);
  if (!/^\d+$/.test(value.trim()))
    throw new UsageError(`${name} must be a whole number, not ${JSON.stringify(value)}`);
  const n = Number(value.trim());
  if (n < min || n > max) {
    const range =
      n > max && max === Number.MAX_SAFE_INTEGER
        ? `at most ${max}`
        : max === Number.MAX_SAFE_INTEGER
          ? `at least ${min}`
          : `from ${min} to ${max}`;
    throw new UsageError(`${name} must be ${range}, not ${value.trim()}`);
  }
  return n;
}

/** The one string value of an option (the last one given). */
export function stringOpt(values: Parsed['values'], name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

const REF_KEYS = ['kind', 'uri', 'created_by', 'read_only', 'created_at'] as const;
const LONG_FORM = new RegExp(`^(?:${REF_KEYS.join('|')})=`);
const LONG_SPLIT = new RegExp(`,(?=(?:${REF_KEYS.join('|')})=)`);

/**
 * `--external-ref kind=uri` or `--external-ref kind=…,uri=…,created_by=…,read_only=true` (a uri may hold
 * `=` and `,`). `created_by` defaults to `cli`. Validated by the route's own schema; a bad value is a usage
 * error that names the flag.
 */
export function parseExternalRef(value: string, flag = '--external-ref'): ExternalRefInput {
  const bad = (why: string) => new UsageError(`${flag} ${JSON.stringify(value)}: ${why}`);
  const fields: Record<string, string> = {};
  if (LONG_FORM.test(value) && value.includes(',')) {
    for (const part of value.split(LONG_SPLIT)) {
      const eq = part.indexOf('=');
      const key = part.slice(0, eq);
      if (key in fields) throw bad(`${key} given twice`);
      fields[key] = part.slice(eq + 1);
    }
  } else {
    const eq = value.indexOf('=');
    if (eq <= 0) throw bad('expected kind=uri or kind=…,uri=…[,created_by=…][,read_only=true]');
    fields.kind = value.slice(0, eq);
    fields.uri = value.slice(eq + 1);
  }
  // A misspelled field (`readonly=true`, `url=…`, `created-by=…`) would be folded into the field before
  // it, and so would any field after the short form's uri (`kind=uri,read_only=true`: review s53d): a name
  // one edit from a field's is refused (a uri may hold other `,name=` pairs: `,line=42`).
  for (const [, name] of Object.values(fields)
    .join(',')
    .matchAll(/,([A-Za-z_-]{3,})=/g))
    if (REF_KEYS.some((k) => editDistance(name!.toLowerCase(), k) <= 1))
      throw bad(
        `${name} is not a field (${REF_KEYS.join(', ')}), nor part of a uri after kind=: name every ` +
          'field (kind=…,uri=…,read_only=true), and write a comma in a uri as %2C',
      );
  if (!fields.kind) throw bad('kind is missing');
  if (!fields.uri) throw bad('uri is missing');
  let readOnly: boolean | undefined;
  if (fields.read_only !== undefined) {
    if (fields.read_only !== 'true' && fields.read_only !== 'false')
      throw bad('read_only must be true or false');
    readOnly = fields.read_only === 'true';
  }
  const candidate = {
    kind: fields.kind,
    uri: fields.uri,
    created_by: fields.created_by ?? 'cli',
    ...(readOnly !== undefined ? { read_only: readOnly } : {}),
    ...(fields.created_at !== undefined ? { created_at: fields.created_at } : {}),
  };
  const checked = externalRefInputSchema.safeParse(candidate);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = issue.path.join('.');
    throw bad(
      field && !issue.message.startsWith(field) ? `${field}: ${issue.message}` : issue.message,
    );
  }
  return checked.data;
}

/** Every `--external-ref` given (the option is repeatable). */
export function externalRefs(values: Parsed['values']): ExternalRefInput[] {
  const given = values['external-ref'];
  const list = Array.isArray(given)
    ? (given as string[])
    : typeof given === 'string'
      ? [given]
      : [];
  return list.map((v) => parseExternalRef(v));
}

/** Levenshtein distance of two short strings. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length]!;
}
