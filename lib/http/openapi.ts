import * as z from 'zod';
import { externalRefInputSchema, externalRefSchema, messageSchema, sessionSchema, sessionSummarySchema, writeReceiptSchema } from '../model/session.js';
import { appendBodySchema, cleanupBodySchema, continueBodySchema, createBodySchema, replaceBodySchema, sessionSearchBodySchema, trimBodySchema } from '../model/requests.js';
import {
  auditLogSchema,
  auditRecordSchema,
  cleanupResultSchema,
  continueAnswerSchema,
  healthSchema,
  hookAcceptedSchema,
  problemSchema,
  searchHitSchema,
  sessionPageSchema,
  sessionSearchResultSchema,
  trimResultSchema,
} from '../model/responses.js';

/**
 * The API described once: each route's method, path, parameters, request schema and responses, in one
 * table. `GET /openapi.json` is made from it, with the JSON Schemas generated from the same zod schemas
 * the routes validate with (request bodies as zod's *input*, what a client may send; responses as its
 * *output*). test/http/openapi.test.ts checks the table against the app's routes and produces every
 * documented status.
 */

type Method = 'get' | 'post' | 'put' | 'delete';

/** A response header: its description, and whether every response of that status carries it. */
interface HeaderSpec {
  description: string;
  required: boolean;
  schema: Record<string, unknown>;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body (problem+json for errors). */
  schema?: z.ZodType;
  /** An HTML body instead (the docs page). */
  html?: boolean;
  headers?: Record<string, HeaderSpec>;
}

export interface RouteSpec {
  method: Method;
  /** OpenAPI form: `/v1/sessions/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** `bearer`: Authorization: Bearer <token>; `none`: open; `signature`: a webhook's HMAC headers. */
  auth: 'bearer' | 'none' | 'signature';
  parameters?: ParameterName[];
  /** The JSON request body, validated by this very schema. */
  body?: z.ZodType;
  /** A raw request body of any type instead (a webhook payload, whose signature covers its bytes). */
  rawBody?: string;
  responses: Record<number, ResponseSpec>;
}

// ---- parameters (path, query and request headers) ----

