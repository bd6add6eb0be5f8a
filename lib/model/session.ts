import { utf8 } from './bytes.js';
// A namespace import, not `{ z }`: bundlers can then drop what is unused (all of zod's locales: 65 KB
// gzip of the Worker bundle).
import * as z from 'zod';
import { contentPartSchema, PARTS_FIELD, textOfParts, toStoredContent } from './parts.js';

/**
 * The stored format, declared once: odek's session file plus Satchel's `revision` (and an internal
 * `satchel` bookkeeping field that never leaves the service). Old odek files without the newer fields
 * load with defaults; unknown message fields are kept verbatim.
 */

/** What the save pipeline puts where a secret was: part of the stored format, so odek and imports can recognise it. */
export const PLACEHOLDER = '[REDACTED]';

/**
 * An RFC 3339 time as a client sends it, stored in UTC (the contract's "Times are RFC 3339 UTC"): an
 * offset is turned into `Z` at the same instant, its fractional digits kept as sent (odek's files may carry
 * more than milliseconds); a `Z` time is kept exactly (`t` and `z` as upper case).
 */
export const rfc3339 = z
  .preprocess(
    // RFC 3339 5.6 allows `t` and `z` in lower case; zod's check takes upper case only.
    (v) => (typeof v === 'string' ? v.toUpperCase() : v),
    z.iso.datetime({ offset: true }),
  )
  .transform((v, ctx) => {
    if (v.endsWith('Z')) return v;
    const fraction = /\.\d+/.exec(v)?.[0] ?? '';
    const utc = new Date(v).toISOString();
    // An offset that moves the time past year 9999 or before year 0 (a six-digit year in ISO form).
    if (utc.length !== 24) {
      ctx.issues.push({
        code: 'custom',
        message: 'the UTC time is outside years 0000-9999',
        input: v,
      });
      return z.NEVER;
    }
    return utc.slice(0, 19) + fraction + 'Z';
  });

/**
 * The instant of an RFC 3339 time in epoch ms, the digits past the millisecond kept as a fraction (to the
 * microsecond, which a double keeps apart at today's times), so that sessions odek wrote within one
 * millisecond still order by time. NaN for what is not a time.
 */
export function instantOf(time: string): number {
  const sub = /\.\d{3}(\d{1,3})/.exec(time)?.[1];
  return Date.parse(time) + (sub ? Number(sub) / 10 ** sub.length : 0);
}

export const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string().default('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const messageSchema = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  // OpenAI-style `content: null` on an assistant tool-call turn is stored as "" (odek's form).
  content: z
    .string()
    .nullable()
    .transform((v) => v ?? '')
    .pipe(z.string()), // says what comes out, for the OpenAPI document of responses
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  reasoning_content: z.string().optional(),
});
export type Message = z.output<typeof messageSchema>;

/** String keys to string values (a session's metadata), described without `propertyNames`. */
const stringMap = z.object({}).catchall(z.string());

/**
 * A message as a client sends it: `content` may also be an array of parts (stored as text + parts). The
 * stored form's own field, `content_parts`, is taken only as that form (string `content` that is the
 * parts' text, as a session read from storage holds it); otherwise GET would answer parts the client
 * never sent as content.
 */
export const messageInputSchema = messageSchema
  .extend({
    content: z.union([z.string(), z.array(contentPartSchema), z.null()], {
      // The union's own message says only "Invalid input": name what is wrong, in a part by its index.
      error: (issue) =>
        issue.input === undefined
          ? 'content is required: a string, or an array of content parts'
          : Array.isArray(issue.input)
            ? partsProblem(issue.input)
            : 'content must be a string, an array of content parts, or null',
    }),
  })
  .superRefine((m, ctx) => {
    if (!(PARTS_FIELD in m)) return;
    const parts = z.array(contentPartSchema).safeParse((m as Record<string, unknown>)[PARTS_FIELD]);
    const content = typeof m.content === 'string' ? m.content : null;
    // A form stored before 2026-12-05 has its reasoning parts' text in content too.
    const texts = parts.success ? [textOfParts(parts.data), textOfParts(parts.data, true)] : [];
    if (content === null || !texts.includes(content))
      ctx.addIssue({
        code: 'custom',
        path: [PARTS_FIELD],
        message: `${PARTS_FIELD} is the stored form of parts: send the parts as content (an array)`,
      });
  })
  .transform((m) => toStoredContent(m) as Message);

/** What is wrong in an array of content parts, the first bad part named by its index. */
function partsProblem(parts: unknown[]): string {
  const first = z.array(contentPartSchema).safeParse(parts).error?.issues[0];
  if (!first) return 'content must be a string, an array of content parts, or null';
  const at = first.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const [index] = first.path;
  const shape = typeof parts[index as number];
  return `content${at}: ${shape === 'object' ? first.message : 'each part must be an object with a type'}`;
}

