// A namespace import, not `{ z }`: bundlers can then drop what is unused.
import * as z from 'zod';
import { metadataSchema, storedMetadataSchema } from './parts.js';
import { externalRefInputSchema, messageInputSchema as messageSchema, rfc3339 } from './session.js';

/** What clients send: the request bodies of the API, shared by the server's routes and the client. */

const maxTask = 64 * 1024;

/** The deepest JSON a request may nest (contract: deeper is 400); tool-call arguments deeper are text. */
export const MAX_JSON_DEPTH = 128;

export const createBodySchema = z.strictObject({
  task: z.string().max(maxTask),
  model: z.string().max(256).optional(),
  provider: z.string().max(256).optional(),
  messages: z.array(messageSchema).optional(),
  external_refs: z.array(externalRefInputSchema).optional(),
  sandbox: z.boolean().optional(),
  id: z.string().optional(),
  untrusted_ingested: z.boolean().optional(),
  episode_untrusted: z.boolean().optional(),
  metadata: metadataSchema.optional(),
  // Satchel's own (not in the contract): an import keeps a session's original times.
  created_at: rfc3339.optional(),
  updated_at: rfc3339.optional(),
});
export type CreateBody = z.output<typeof createBodySchema>;

export const appendBodySchema = z.strictObject({
  messages: z.array(messageSchema).min(1, 'at least one message'),
  external_refs: z.array(externalRefInputSchema).optional(),
});
export type AppendBody = z.output<typeof appendBodySchema>;

/** PUT body: the whole session; server-owned fields (revision, times, turns) may be sent back and are ignored. */
export const replaceBodySchema = z.object({
  id: z.string().optional(),
  task: z.string().max(maxTask),
  model: z.string().max(256).optional(),
  provider: z.string().max(256).optional(),
  messages: z.array(messageSchema),
  // A GET's body sent back: its refs may hold fields an odek file gave them, which are left out.
  external_refs: z.array(externalRefInputSchema.strip()).nullable().optional(),
  sandbox: z.boolean().optional(),
  untrusted_ingested: z.boolean().optional(),
  episode_untrusted: z.boolean().optional(),
  // Within its limits unless it is the stored metadata: the save pipeline checks (`redactSession`).
  metadata: storedMetadataSchema.optional(),
});
export type ReplaceBody = z.output<typeof replaceBodySchema>;

export const trimBodySchema = z.strictObject({
  keep: z.number().int().min(2, 'keep must be at least 2'),
});
export const cleanupBodySchema = z.strictObject({ older_than_days: z.number().int().min(0) });
export const continueBodySchema = z.strictObject({
  message: z.string().min(1, 'message must not be empty'),
  external_refs: z.array(externalRefInputSchema).optional(),
});

/**
 * The session_search tool call; unknown fields are ignored, as a model may add some. An id no session
 * can have (over 128 characters) is the tool's `{error}`, as any unknown id. `null` is absent: OpenAI's
 * strict function calling, and many open models, send every parameter they do not use as null (review
 * s67d: such a call was a 400, and inside a continue the model got an error instead of results).
 */
export const sessionSearchBodySchema = z.looseObject({
  action: z.string(),
  query: z.string().max(4096).nullish(),
  id: z.string().nullish(),
  limit: z.number().nullish(),
});

/** Pop: remove the newest messages (an agent framework's popItem). */
export const popBodySchema = z.strictObject({
  count: z.number().int().min(1).max(100).optional(),
});