const sessionIdPattern = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$';
const parameters = {
  SessionId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The session id: `YYYYMMDD-` and 32 hex for a new session, or an imported id (1-128 of `[A-Za-z0-9._-]`, not starting with `.`; `index` and `latest` are reserved).',
    schema: z.string().regex(new RegExp(sessionIdPattern)),
  },
  ContinueId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The session id, or `latest` for the most recently updated session (with an `Idempotency-Key`, a repeat goes to the session the first request chose).',
    schema: z.string(),
  },
  HookName: { name: 'name', in: 'path', required: true, description: 'The webhook name, as configured in `SATCHEL_HOOKS`.', schema: z.string() },
  Limit: { name: 'limit', in: 'query', required: false, description: 'Page size.', schema: z.number().int().min(1).max(100).default(20) },
  Cursor: { name: 'cursor', in: 'query', required: false, description: 'The `next_cursor` of the previous page (opaque).', schema: z.string() },
  UpdatedAfter: {
    name: 'updated_after',
    in: 'query',
    required: false,
    description: 'RFC 3339 time; only sessions updated after it (exclusive).',
    schema: z.iso.datetime({ offset: true }),
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: 'Write only if the session is at this revision (`"<revision>"` as in `ETag`, or `*` for any); otherwise 412.',
    schema: z.string(),
  },
  IfMatchRequired: {
    name: 'If-Match',
    in: 'header',
    required: true,
    description: 'The revision you read (`"<revision>"` as in `ETag`, or `*`). Without it 428; a stale one is 412.',
    schema: z.string(),
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The `ETag` you hold: 304 without a body when the session is still at that revision.',
    schema: z.string(),
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: '1-255 visible ASCII characters. A retry with the same key is a no-op that answers the first result (`Idempotent-Replayed: true`); the same key with a different body is 422. Kept 24 h.',
    schema: z.string().regex(/^[\x21-\x7e]{1,255}$/),
  },
  SatchelSecrets: {
    name: 'Satchel-Secrets',
    in: 'header',
    required: false,
    description: 'Base64 of a JSON array of at most 100 strings: secret values redacted from everything this request stores, in every encoding; never stored themselves.',
    schema: z.string(),
  },
  HubSignature: {
    name: 'X-Hub-Signature-256',
    in: 'header',
    required: false,
    description: 'GitHub style: `sha256=<hex HMAC-SHA256 of the raw body>` with the hook secret. This or `X-Satchel-Signature` is required.',
    schema: z.string(),
  },
  SatchelSignature: {
    name: 'X-Satchel-Signature',
    in: 'header',
    required: false,
    description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, `t` within 300 s of the server clock; several `v1=` allowed. Decides when both headers are sent.',
    schema: z.string(),
  },
  SatchelDelivery: {
    name: 'X-Satchel-Delivery',
    in: 'header',
    required: false,
    description: 'Delivery id (1-255 visible ASCII): a redelivery is a no-op. Without it or `X-GitHub-Delivery`, the body digest.',
    schema: z.string(),
  },
  GitHubDelivery: { name: 'X-GitHub-Delivery', in: 'header', required: false, description: "GitHub's delivery id.", schema: z.string() },
  GitHubEvent: {
    name: 'X-GitHub-Event',
    in: 'header',
    required: false,
    description: 'GitHub event name: `workflow_run`, `check_run`, `issue_comment` and `push` are stored as readable summaries.',
    schema: z.string(),
  },
} satisfies Record<string, { name: string; in: 'path' | 'query' | 'header'; required: boolean; description: string; schema: z.ZodType }>;
type ParameterName = keyof typeof parameters;

// ---- responses ----

const revisionTag = { type: 'string', pattern: '^"\\d+"$' };
const etag = (required = true): Record<string, HeaderSpec> => ({
  ETag: { description: 'The session revision as a strong tag, `"<revision>"`.', required, schema: revisionTag },
});
const replayed: Record<string, HeaderSpec> = {
  'Idempotent-Replayed': { description: '`true` when an `Idempotency-Key` matched an earlier request and nothing was written.', required: false, schema: { type: 'string', enum: ['true'] } },
};
const retryAfter: Record<string, HeaderSpec> = {
  'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
};

const problem = (description: string, headers?: Record<string, HeaderSpec>): ResponseSpec => ({ description, schema: problemSchema, ...(headers ? { headers } : {}) });
const P = {
  body: problem('Malformed JSON, JSON nested deeper than 128 levels, invalid UTF-8, or a failed validation (`errors` names each field), or a malformed header.'),
  query: problem('A query parameter is not valid (`errors` names it).'),
  id: problem('The id cannot be a session id.'),
  token: problem('No `Authorization: Bearer` token, or an unknown one.'),
  readOnly: problem('The token is read-only.'),
  session: problem('No session with this id in the token\'s namespace.'),
  stale: problem('`If-Match` does not match the session\'s revision.'),
  tooLarge: problem('The body is over `SATCHEL_MAX_BODY_BYTES`.'),
  notJson: problem('The body is not `application/json`.'),
  keyReused: problem('This `Idempotency-Key` was used for a different request.'),
  storage: problem('Storage is unreachable, or too many concurrent writers on one session; try again.', retryAfter),
};
const bodyErrors = { 400: P.body, 413: P.tooLarge, 415: P.notJson };

// ---- the routes ----

