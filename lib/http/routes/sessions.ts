import type { Context } from 'hono';
import { publicSession } from '../../model/codec.js';
import {
  appendBodySchema,
  cleanupBodySchema,
  continueBodySchema,
  createBodySchema,
  popBodySchema,
  replaceBodySchema,
  trimBodySchema,
} from '../../model/requests.js';
import {
  auditLogSchema,
  cleanupResultSchema,
  continueAnswerSchema,
  popResultSchema,
  sessionPageSchema,
  trimResultSchema,
} from '../../model/responses.js';
import { sessionSchema, writeReceiptSchema, type WriteReceipt } from '../../model/session.js';
import {
  etag,
  markReplay,
  namespaceOf,
  noneMatch,
  parseIfMatch,
  requestContext,
  sendReceipt,
  sendSession,
  writeContext,
} from '../context.js';
import {
  param,
  assertListParams,
  parseLimit,
  parseMetadataFilter,
  parseUpdatedAfter,
  requireIfMatch,
} from '../params.js';
import { toPublicContent } from '../../model/parts.js';
import { bodyErrors, etagHeader, P, problem, replayed, retryAfter, route } from '../spec.js';

/** The session routes: create, read, list, change, delete, continue, trim and the audit log. */

const createReport = {
  'Satchel-Redactions': {
    description: 'How many secrets the save pipeline redacted from what was sent.',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  'Satchel-Dropped-Groups': {
    description: 'How many message groups the size cap dropped (the marker message says the same).',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  'Satchel-Dropped-First-User-Message': {
    description:
      '`true` when the system prompt and first user message alone were over ' +
      '`SATCHEL_MAX_SESSION_BYTES`, so the first user message was not stored.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};

/** What the save pipeline did, for a create or replace, which answer the session rather than a receipt. */
function report(c: Context, receipt: WriteReceipt, headDropped: boolean | undefined): void {
  c.header('Satchel-Redactions', String(receipt.redactions));
  c.header('Satchel-Dropped-Groups', String(receipt.dropped_groups));
  if (headDropped) c.header('Satchel-Dropped-First-User-Message', 'true');
}

/** Create a session. */
export const createSession = route(
  {
    method: 'post',
    path: '/v1/sessions',
    operationId: 'createSession',
    tag: 'sessions',
    summary: 'Create a session',
    description:
      'With no system message first, none is added. An `id` may be given (1-128 of ' +
      '`[A-Za-z0-9._-]`); otherwise one is made. The save pipeline runs first: secrets ' +
      'redacted, the size cap applied, provenance flags kept.',
    auth: 'bearer',
    scope: 'write',
    parameters: ['SatchelSecrets'],
    body: createBodySchema,
    responses: {
      201: {
        description: 'Created.',
        schema: sessionSchema,
        headers: {
          ...etagHeader(),
          ...createReport,
          Location: {
            description: '`/v1/sessions/{id}` of the new session.',
            required: true,
            schema: { type: 'string' },
          },
        },
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      409: problem('A session with this id already exists in the namespace.'),
      503: P.storage,
    },
  },
  async (c, body) => {
    const created = await c.var.services.sessions.create(namespaceOf(c), body, writeContext(c));
    const { session, receipt } = created;
    c.header('ETag', etag(session.revision));
    report(c, receipt, created.headDropped);
    c.header('Location', `/v1/sessions/${session.id}`);
    return c.json(publicSession(session), 201);
  },
);

/** List session metadata, newest first. */
export const listSessions = route(
  {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    tag: 'sessions',
    summary: 'List session metadata, newest first',
    description:
      'Ordered by `updated_at`, newest first; `next_cursor` pages on. A walk never shows a ' +
      'session twice; one written during the walk moves above its cursor (list `updated_after` for it).',
    auth: 'bearer',
    parameters: ['Limit', 'Cursor', 'UpdatedAfter', 'Metadata'],
    responses: {
      200: { description: 'One page.', schema: sessionPageSchema },
      400: P.query,
      401: P.token,
      503: P.storage,
    },
  },
  async (c) => {
    assertListParams(c.req.queries());
    const limit = parseLimit(c.req.query('limit'));
    const cursor = c.req.query('cursor');
    const updatedAfter = parseUpdatedAfter(c.req.query('updated_after'));
    const metadata = parseMetadataFilter(c.req.queries());
    const options = {
      limit,
      ...(cursor ? { cursor } : {}),
      ...(updatedAfter !== undefined ? { updatedAfter } : {}),
      ...(metadata ? { metadata } : {}),
    };
    return c.json(await c.var.services.sessions.list(namespaceOf(c), options, requestContext(c)));
  },
);

/** The most recently updated session, whole. */
export const getLatestSession = route(
  {
    method: 'get',
    path: '/v1/sessions/latest',
    operationId: 'getLatestSession',
    tag: 'sessions',
    summary: 'The most recently updated session, whole',
    description:
      'Never 304: a revision does not name the session, so a tag of another session could ' +
      'match. Revalidate at the `Content-Location` with `If-None-Match` instead.',
    auth: 'bearer',
    responses: {
      200: {
        description: 'The session.',
        schema: sessionSchema,
        headers: {
          ...etagHeader(),
          'Content-Location': {
            description: '`/v1/sessions/{id}` of the session.',
            required: true,
            schema: { type: 'string' },
          },
        },
      },
      401: P.token,
      404: problem('The namespace has no sessions.'),
      503: P.storage,
    },
  },
  async (c) => {
    const session = await c.var.services.sessions.latest(namespaceOf(c), requestContext(c));
    // The ETag is the revision, which does not name the session: a tag from another session that is the
    // latest now could match. So latest never answers 304; revalidate at the Content-Location instead.
    c.header('Content-Location', `/v1/sessions/${session.id}`);
    return sendSession(c, session, false);
  },
);

/** Delete sessions not updated for a number of days. */
export const cleanupSessions = route(
  {
    method: 'post',
    path: '/v1/sessions/cleanup',
    operationId: 'cleanupSessions',
    tag: 'sessions',
    summary: 'Delete sessions not updated for a number of days',
    description: '`older_than_days: 0` deletes every session of the namespace.',
    auth: 'bearer',
    scope: 'write',
    body: cleanupBodySchema,
    responses: {
      200: {
        description: 'How many sessions were deleted, and how many were left for the next call.',
        schema: cleanupResultSchema,
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      503: P.storage,
    },
  },
  async (c, body) => {
    return c.json(
      await c.var.services.sessions.cleanup(namespaceOf(c), body.older_than_days, writeContext(c)),
    );
  },
);

/** Read a whole session. */
export const getSession = route(
  {
    method: 'get',
    path: '/v1/sessions/{id}',
    operationId: 'getSession',
    tag: 'sessions',
    summary: 'Read a whole session',
    auth: 'bearer',
    parameters: ['SessionId', 'IfNoneMatch'],
    responses: {
      200: {
        description: 'The stored session (without internal bookkeeping).',
        schema: sessionSchema,
        headers: etagHeader(),
      },
      304: {
        description: 'Not modified since the `If-None-Match` revision.',
        headers: etagHeader(),
      },
      400: P.id,
      401: P.token,
      404: P.session,
      503: P.storage,
    },
  },
  async (c) => {
    const { sessions } = c.var.services;
    // A revision the caller holds already: 304 without reading a large session's parts.
    const inm = c.req.header('if-none-match');
    const unchanged = inm ? (revision: number) => noneMatch(inm, revision) : undefined;
    const id = param(c, 'id');
    const stored = await sessions.getStored(namespaceOf(c), id, requestContext(c), true, unchanged);
    return sendSession(c, stored.session, true, stored.chunks);
  },
);

/** Replace a session (load, change, save). */
export const replaceSession = route(
  {
    method: 'put',
    path: '/v1/sessions/{id}',
    operationId: 'replaceSession',
    tag: 'sessions',
    summary: 'Replace a session (load, change, save)',
    description:
      'Server-owned fields sent back from a GET (`revision`, times, `turns`) are ignored; ' +
      '`sandbox`, `untrusted_ingested` and `episode_untrusted` never go back to false; ' +
      'external refs can be added, not removed.',
    auth: 'bearer',
    scope: 'write',
    parameters: ['SessionId', 'IfMatchRequired', 'IdempotencyKey', 'SatchelSecrets'],
    body: replaceBodySchema,
    responses: {
      200: {
        description: 'The session as stored.',
        schema: sessionSchema,
        headers: { ...etagHeader(), ...replayed, ...createReport },
      },
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
  async (c, body) => {
    const ifMatch = requireIfMatch(c);
    const result = await c.var.services.sessions.replace(
      namespaceOf(c),
      param(c, 'id'),
      body,
      ifMatch,
      writeContext(c),
    );
    markReplay(c, result);
    // A replay's ETag is its write's revision (the first result's), also when the session has moved on
    // since: a next replace based on it is then a 412, never an overwrite of what was written after.
    c.header('ETag', etag(result.receipt.revision));
    // The cap may drop older groups to make room (a PUT that grows metadata too): said as for a create.
    report(c, result.receipt, result.headDropped);
    return c.json(publicSession(result.session));
  },
  // 428 before the body is read: a PUT without the revision it replaces is refused whatever it carries.
  { before: requireIfMatch },
);

/** Delete a session with its audit log and search entries. */
export const deleteSession = route(
  {
    method: 'delete',
    path: '/v1/sessions/{id}',
    operationId: 'deleteSession',
    tag: 'sessions',
    summary: 'Delete a session with its audit log and search entries',
    description:
      'With `If-Match`, only at that revision (412 otherwise), as read just before the delete: a ' +
      'write that lands in the milliseconds between is deleted with it.',
    auth: 'bearer',
    scope: 'write',
    parameters: ['SessionId', 'IfMatch'],
    responses: {
      204: { description: 'Deleted.' },
      400: P.id,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      503: P.storage,
    },
  },
  async (c) => {
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    await c.var.services.sessions.delete(namespaceOf(c), param(c, 'id'), writeContext(c), ifMatch);
    return c.body(null, 204);
  },
);

/** Append messages (and external refs). */
export const appendMessages = route(
  {
    method: 'post',
    path: '/v1/sessions/{id}/messages',
    operationId: 'appendMessages',
    tag: 'sessions',
    summary: 'Append messages (and external refs)',
    description:
      'Without `If-Match` the append lands after whatever is stored: never lost, never ' +
      "duplicated, each writer's messages in order.",
    auth: 'bearer',
    scope: 'write',
    parameters: ['SessionId', 'IfMatch', 'IdempotencyKey', 'SatchelSecrets'],
    body: appendBodySchema,
    responses: {
      200: {
        description: 'The write receipt.',
        schema: writeReceiptSchema,
        headers: { ...etagHeader(), ...replayed },
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      422: P.keyReused,
      503: P.storage,
    },
  },
  async (c, body) => {
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    const result = await c.var.services.sessions.append(
      namespaceOf(c),
      param(c, 'id'),
      body,
      ifMatch,
      writeContext(c),
    );
    return sendReceipt(c, result);
  },
);

/** Store a user message, then run a model turn when a model is configured. */
export const continueSession = route(
  {
    method: 'post',
    path: '/v1/sessions/{id}/continue',
    operationId: 'continueSession',
    tag: 'sessions',
    summary: 'Store a user message, then run a model turn when a model is configured',
    description:
      'The message is stored first, through the save pipeline. With `SATCHEL_MODEL_URL` and ' +
      '`SATCHEL_MODEL` set, one model turn follows (with the `session_search` tool), stored ' +
      'in one write; `reply` is its answer. One turn at a time per session.',
    auth: 'bearer',
    scope: 'write',
    parameters: ['ContinueId', 'IfMatch', 'IdempotencyKey', 'SatchelSecrets'],
    body: continueBodySchema,
    responses: {
      200: {
        description: 'The write receipt, `model_turn`, and `reply` after a model turn.',
        schema: continueAnswerSchema,
        headers: { ...etagHeader(), ...replayed },
      },
      ...bodyErrors,
      // The answers of a turn that failed after the message was stored tag the revision that stored it.
      413: problem(
        `${P.tooLarge.description} Or the model turn cannot be stored under ` +
          '`SATCHEL_MAX_SESSION_BYTES`: the detail says the message was stored and at which revision, ' +
          'and `ETag` tags it.',
        etagHeader(false),
      ),
      401: P.token,
      403: P.readOnly,
      404: problem(
        'No session with this id (or, for `latest`, no session at all) in the namespace.',
      ),
      409: problem(
        'Another model turn holds this session; the message is stored (`ETag` tags its revision). ' +
          'Retry after `Retry-After` seconds.',
        { ...retryAfter, ...etagHeader(false) },
      ),
      412: P.stale,
      422: P.keyReused,
      502: problem(
        'The model failed, answered an error or timed out; the detail says the message was ' +
          'stored and at which revision, and `ETag` tags it.',
        etagHeader(false),
      ),
      503: problem(
        `${P.storage.description} After the message was stored, the detail says so and at which ` +
          'revision, and `ETag` tags it.',
        { ...retryAfter, ...etagHeader(false) },
      ),
    },
  },
  async (c, body) => {
    const { continuer } = c.var.services;
    const ns = namespaceOf(c);
    const ctx = writeContext(c);
    const named = param(c, 'id');
    const { id, unpin } =
      named === 'latest' ? await continuer.latest(ns, ctx.idempotencyKey, ctx) : { id: named };
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    const out = await continuer.run(ns, id, body, ifMatch, ctx, undefined, unpin);
    markReplay(c, out);
    c.header('ETag', etag(out.answer.revision));
    return c.json(out.answer);
  },
);

/** Keep the system message and the newest messages. */
export const trimSession = route(
  {
    method: 'post',
    path: '/v1/sessions/{id}/trim',
    operationId: 'trimSession',
    tag: 'sessions',
    summary: 'Keep the system message and the newest messages',
    description:
      '`keep` counts the system message; a tool group is never split. A trim that would drop ' +
      'nothing writes nothing. With `If-Match`, only at that revision (412 otherwise).',
    auth: 'bearer',
    scope: 'write',
    parameters: ['SessionId', 'IfMatch', 'IdempotencyKey'],
    body: trimBodySchema,
    responses: {
      200: {
        description: 'Message counts before and after.',
        schema: trimResultSchema,
        headers: { ...etagHeader(false), ...replayed },
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      422: P.keyReused,
      503: P.storage,
    },
  },
  async (c, body) => {
    const out = await c.var.services.sessions.trim(
      namespaceOf(c),
      param(c, 'id'),
      body.keep,
      writeContext(c),
      parseIfMatch(c.req.header('if-match')),
    );
    markReplay(c, out);
    if (out.receipt) c.header('ETag', etag(out.receipt.revision));
    const { id, before, after, dropped } = out;
    return c.json({ id, before, after, dropped, dropped_groups: out.receipt?.dropped_groups ?? 0 });
  },
);

/** Remove the newest messages. */
export const popMessages = route(
  {
    method: 'post',
    path: '/v1/sessions/{id}/pop',
    operationId: 'popMessages',
    tag: 'sessions',
    summary: 'Remove the newest messages',
    description:
      'Removes the last `count` messages (default 1) in one write after whatever is stored, or ' +
      'only at `If-Match`; answers the receipt and the removed messages, oldest first (none on ' +
      'a replay). An empty session: nothing is written.',
    auth: 'bearer',
    scope: 'write',
    parameters: ['SessionId', 'IfMatch', 'IdempotencyKey'],
    body: popBodySchema,
    responses: {
      200: {
        description: 'The receipt and the removed messages.',
        schema: popResultSchema,
        headers: { ...etagHeader(), ...replayed },
      },
      ...bodyErrors,
      401: P.token,
      403: P.readOnly,
      404: P.session,
      412: P.stale,
      422: P.keyReused,
      503: P.storage,
    },
  },
  async (c, body) => {
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    const ns = namespaceOf(c);
    const out = await c.var.services.sessions.pop(
      ns,
      param(c, 'id'),
      body.count ?? 1,
      ifMatch,
      writeContext(c),
    );
    markReplay(c, out);
    c.header('ETag', etag(out.receipt.revision));
    return c.json({ ...out.receipt, popped: out.popped.map((m) => toPublicContent(m)) });
  },
);

/** The session's audit records, oldest first. */
export const getAuditLog = route(
  {
    method: 'get',
    path: '/v1/sessions/{id}/audit',
    operationId: 'getAuditLog',
    tag: 'sessions',
    summary: "The session's audit records, oldest first",
    auth: 'bearer',
    parameters: ['SessionId'],
    responses: {
      200: { description: 'One record per write, redacted.', schema: auditLogSchema },
      400: P.id,
      401: P.token,
      404: P.session,
      503: P.storage,
    },
  },
  async (c) => {
    return c.json({
      records: await c.var.services.sessions.auditRecords(namespaceOf(c), param(c, 'id')),
    });
  },
);
