import * as z from 'zod';
import { publicMessageSchema, sessionSummarySchema, writeReceiptSchema } from './session.js';

/**
 * What the routes answer, as zod schemas: the OpenAPI document is made from them, and the OpenAPI test
 * checks every response it produces against them. The session, its summary and the write receipt live
 * with the stored format (`lib/model/session.ts`); these are the API's other answers.
 */

/** RFC 9457 problem JSON, the body of every error. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  /** A DELETE's 503 when the session went but its leftovers were not all erased: it is gone. */
  deleted: z.literal(true).optional(),
});

/** `GET /v1/health`: always 200; `degraded` when storage does not answer. */
export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  storage: z.object({
    /** `local`, `memory`, `s3:<bucket>[/<prefix>]`, `r2:BUCKET`: never a local path. */
    backend: z.string(),
    ok: z.boolean(),
    /** Time of this probe (until the answer, or until it gave up). */
    latency_ms: z.number().optional(),
    /** When not ok: `timeout`, `unreachable`, `denied`, `not-found` or `error`. */
    reason: z.enum(['timeout', 'unreachable', 'denied', 'not-found', 'error']).optional(),
    /** When not ok: one short line, e.g. `no answer within 1500 ms`, `HTTP 403 AccessDenied`. */
    error: z.string().optional(),
    /** The last failed probe since the process started, and when, even if storage answers again. */
    last_error: z.string().optional(),
    last_error_at: z.string().optional(),
  }),
  embeddings: z.object({
    configured: z.boolean(),
    space: z.string().nullable(),
    state: z.enum(['ok', 'cooldown', 'off']),
    cooldown_until: z.string().optional(),
    model: z.string().optional(),
    search: z.string().optional(),
  }),
  /** Whether continue runs a model turn (SATCHEL_MODEL_URL and SATCHEL_MODEL set); never the URL or key. */
  model: z.object({ configured: z.boolean() }).optional(),
});

/** `GET /v1/sessions`: one page of metadata, newest first. */
export const sessionPageSchema = z.object({
  sessions: z.array(sessionSummarySchema),
  next_cursor: z.string().nullable(),
});

export const trimResultSchema = z.object({
  id: z.string(),
  before: z.number().int().nonnegative(),
  after: z.number().int().nonnegative(),
  dropped: z.number().int().nonnegative(),
  /** Groups the size cap dropped beside the trim (its own write record can take more room than it freed). */
  dropped_groups: z.number().int().nonnegative(),
});

export const cleanupResultSchema = z.object({
  deleted: z.number().int().nonnegative(),
  /** Sessions older than the cutoff this call left for the next (a Worker deletes at most 32 per call). */
  remaining: z.number().int().positive().optional(),
});

/** One write as the audit log records it (strings redacted). */
export const auditRecordSchema = z.object({
  at: z.string(),
  op: z.enum(['create', 'append', 'replace', 'trim', 'pop', 'continue', 'delete', 'import']),
  device: z.string(),
  revision: z.number().int().nonnegative(),
  messages: z.number().int().nonnegative(),
  messages_added: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  redactions: z.number().int().nonnegative(),
  dropped_groups: z.number().int().nonnegative(),
  ingest_sources: z.array(z.string()),
  untrusted_ingested: z.boolean(),
  episode_untrusted: z.boolean(),
});

export const auditLogSchema = z.object({ records: z.array(auditRecordSchema) });

/** `continue`: the write receipt, whether a model turn ran, and its reply. */
export const continueAnswerSchema = writeReceiptSchema.extend({
  model_turn: z.boolean(),
  reply: z.string().optional(),
});

export const searchHitSchema = z.object({
  id: z.string(),
  task: z.string(),
  score: z.number(),
  snippet: z.string(),
  updated_at: z.string(),
});

/** The session_search tool's result: one shape per action, or a tool-level error (still 200). */
export const sessionSearchResultSchema = z.union([
  z.object({ sessions: z.array(sessionSummarySchema) }).meta({ title: 'list, find' }),
  z.object({ results: z.array(searchHitSchema) }).meta({ title: 'search' }),
  z
    .object({
      id: z.string(),
      task: z.string(),
      count: z.number().int().nonnegative(),
      messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })),
    })
    .meta({ title: 'get' }),
  z.object({ error: z.string() }).meta({ title: 'tool-level error' }),
]);

/** `POST /v1/hooks/{name}`: verified and accepted; stored after the response. */
export const hookAcceptedSchema = z.object({
  accepted: z.literal(true),
  delivery: z.string(),
  session: z.string().optional(),
});

/** `pop`: the write receipt and the removed messages, oldest first. */
export const popResultSchema = writeReceiptSchema.extend({ popped: z.array(publicMessageSchema) });