export const routes: RouteSpec[] = [
  {
    method: 'get',
    path: '/v1/health',
    operationId: 'health',
    tag: 'service',
    summary: 'Liveness, storage and embeddings state',
    description: 'Always 200: `status` is `degraded` when storage does not answer. Needs no token.',
    auth: 'none',
    responses: { 200: { description: 'The service state.', schema: healthSchema } },
  },
  {
    method: 'post',
    path: '/v1/sessions',
    operationId: 'createSession',
    tag: 'sessions',
    summary: 'Create a session',
    description:
      'With no system message first, none is added. An `id` may be given (1-128 of `[A-Za-z0-9._-]`); otherwise one is made. The save pipeline runs first: secrets redacted, the size cap applied, provenance flags kept.',
    auth: 'bearer',
    parameters: ['SatchelSecrets'],
    body: createBodySchema,
    responses: {
      201: {
        description: 'Created.',
        schema: sessionSchema,
        headers: { ...etag(), Location: { description: '`/v1/sessions/{id}` of the new session.', required: true, schema: { type: 'string' } } },
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      409: problem('A session with this id already exists in the namespace.'),
      503: P.storage,
    },
  },
  {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    tag: 'sessions',
    summary: 'List session metadata, newest first',
    description: 'Ordered by `updated_at`, newest first; `next_cursor` pages on (null on the last page). A page walk stays consistent while sessions change.',
    auth: 'bearer',
    parameters: ['Limit', 'Cursor', 'UpdatedAfter'],
    responses: { 200: { description: 'One page.', schema: sessionPageSchema }, 400: P.query, 401: P.token, 503: P.storage },
  },
  {
    method: 'get',
    path: '/v1/sessions/latest',
    operationId: 'getLatestSession',
    tag: 'sessions',
    summary: 'The most recently updated session, whole',
    description:
      'Never 304: a revision does not name the session, so a tag of another session could match. Revalidate at the `Content-Location` with `If-None-Match` instead.',
    auth: 'bearer',
    responses: {
      200: {
        description: 'The session.',
        schema: sessionSchema,
        headers: { ...etag(), 'Content-Location': { description: '`/v1/sessions/{id}` of the session.', required: true, schema: { type: 'string' } } },
      },
      401: P.token,
      404: problem('The namespace has no sessions.'),
      503: P.storage,
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/cleanup',
    operationId: 'cleanupSessions',
    tag: 'sessions',
    summary: 'Delete sessions not updated for a number of days',
    description: '`older_than_days: 0` deletes every session of the namespace.',
    auth: 'bearer',
    body: cleanupBodySchema,
    responses: { 200: { description: 'How many sessions were deleted.', schema: cleanupResultSchema }, ...bodyErrors, 401: P.token, 403: P.readOnly, 503: P.storage },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}',
    operationId: 'getSession',
    tag: 'sessions',
    summary: 'Read a whole session',
    auth: 'bearer',
    parameters: ['SessionId', 'IfNoneMatch'],
    responses: {
      200: { description: 'The stored session (without internal bookkeeping).', schema: sessionSchema, headers: etag() },
      304: { description: 'Not modified since the `If-None-Match` revision.', headers: etag() },
      400: P.id,
      401: P.token,
      404: P.session,
      503: P.storage,
    },
  },
  {
    method: 'put',
    path: '/v1/sessions/{id}',
    operationId: 'replaceSession',
    tag: 'sessions',
    summary: 'Replace a session (load, change, save)',
    description:
      'Server-owned fields sent back from a GET (`revision`, times, `turns`) are ignored; `sandbox`, `untrusted_ingested` and `episode_untrusted` never go back to false; external refs can be added, not removed.',
    auth: 'bearer',
    parameters: ['SessionId', 'IfMatchRequired', 'IdempotencyKey', 'SatchelSecrets'],
    body: replaceBodySchema,
    responses: {
      200: { description: 'The session as stored.', schema: sessionSchema, headers: { ...etag(), ...replayed } },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      422: P.keyReused,
      428: problem('`If-Match` is required.'),
      503: P.storage,
    },
  },
  {
    method: 'delete',
    path: '/v1/sessions/{id}',
    operationId: 'deleteSession',
    tag: 'sessions',
    summary: 'Delete a session with its audit log and search entries',
    auth: 'bearer',
    parameters: ['SessionId'],
    responses: { 204: { description: 'Deleted.' }, 400: P.id, 401: P.token, 403: P.readOnly, 404: P.session, 503: P.storage },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/messages',
    operationId: 'appendMessages',
    tag: 'sessions',
    summary: 'Append messages (and external refs)',
    description: 'Without `If-Match` the append lands after whatever is stored: never lost, never duplicated, each writer\'s messages in order.',
    auth: 'bearer',
    parameters: ['SessionId', 'IfMatch', 'IdempotencyKey', 'SatchelSecrets'],
    body: appendBodySchema,
    responses: {
      200: { description: 'The write receipt.', schema: writeReceiptSchema, headers: { ...etag(), ...replayed } },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      422: P.keyReused,
      503: P.storage,
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/continue',
    operationId: 'continueSession',
    tag: 'sessions',
    summary: 'Store a user message, then run a model turn when a model is configured',
    description:
      'The message is stored first, through the save pipeline. With `SATCHEL_MODEL_URL` and `SATCHEL_MODEL` set, one model turn follows (with the `session_search` tool), stored in one write; `reply` is its answer. One turn at a time per session.',
    auth: 'bearer',
    parameters: ['ContinueId', 'IfMatch', 'IdempotencyKey', 'SatchelSecrets'],
    body: continueBodySchema,
    responses: {
      200: { description: 'The write receipt, `model_turn`, and `reply` after a model turn.', schema: continueAnswerSchema, headers: { ...etag(), ...replayed } },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: problem('No session with this id (or, for `latest`, no session at all) in the namespace.'),
      409: problem('Another model turn holds this session; the message is stored. Retry after `Retry-After` seconds.', retryAfter),
      412: P.stale,
      422: P.keyReused,
      502: problem('The model failed, answered an error or timed out; the detail says the message was stored and at which revision.'),
      503: P.storage,
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/trim',
    operationId: 'trimSession',
    tag: 'sessions',
    summary: 'Keep the system message and the newest messages',
    description: '`keep` counts the system message; a tool group is never split. A trim that would drop nothing writes nothing.',
    auth: 'bearer',
    parameters: ['SessionId'],
    body: trimBodySchema,
    responses: {
      200: { description: 'Message counts before and after.', schema: trimResultSchema, headers: etag(false) },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      503: P.storage,
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/audit',
    operationId: 'getAuditLog',
    tag: 'sessions',
    summary: "The session's audit records, oldest first",
    auth: 'bearer',
    parameters: ['SessionId'],
    responses: { 200: { description: 'One record per write, redacted.', schema: auditLogSchema }, 400: P.id, 401: P.token, 404: P.session, 503: P.storage },
  },
  {
    method: 'post',
    path: '/v1/session_search',
    operationId: 'sessionSearch',
    tag: 'search',
    summary: 'The session_search agent tool',
    description:
      '`list`: newest sessions; `find`: sessions whose task matches `query`; `search`: ranked sessions whose messages match `query`; `get`: the last 100 user/assistant messages of `id`, wrapped as untrusted content. `limit` ≤ 0 is 5, at most 20. Tool-level errors (unknown action, empty query, unknown id) are 200 with `{"error"}`.',
    auth: 'bearer',
    body: sessionSearchBodySchema,
    responses: { 200: { description: 'The tool result.', schema: sessionSearchResultSchema }, ...bodyErrors, 401: P.token, 503: P.storage },
  },
  {
    method: 'post',
    path: '/v1/hooks/{name}',
    operationId: 'receiveWebhook',
    tag: 'webhooks',
    summary: 'A signed webhook that continues a session',
    description:
      'Verified over the raw body before anything is read into a session (no bearer token). The payload (any body) is stored after the response as one user message wrapped as untrusted content, so the session becomes `untrusted_ingested`; a redelivery of the same delivery id is a no-op.',
    auth: 'signature',
    rawBody: 'The payload as the sender sends it (JSON or not); the signature covers its exact bytes. At most `SATCHEL_MAX_BODY_BYTES`.',
    parameters: ['HookName', 'HubSignature', 'SatchelSignature', 'SatchelDelivery', 'GitHubDelivery', 'GitHubEvent'],
    responses: {
      202: { description: 'Verified; stored after the response. `session` when it is known in advance.', schema: hookAcceptedSchema },
      400: problem('A delivery header is not 1-255 visible ASCII characters.'),
      401: problem('No signature header, or a bad or stale signature.'),
      404: problem('No webhook with this name.'),
      413: P.tooLarge,
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    tag: 'service',
    summary: 'This document',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1.' } },
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'docs',
    tag: 'service',
    summary: 'The API reference page, made from this document',
    auth: 'none',
    responses: { 200: { description: 'HTML.', html: true } },
  },
];

// ---- the document ----

/** Request-side schemas with component names (zod input: defaults optional, `content: null` allowed). */
const inputSchemas: Record<string, [z.ZodType, string]> = {
  CreateSessionBody: [createBodySchema, 'Create a session.'],
  ReplaceSessionBody: [replaceBodySchema, 'The whole session; server-owned fields sent back from a GET are ignored.'],
  AppendBody: [appendBodySchema, 'Messages (at least one) and external refs to append.'],
  ContinueBody: [continueBodySchema, 'The user message to store, then continue from.'],
  TrimBody: [trimBodySchema, 'How many messages to keep (n ≥ 2, counting the system message).'],
  CleanupBody: [cleanupBodySchema, 'Delete sessions not updated for this many days (0: all).'],
  SessionSearchBody: [sessionSearchBodySchema, 'A session_search tool call; unknown fields are ignored.'],
  MessageInput: [messageSchema, 'A message as sent: odek/OpenAI chat format; unknown fields are kept as they are.'],
  ExternalRefInput: [externalRefInputSchema, 'An external ref as sent (schema odek-extension/v1); `created_by`, `read_only` and `created_at` are filled in when absent.'],
};
/** Response-side schemas with component names (zod output). */
const outputSchemas: Record<string, [z.ZodType, string]> = {
  Session: [sessionSchema, 'A session as stored (odek session file format plus `revision`), compact JSON.'],
  Message: [messageSchema, 'A stored message; unknown fields are kept as they are.'],
  ExternalRef: [externalRefSchema, 'An external ref (schema odek-extension/v1). The service never fetches its uri.'],
  SessionSummary: [sessionSummarySchema, 'Session metadata; `bytes` is the stored object size.'],
  SessionPage: [sessionPageSchema, 'One page of session metadata; `next_cursor` is null on the last page.'],
  WriteReceipt: [writeReceiptSchema, 'The answer to a write: `redactions` and `dropped_groups` count what this write did.'],
  ContinueAnswer: [continueAnswerSchema, 'A write receipt plus `model_turn` and, after a model turn, `reply`.'],
  TrimResult: [trimResultSchema, 'Message counts before and after a trim.'],
  CleanupResult: [cleanupResultSchema, 'How many sessions a cleanup deleted.'],
  AuditRecord: [auditRecordSchema, 'One write as recorded in the audit log.'],
  AuditLog: [auditLogSchema, "A session's audit records, oldest first."],
  Health: [healthSchema, 'Service state.'],
  SearchHit: [searchHitSchema, 'A ranked search result.'],
  SessionSearchResult: [sessionSearchResultSchema, 'What session_search answers, by action.'],
  HookAccepted: [hookAcceptedSchema, 'A verified webhook delivery.'],
  Problem: [problemSchema, 'RFC 9457 problem details (`application/problem+json`); `errors` for validation failures.'],
};

const refTo = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** zod → JSON Schemas for a set of named schemas, referring to each other by component name. */
function componentSchemas(named: Record<string, [z.ZodType, string]>, io: 'input' | 'output'): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, [schema]] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'throw' });
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    out[id] = { description: named[id]![1], ...rest };
  }
  return out;
}

