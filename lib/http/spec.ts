import * as z from 'zod';
import { problemSchema } from '../model/responses.js';
import type { Context } from 'hono';
import type { Env } from './context.js';

/**
 * A route carries its own spec: method, path, parameters, the body schema it validates with and its
 * responses, declared in one `route(spec, handler)` statement next to the handler (lib/http/routes/).
 * The app registers routes from their specs and `GET /openapi.json` is generated from the same specs
 * (lib/http/openapi.ts), so the document and the app cannot drift apart. This module holds the shared
 * pieces: parameters, response headers and the problem responses every route repeats.
 */

export type Method = 'get' | 'post' | 'put' | 'delete';

/** A response header: its description, and whether every response of that status carries it. */
export interface HeaderSpec {
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

export interface RouteSpec<B extends z.ZodType = z.ZodType> {
  method: Method;
  /** OpenAPI form: `/v1/sessions/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** `bearer`: Authorization: Bearer <token>; `none`: open; `signature`: a webhook's HMAC headers. */
  auth: 'bearer' | 'none' | 'signature';
  /** `write`: a read-only token is refused (403) before the handler runs. */
  scope?: 'write';
  parameters?: ParameterName[];
  /** The JSON request body, validated by this very schema before the handler runs. */
  body?: B;
  /** A raw request body of any type instead (a webhook payload, whose signature covers its bytes). */
  rawBody?: string;
  responses: Record<number, ResponseSpec>;
}

// ---- parameters (path, query and request headers) ----

const sessionIdPattern = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$';
export const parameters = {
  SessionId: {
    name: 'id',
    in: 'path',
    required: true,
    description:
      'The session id: `YYYYMMDD-` and 32 hex for a new session, or an imported id (1-128 of ' +
      '`[A-Za-z0-9._-]`, not starting with `.`; `index` and `latest` are reserved).',
    schema: z.string().regex(new RegExp(sessionIdPattern)),
  },
  ContinueId: {
    name: 'id',
    in: 'path',
    required: true,
    description:
      'The session id, or `latest` for the most recently updated session (with an ' +
      '`Idempotency-Key`, a repeat goes to the session the first request chose).',
    schema: z.string(),
  },
  HookName: {
    name: 'name',
    in: 'path',
    required: true,
    description: 'The webhook name, as configured in `SATCHEL_HOOKS`.',
    schema: z.string(),
  },
  Limit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Page size.',
    schema: z.number().int().min(1).max(100).default(20),
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'The `next_cursor` of the previous page (opaque).',
    schema: z.string(),
  },
  Metadata: {
    name: 'metadata',
    in: 'query',
    required: false,
    style: 'deepObject',
    description:
      '`metadata[<key>]=<value>` or `metadata.<key>=<value>` pairs: sessions holding all of them.',
    schema: z.record(z.string(), z.string()),
  },
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
    description:
      'Write only if the session is at this revision (`"<revision>"` as in `ETag`, or `*` ' +
      'for any); otherwise 412.',
    schema: z.string(),
  },
  IfMatchRequired: {
    name: 'If-Match',
    in: 'header',
    required: true,
    description:
      'The revision you read (`"<revision>"` as in `ETag`, or `*`). Without it 428; a stale ' +
      'one is 412.',
    schema: z.string(),
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'The `ETag` you hold: 304 without a body when the session is still at that revision.',
    schema: z.string(),
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      '1-255 visible ASCII characters. A retry with the same key is a no-op that answers the ' +
      'first result (`Idempotent-Replayed: true`); the same key with a different body is ' +
      '422. Kept 24 h.',
    schema: z.string().regex(/^[\x21-\x7e]{1,255}$/),
  },
  SatchelSecrets: {
    name: 'Satchel-Secrets',
    in: 'header',
    required: false,
    description:
      'Base64 of a JSON array of at most 100 strings of at least 6 characters: secret values ' +
      'redacted from everything this request stores, in every encoding; never stored themselves.',
    schema: z.string(),
  },
  HubSignature: {
    name: 'X-Hub-Signature-256',
    in: 'header',
    required: false,
    description:
      'GitHub style: `sha256=<hex HMAC-SHA256 of the raw body>` with the hook secret. This ' +
      'or `X-Satchel-Signature` is required.',
    schema: z.string(),
  },
  SatchelSignature: {
    name: 'X-Satchel-Signature',
    in: 'header',
    required: false,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, `t` within 300 s of the ' +
      'server clock; several `v1=` allowed. Decides when both headers are sent.',
    schema: z.string(),
  },
  SatchelDelivery: {
    name: 'X-Satchel-Delivery',
    in: 'header',
    required: false,
    description:
      'Delivery id (1-255 visible ASCII); a redelivery is a no-op. Without it (or ' +
      '`X-GitHub-Delivery`), the hash of what the signature covers: a request sent again is a ' +
      'redelivery, one signed again is not.',
    schema: z.string(),
  },
  GitHubDelivery: {
    name: 'X-GitHub-Delivery',
    in: 'header',
    required: false,
    description: "GitHub's delivery id.",
    schema: z.string(),
  },
  GitHubEvent: {
    name: 'X-GitHub-Event',
    in: 'header',
    required: false,
    description:
      'GitHub event name: `workflow_run`, `check_run`, `issue_comment` and `push` are stored ' +
      'as readable summaries.',
    schema: z.string(),
  },
} satisfies Record<
  string,
  {
    name: string;
    in: 'path' | 'query' | 'header';
    required: boolean;
    description: string;
    schema: z.ZodType;
    style?: 'deepObject';
  }
