/**
 * The client's request and response types, inferred from the schemas the server validates and documents
 * with: request bodies are `z.input` of the route schemas (what a caller may send), answers `z.output` of
 * the stored format and of the HTTP response schemas (lib/http/responses.ts, the OpenAPI document's own).
 * Type-only imports: none of this code ends up in a client bundle.
 */
import type * as z from 'zod';
import type {
  auditRecordSchema,
  cleanupResultSchema,
  continueAnswerSchema,
  healthSchema,
  problemSchema,
  searchHitSchema,
  sessionPageSchema,
  sessionSearchResultSchema,
  trimResultSchema,
} from '../model/responses.js';
import type {
  externalRefInputSchema,
  sessionSchema,
  sessionSummarySchema,
  writeReceiptSchema,
} from '../model/session.js';
import type {
  appendBodySchema,
  continueBodySchema,
  createBodySchema,
  replaceBodySchema,
  sessionSearchBodySchema,
} from '../model/requests.js';

// ---- what a caller sends ----
export type CreateSessionInput = z.input<typeof createBodySchema>;
export type AppendInput = z.input<typeof appendBodySchema>;
export type ReplaceInput = z.input<typeof replaceBodySchema>;
export type ContinueInput = z.input<typeof continueBodySchema>;
export type SessionSearchInput = z.input<typeof sessionSearchBodySchema>;
/** A message as sent: `content` a string or an array of parts (text, image, file, audio, …). */
export type MessageInput = AppendInput['messages'][number];
export type ExternalRefInput = z.input<typeof externalRefInputSchema>;

// ---- what the server answers ----
/** A session as the API returns it: the stored format without the internal bookkeeping. */
export type Session = z.output<typeof sessionSchema>;
export type SessionSummary = z.output<typeof sessionSummarySchema>;
/** A stored message as GET shows it: `content` is the array of parts again when it was sent as one. */
export type Message = Session['messages'][number];
/** `pop`: the receipt and the messages removed, as stored, oldest first. */
/**
 * `pop`: the receipt and the messages removed, oldest first. `replayed`: the call's first attempt popped
 * (its answer was lost) and this is the server's replay, which names nothing popped (`popped` is empty).
 */
export type PopResult = WriteReceipt & { popped: Message[]; replayed?: true };
/** One page of `GET /v1/sessions`. */
export type SessionPage = z.output<typeof sessionPageSchema>;
export type WriteReceipt = z.output<typeof writeReceiptSchema>;
/** `continue`: the receipt, whether a model turn ran, and its reply. */
export type ContinueAnswer = z.output<typeof continueAnswerSchema>;
export type TrimResult = z.output<typeof trimResultSchema>;
export type CleanupResult = z.output<typeof cleanupResultSchema>;
export type AuditRecord = z.output<typeof auditRecordSchema>;
export type Health = z.output<typeof healthSchema>;
export type SearchHit = z.output<typeof searchHitSchema>;
/**
 * RFC 9457 problem JSON: the body of every error. `deleted`: a DELETE's 503 after the session went, whose
 * leftovers were not all erased (delete it again).
 */
export type Problem = z.output<typeof problemSchema> & { deleted?: true };

type SearchResult = z.output<typeof sessionSearchResultSchema>;
/** What `session_search` answers per action; any action may instead answer a tool-level `{error}`. */
export interface SessionSearchResults {
  list: Extract<SearchResult, { sessions: unknown }>;
  find: Extract<SearchResult, { sessions: unknown }>;
  search: Extract<SearchResult, { results: unknown }>;
  get: Extract<SearchResult, { count: unknown }>;
}
export type SessionSearchAction = keyof SessionSearchResults;
export type SessionSearchError = Extract<SearchResult, { error: unknown }>;

/** A session with the ETag it was read or written at (`"<revision>"`). */
export interface Tagged {
  session: Session;
  etag: string;
}

/**
 * What the save pipeline did to a create, from its 201's `Satchel-Redactions`, `Satchel-Dropped-Groups` and
 * `Satchel-Dropped-First-User-Message` headers.
 */
export interface PipelineCounts {
  redactions: number;
  dropped_groups: number;
  /** With the system prompt, the first user message was over the size cap and is not stored. */
  dropped_first_user_message: boolean;
}

/**
 * A created session. `pipeline` is there when the answer carried the counts: not when the session was a
 * lost attempt's, read back, nor when something in between dropped the headers.
 */
export interface Created extends Tagged {
  pipeline?: PipelineCounts;
}

export interface ListQuery {
  /** 1-100 (server default 20). */
  limit?: number;
  cursor?: string;
  /** RFC 3339, exclusive (or a Date). */
  updated_after?: string | Date;
  /** Only sessions whose metadata has each of these pairs (`metadata.<key>=<value>`). */
  metadata?: Record<string, string>;
}