/** One parameter's JSON Schema (zod input: what a client sends). */
function parameterSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return rest;
}

let cached: OpenApiDocument | undefined;

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; parameters: Record<string, unknown>; schemas: Record<string, Record<string, unknown>> };
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
};
export type Operation = Record<string, unknown> & { operationId: string; responses: Record<string, Record<string, unknown>> };

/** The OpenAPI 3.1 document of every route (made once, then reused). */
export function openApiDocument(): OpenApiDocument {
  if (cached) return cached;
  const names = new Map<z.ZodType, string>();
  for (const [id, [schema]] of Object.entries(inputSchemas)) names.set(schema, id);
  const outputNames = new Map<z.ZodType, string>();
  for (const [id, [schema]] of Object.entries(outputSchemas)) outputNames.set(schema, id);
  const bodyRef = (schema: z.ZodType) => refTo(names.get(schema) ?? unnamed('request', schema));
  const responseRef = (schema: z.ZodType) => refTo(outputNames.get(schema) ?? unnamed('response', schema));

  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const responses: Operation['responses'] = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const response: Record<string, unknown> = { description: spec.description };
      if (spec.headers) response.headers = Object.fromEntries(Object.entries(spec.headers).map(([name, h]) => [name, { ...h }]));
      if (spec.schema) response.content = { [Number(status) >= 400 ? 'application/problem+json' : 'application/json']: { schema: responseRef(spec.schema) } };
      else if (spec.html) response.content = { 'text/html': { schema: { type: 'string' } } };
      else if (route.path === '/openapi.json') response.content = { 'application/json': { schema: { type: 'object' } } };
      responses[String(status)] = response;
    }
    const operation: Operation = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.auth === 'bearer' ? {} : { security: [] }),
      ...(route.parameters ? { parameters: route.parameters.map((p) => ({ $ref: `#/components/parameters/${p}` })) } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: bodyRef(route.body) } } } } : {}),
      ...(route.rawBody ? { requestBody: { required: false, description: route.rawBody, content: { '*/*': { schema: {} } } } } : {}),
      responses,
    };
    (paths[route.path] ??= {})[route.method] = operation;
  }

  const schemas = { ...componentSchemas(outputSchemas, 'output'), ...componentSchemas(inputSchemas, 'input') };
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Satchel',
      version: '1',
      description: [
        'A session store for AI agents: compact JSON sessions (odek session file format) in S3-compatible object storage, behind one HTTP API.',
        '',
        'Every `/v1` route except `/v1/health` and the signed `/v1/hooks/{name}` needs `Authorization: Bearer <token>`; the token picks the namespace (a local server started without `SATCHEL_TOKENS` serves namespace `default` without one). Read-only tokens get 403 on writes.',
        '',
        'JSON in and out. Every error is RFC 9457 problem JSON (`application/problem+json`) with `type`, `title`, `status`, `detail`, and `errors: [{path, message}]` for validation failures. A session\'s `ETag` is `"<revision>"`; every successful write returns the new one.',
      ].join('\n'),
    },
    tags: [
      { name: 'sessions', description: 'Create, read, change and delete sessions.' },
      { name: 'search', description: 'The session_search agent tool.' },
      { name: 'webhooks', description: 'Signed webhooks that continue a session.' },
      { name: 'service', description: 'Health and this description.' },
    ],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from `SATCHEL_TOKENS`; it picks the namespace.' } },
      parameters: Object.fromEntries(
        Object.entries(parameters).map(([id, p]) => [id, { name: p.name, in: p.in, required: p.required, description: p.description, schema: parameterSchema(p.schema) }]),
      ),
      schemas,
    },
  };
  return cached;
}

function unnamed(side: string, schema: z.ZodType): never {
  throw new Error(`a ${side} schema of the route table has no component name (${schema.constructor.name})`);
}