>;
export type ParameterName = keyof typeof parameters;

// ---- responses ----

const revisionTag = { type: 'string', pattern: '^"\\d+"$' };
export const etagHeader = (required = true): Record<string, HeaderSpec> => ({
  ETag: {
    description: 'The session revision as a strong tag, `"<revision>"`.',
    required,
    schema: revisionTag,
  },
});
export const replayed: Record<string, HeaderSpec> = {
  'Idempotent-Replayed': {
    description:
      '`true` when an `Idempotency-Key` matched an earlier request and nothing was written.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};
export const retryAfter: Record<string, HeaderSpec> = {
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
  },
};

export const problem = (
  description: string,
  headers?: Record<string, HeaderSpec>,
): ResponseSpec => ({ description, schema: problemSchema, ...(headers ? { headers } : {}) });
export const P = {
  body: problem(
    'Malformed JSON, JSON nested deeper than 128 levels, invalid UTF-8 (or a lone surrogate ' +
      'escape), or a failed ' +
      'validation (`errors` names each field), or a malformed header.',
  ),
  query: problem('A query parameter is not valid (`errors` names it).'),
  id: problem('The id cannot be a session id.'),
  token: problem('No `Authorization: Bearer` token, or an unknown one.', {
    'WWW-Authenticate': {
      description: 'A bearer token is asked for (RFC 6750).',
      required: true,
      schema: { type: 'string', pattern: '^Bearer realm="satchel"' },
    },
  }),
  readOnly: problem('The token is read-only.'),
  session: problem("No session with this id in the token's namespace."),
  stale: problem("`If-Match` does not match the session's revision."),
  tooLarge: problem(
    'The body is over `SATCHEL_MAX_BODY_BYTES`, a part carries inline media over 1 MiB, or ' +
      'none of the new messages could be stored under `SATCHEL_MAX_SESSION_BYTES` (nothing was ' +
      'written; `detail` names the limit and the size).',
  ),
  notJson: problem('The body is not `application/json`.'),
  keyReused: problem('This `Idempotency-Key` was used for a different request.'),
  storage: problem(
    'Storage is unreachable, or too many concurrent writers on one session; try again.',
    retryAfter,
  ),
};
export const bodyErrors = { 400: P.body, 413: P.tooLarge, 415: P.notJson };

// ---- a route: its spec and its handler in one statement ----

/** A route's handler: the request context (services, caller) and the body already validated by the spec's schema. */
export type Handler<B extends z.ZodType> = (
  c: Context<Env>,
  body: z.output<B>,
) => Response | Promise<Response>;

export interface Route<B extends z.ZodType = z.ZodType> {
  spec: RouteSpec<B>;
  handler: Handler<B>;
  /** Checks that run before the body is read (a replace's 428 comes before any body error). */
  before?: (c: Context<Env>) => unknown;
}

/** Declares a route: the spec the app registers and documents, and the handler that serves it. */
export function route<B extends z.ZodType = z.ZodNever>(
  spec: RouteSpec<B>,
  handler: Handler<B>,
  options: { before?: (c: Context<Env>) => unknown } = {},
): Route<B> {
  return { spec, handler, ...options };
}
