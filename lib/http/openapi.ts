import type * as z from 'zod';
import {
  externalRefInputSchema,
  externalRefSchema,
  messageInputSchema,
  publicMessageSchema,
  sessionSchema,
  sessionSummarySchema,
  writeReceiptSchema,
} from '../model/session.js';
import {
  appendBodySchema,
  cleanupBodySchema,
  continueBodySchema,
  createBodySchema,
  popBodySchema,
  replaceBodySchema,
  sessionSearchBodySchema,
  trimBodySchema,
} from '../model/requests.js';
import {
  auditLogSchema,
  auditRecordSchema,
  cleanupResultSchema,
  continueAnswerSchema,
  healthSchema,
  hookAcceptedSchema,
  popResultSchema,
  problemSchema,
  searchHitSchema,
  sessionPageSchema,
  sessionSearchResultSchema,
  trimResultSchema,
} from '../model/responses.js';
import { schemaJson } from './openapi-json.js';
import { parameters, type Route } from './spec.js';

/**
 * The OpenAPI 3.1 document, generated from the routes' own specs (lib/http/spec.ts,
 * lib/http/routes/): JSON Schemas come from the same zod schemas the routes validate with (request
 * bodies as zod's *input*, what a client may send; responses as its *output*).
 * test/http/openapi.test.ts checks the document against the app's routes and produces every
 * documented status.
 */

/**
 * Request-side schemas with component names (zod input: defaults optional, `content: null`
 * allowed).
 */
const inputSchemas: Record<string, [z.ZodType, string]> = {
  CreateSessionBody: [createBodySchema, 'Create a session.'],
  ReplaceSessionBody: [
    replaceBodySchema,
    'The whole session; server-owned fields sent back from a GET are ignored.',
  ],
  AppendBody: [appendBodySchema, 'Messages (at least one) and external refs to append.'],
  ContinueBody: [continueBodySchema, 'The user message to store, then continue from.'],
  PopBody: [popBodySchema, 'How many of the newest messages to remove (1-100, default 1).'],
  TrimBody: [trimBodySchema, 'How many messages to keep (n ≥ 2, counting the system message).'],
  CleanupBody: [cleanupBodySchema, 'Delete sessions not updated for this many days (0: all).'],
  SessionSearchBody: [
    sessionSearchBodySchema,
    'A session_search tool call; unknown fields are ignored.',
  ],
  MessageInput: [
    messageInputSchema,
    'A message as sent: odek/OpenAI chat format; `content` may be a string or an array of parts ' +
      '(text, image, file, audio, …); unknown fields are kept as they are.',
  ],
  ExternalRefInput: [
    externalRefInputSchema,
    'An external ref as sent (schema odek-extension/v1); ' +
      '`created_by`, `read_only` and `created_at` are filled in when absent.',
  ],
};
/** Response-side schemas with component names (zod output). */
const outputSchemas: Record<string, [z.ZodType, string]> = {
  Session: [
    sessionSchema,
    'A session as stored (odek session file format plus `revision`), compact JSON.',
  ],
  Message: [
    publicMessageSchema,
    'A stored message; unknown fields are kept as they are. ' +
      '`content` is an array of parts when it was sent as one.',
  ],
  ExternalRef: [
    externalRefSchema,
    'An external ref (schema odek-extension/v1). The service never fetches its uri.',
  ],
  SessionSummary: [sessionSummarySchema, 'Session metadata; `bytes` is the stored object size.'],
  SessionPage: [
    sessionPageSchema,
    'One page of session metadata; `next_cursor` is null on the last page.',
  ],
  WriteReceipt: [
    writeReceiptSchema,
    'The answer to a write: `redactions` and `dropped_groups` count what this write did.',
  ],
  ContinueAnswer: [
    continueAnswerSchema,
    'The write receipt, `model_turn`, and `reply` after a model turn.',
  ],
  PopResult: [popResultSchema, 'The write receipt and the removed messages, oldest first.'],
  TrimResult: [trimResultSchema, 'Message counts before and after a trim.'],
  CleanupResult: [cleanupResultSchema, 'How many sessions a cleanup deleted.'],
  AuditRecord: [auditRecordSchema, 'One write as recorded in the audit log.'],
  AuditLog: [auditLogSchema, "A session's audit records, oldest first."],
  Health: [healthSchema, 'Service state.'],
  SearchHit: [searchHitSchema, 'A ranked search result.'],
  SessionSearchResult: [sessionSearchResultSchema, 'What session_search answers, by action.'],
  HookAccepted: [hookAcceptedSchema, 'A verified webhook delivery.'],
  Problem: [
    problemSchema,
    'RFC 9457 problem details (`application/problem+json`); `errors` for validation failures.',
  ],
};

const refTo = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** What `schemaJson` makes of this document's schemas. */
function openApiSchemaJson(): ReturnType<typeof schemaJson> {
  return schemaJson(inputSchemas, outputSchemas, parameters);
}

const cache = new WeakMap<readonly Route[], OpenApiDocument>();

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, unknown>;
    parameters: Record<string, unknown>;
    schemas: Record<string, Record<string, unknown>>;
  };
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
};
export type Operation = Record<string, unknown> & {
  operationId: string;
  responses: Record<string, Record<string, unknown>>;
};

/**
 * The OpenAPI 3.1 document of a route table, generated from the routes' own specs (made once per
 * table).
 */