/** A message as the API shows it: parts back in `content` when it was sent as parts. */
export const publicMessageSchema = messageSchema.extend({
  content: z.union([z.string(), z.array(contentPartSchema)]),
});

export const refKind = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'kind must be 1-64 of [a-z0-9_-]');
export const refUri = z
  .string()
  .min(1, 'uri must not be empty')
  .refine((s) => utf8(s).byteLength <= 2048, 'uri must be at most 2048 bytes')
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\0-\x1f\x7f-\x9f]/.test(s), 'uri must not contain control characters');

/**
 * An external ref as a client sends it (`created_by`, `read_only`, `created_at` optional); another field
 * is a 400, as a misspelled `readonly` would be lost (a PUT leaves it out: a GET may show fields of odek's).
 */
export const externalRefInputSchema = z.strictObject({
  kind: refKind,
  uri: refUri,
  created_by: z.string().min(1).max(128).optional(),
  read_only: z.boolean().optional(),
  created_at: rfc3339.optional(),
});
export type ExternalRefInput = z.output<typeof externalRefInputSchema>;

/** An external ref as stored (schema odek-extension/v1). */
export const externalRefSchema = z.looseObject({
  kind: z.string(),
  uri: z.string(),
  created_by: z.string().default('api'),
  read_only: z.boolean().default(false),
  created_at: z.string().default(''),
});
export type ExternalRef = z.output<typeof externalRefSchema>;

/** What a write remembers so that a retry is a no-op: a key (hashed) and the receipt it produced. */
export const writeRecordSchema = z.object({
  k: z.string(),
  /** A Satchel of 2026-12-02 or before: SHA-256 of the request alone (`g` since). */
  f: z.string().optional(),
  /**
   * SHA-256 of the Idempotency-Key and the request: a key reused for another request is 422. The key is
   * in it (the record holds only the key's hash), so whoever reads the bucket cannot test guesses at a
   * secret the request held, as they could with `f`.
   */
  g: z.string().optional(),
  at: z.number(),
  r: z.record(z.string(), z.unknown()),
  /**
   * What the write's audit record holds beyond its receipt (op, device label redacted, messages added,
   * messages after, untrusted sources), so that the audit record, written after the answer, can be
   * restored from the object when its writer stopped before storing it.
   */
  a: z
    .object({
      o: z.string(),
      d: z.string(),
      n: z.number(),
      m: z.number(),
      s: z.array(z.string()).optional(),
    })
    .optional(),
});
export type WriteRecord = z.output<typeof writeRecordSchema>;

export const bookkeepingSchema = z.looseObject({
  writes: z.array(writeRecordSchema).default([]),
});

export const storedSessionSchema = z.looseObject({
  id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  model: z.string().default(''),
  provider: z.string().default(''),
  turns: z.number().int().nonnegative().default(0),
  task: z.string().default(''),
  sandbox: z.boolean().default(false),
  messages: z.array(messageSchema).default([]),
  // null (old odek files) reads as []; a preprocess rather than a transform keeps the output describable.
  external_refs: z.preprocess((v) => v ?? [], z.array(externalRefSchema)).default([]),
  untrusted_ingested: z.boolean().default(false),
  episode_untrusted: z.boolean().default(false),
  episode_taint_tracked: z.boolean().default(false),
  revision: z.number().int().nonnegative().default(0),
  // Satchel's own (v1.1): the caller's metadata; odek keeps unknown top-level fields.
  metadata: stringMap.optional(),
  satchel: bookkeepingSchema.optional(),
});
export type StoredSession = z.output<typeof storedSessionSchema>;

/** A session as the API returns it: the stored object without internal bookkeeping. */
export const sessionSchema = storedSessionSchema
  .omit({ satchel: true })
  .extend({ messages: z.array(publicMessageSchema), metadata: stringMap });
export type Session = z.output<typeof sessionSchema>;

/** Session metadata as `list` returns it. */
export const sessionSummarySchema = z.object({
  id: z.string(),
  task: z.string(),
  turns: z.number().int().nonnegative(),
  model: z.string(),
  provider: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  bytes: z.number().int().nonnegative(),
  // v1.1: the session's metadata and its provenance flags, so a list can show and filter them.
  metadata: stringMap,
  sandbox: z.boolean(),
  untrusted_ingested: z.boolean(),
  episode_untrusted: z.boolean(),
});
export type SessionSummary = z.output<typeof sessionSummarySchema>;

/** The answer to every successful write. */
export const writeReceiptSchema = z.object({
  id: z.string(),
  revision: z.number().int().nonnegative(),
  turns: z.number().int().nonnegative(),
  updated_at: z.string(),
  bytes: z.number().int().nonnegative(),
  redactions: z.number().int().nonnegative(),
  dropped_groups: z.number().int().nonnegative(),
  untrusted_ingested: z.boolean(),
  episode_untrusted: z.boolean(),
});
export type WriteReceipt = z.output<typeof writeReceiptSchema>;