export function openApiDocument(routes: readonly Route[]): OpenApiDocument {
  const had = cache.get(routes);
  if (had) return had;
  const refs = schemaRefs();
  const paths: OpenApiDocument['paths'] = {};
  for (const { spec: route } of routes) {
    (paths[route.path] ??= {})[route.method] = operationOf(route, refs);
  }

  const json = openApiSchemaJson();
  const schemas: OpenApiDocument['components']['schemas'] = {};
  for (const named of [outputSchemas, inputSchemas])
    for (const [id, [, description]] of Object.entries(named))
      schemas[id] = { description, ...json.schemas[id] };
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: documentInfo(),
    tags: documentTags(),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A token from `SATCHEL_TOKENS`; it picks the namespace.',
        },
      },
      parameters: componentParameters(json.parameters),
      schemas,
    },
  };
  cache.set(routes, document);
  return document;
}

/** `$ref`s to the named component schemas of request bodies and responses. */
type SchemaRefs = {
  bodyRef: (schema: z.ZodType) => { $ref: string };
  responseRef: (schema: z.ZodType) => { $ref: string };
};

/** The `$ref` makers for bodies and responses, by the component names of the schemas. */
function schemaRefs(): SchemaRefs {
  const names = new Map<z.ZodType, string>();
  for (const [id, [schema]] of Object.entries(inputSchemas)) names.set(schema, id);
  const outputNames = new Map<z.ZodType, string>();
  for (const [id, [schema]] of Object.entries(outputSchemas)) outputNames.set(schema, id);
  const bodyRef = (schema: z.ZodType) => refTo(names.get(schema) ?? unnamed('request', schema));
  const responseRef = (schema: z.ZodType) =>
    refTo(outputNames.get(schema) ?? unnamed('response', schema));
  return { bodyRef, responseRef };
}

/** The operation object of one route: its identity, parameters, body and responses. */
function operationOf(route: Route['spec'], { bodyRef, responseRef }: SchemaRefs): Operation {
  const responses = responsesOf(route, responseRef);
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.auth === 'bearer' ? {} : { security: [] }),
    ...(route.parameters
      ? { parameters: route.parameters.map((p) => ({ $ref: `#/components/parameters/${p}` })) }
      : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: bodyRef(route.body) } },
          },
        }
      : {}),
    ...(route.rawBody
      ? {
          requestBody: {
            required: false,
            description: route.rawBody,
            content: { '*/*': { schema: {} } },
          },
        }
      : {}),
    responses,
  };
}

/** The responses object of one route, by status: description, headers and content. */
function responsesOf(
  route: Route['spec'],
  responseRef: SchemaRefs['responseRef'],
): Operation['responses'] {
  const responses: Operation['responses'] = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const response: Record<string, unknown> = { description: spec.description };
    if (spec.headers)
      response.headers = Object.fromEntries(
        Object.entries(spec.headers).map(([name, h]) => [name, { ...h }]),
      );
    if (spec.schema)
      response.content = {
        [Number(status) >= 400 ? 'application/problem+json' : 'application/json']: {
          schema: responseRef(spec.schema),
        },
      };
    else if (spec.html) response.content = { 'text/html': { schema: { type: 'string' } } };
    else if (route.path === '/openapi.json')
      response.content = { 'application/json': { schema: { type: 'object' } } };
    responses[String(status)] = response;
  }
  return responses;
}

/** The document's `info`: title, version and the API's overview. */
function documentInfo(): OpenApiDocument['info'] {
  return {
    title: 'Satchel',
    version: '1',
    description: [
      'A session store for AI agents: compact JSON sessions (odek session file format) ' +
        'in S3-compatible object storage, behind one HTTP API.',
      '',
      'Every `/v1` route except `/v1/health` and the signed `/v1/hooks/{name}` needs ' +
        '`Authorization: Bearer <token>`; the token picks the namespace (a local server started ' +
        'without `SATCHEL_TOKENS` serves namespace `default` without one). ' +
        'Read-only tokens get 403 on writes.',
      '',
      'JSON in and out. Every error is RFC 9457 problem JSON (`application/problem+json`) with ' +
        '`type`, `title`, `status`, `detail`, and `errors: [{path, message}]` for validation ' +
        'failures. A session\'s `ETag` is `"<revision>"`; ' +
        'every successful write returns the new one.',
    ].join('\n'),
  };
}

/** The document's tags, one per group of routes. */
function documentTags(): OpenApiDocument['tags'] {
  return [
    { name: 'sessions', description: 'Create, read, change and delete sessions.' },
    { name: 'search', description: 'The session_search agent tool.' },
    { name: 'webhooks', description: 'Signed webhooks that continue a session.' },
    { name: 'service', description: 'Health and this description.' },
  ];
}

/** The shared parameter components, by id, with their JSON Schemas. */
function componentParameters(json: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(parameters).map(([id, p]) => [
      id,
      {
        name: p.name,
        in: p.in,
        required: p.required,
        description: p.description,
        ...('style' in p ? { style: p.style, explode: true } : {}),
        schema: json[id],
      },
    ]),
  );
}

function unnamed(side: string, schema: z.ZodType): never {
  throw new Error(
    `a ${side} schema of the route table has no component name (${schema.constructor.name})`,
  );
}
