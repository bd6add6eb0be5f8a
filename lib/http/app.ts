import { Hono, type Context } from 'hono';
import type { SatchelConfig } from '../server/config.js';
import { badRequest, notFound, preconditionRequired } from '../model/errors.js';
import { Continuer } from '../continue/continue.js';
import { createLogger, describeError, type Logger } from '../model/log.js';
import { appendMessage, WebhookReceiver, type Deliver } from '../hooks/hooks.js';
import { defaultPipeline } from '../pipeline/default.js';
import { AuditLog } from '../sessions/audit.js';
import { publicSession } from '../model/codec.js';
import { appendBodySchema, cleanupBodySchema, continueBodySchema, createBodySchema, replaceBodySchema, sessionSearchBodySchema, trimBodySchema } from '../model/requests.js';
import { HttpEmbedder, type Embedder } from '../search/embed.js';
import { SearchEngine } from '../search/engine.js';
import { runSessionSearch } from '../search/tool.js';
import { ANY_REVISION, SessionStore, type WriteContext, type WriteResult } from '../sessions/store.js';
import type { ObjectStore } from '../storage/port.js';
import { bearerAuth, requireWrite, type AuthVariables } from './auth.js';
import { Background } from './background.js';
import { readBodyBytes, readJson } from './body.js';
import { docsPage } from './docs.js';
import { openApiDocument } from './openapi.js';
import { problemResponse } from './problem.js';

export interface AppOptions {
  config: SatchelConfig;
  objects: ObjectStore;
  /** Open local mode: without SATCHEL_TOKENS, serve namespace `default` without a token (Node only). */
  allowOpen?: boolean;
  sessions?: SessionStore;
  log?: Logger;
  /** Memory for cached sessions (default: 4 × the session cap, at most 256 MiB; Workers pass less). */
  cacheBytes?: number;
  /** The embedder (default: from config.embeddings, else the built-in local one). */
  embedder?: Embedder | null;
}

export type Env = { Variables: AuthVariables };

/** Builds the Hono app once from a config object and a store; runtimes only adapt requests to it. */
export function createApp(options: AppOptions) {
  const log = options.log ?? createLogger();
  const { config, objects } = options;
  const cacheBytes = options.cacheBytes ?? Math.min(256 * 1024 * 1024, 4 * config.maxSessionBytes);
  const pipeline = defaultPipeline({ maxSessionBytes: config.maxSessionBytes, knownValues: config.redactValues });
  const sessions =
    options.sessions ??
    new SessionStore(objects, {
      pipeline,
      cacheBytes,
      // Manifest pages share the budget: about 500 bytes of memory per cached entry.
      manifest: { pageCacheEntries: Math.max(10_000, Math.floor(cacheBytes / 512)) },
      audit: new AuditLog(objects, pipeline.redactText),
      onError: (what, err) => log.warn(what, { error: describeError(err) }),
    });
  const background = new Background(log);
  // Without an embeddings service the search is lexical: the built-in hashing embedder (LocalEmbedder)
  // ranks below BM25 on Cranfield and fusing it did not beat BM25 alone (bench/results.eval.json).
  const embedder =
    options.embedder !== undefined
      ? options.embedder
      : config.embeddings
        ? new HttpEmbedder({ ...config.embeddings, onError: (err) => log.warn('embeddings call failed; lexical search for 30 s', { error: describeError(err) }) })
        : null;
  const search = new SearchEngine(sessions, embedder, { onError: (what, err) => log.warn(what, { error: describeError(err) }) });
  sessions.addListener(search);
  const maxBody = config.maxBodyBytes;
  // The model turn's session_search calls run here, in the caller's namespace, on the indexed path.
  const continuer = new Continuer({ sessions, objects, model: config.model, log, search: (ns, input) => runSessionSearch(sessions, ns, input, search, (w) => background.track(w)) });
  // A webhook continues its session: with a model configured, the stored message gets a model turn.
  const deliver: Deliver = config.model
    ? (ns, id, message, ctx) => continuer.run(ns, id, { message: message.content }, undefined, ctx)
    : appendMessage(sessions);
  const webhooks = new WebhookReceiver({ hooks: config.hooks, sessions, deliver, log });
  const app = new Hono<Env>();

  /** Background work of this request: waitUntil on Workers, the process elsewhere. */
  const scheduler = (c: Context) => (work: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(work.catch((err) => log.warn('background work failed', { error: String(err) })));
    } catch {
      background.track(work);
    }
  };
  const writeContext = (c: Context<Env>): WriteContext => {
    const key = c.req.header('idempotency-key');
    if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw badRequest('Idempotency-Key must be 1-255 visible ASCII characters', [{ path: 'Idempotency-Key', message: 'invalid' }]);
    }
    const secrets = requestSecrets(c.req.header('satchel-secrets'));
    return {
      device: c.get('caller').device,
      schedule: scheduler(c),
      ...(key ? { idempotencyKey: key } : {}),
      ...(secrets.length ? { knownValues: secrets } : {}),
    };
  };

  app.onError((err, c) => problemResponse(c, err, log));
  app.notFound((c) => problemResponse(c, notFound(`no route for ${c.req.method} ${c.req.path}`), log));

  app.get('/v1/health', async (c) => {
    const started = Date.now();
    let storage: { backend: string; ok: boolean; latency_ms?: number; error?: string };
    try {
      await objects.list('health/', { limit: 1 });
      storage = { backend: objects.name, ok: true, latency_ms: Date.now() - started };
    } catch {
      storage = { backend: objects.name, ok: false, error: 'unreachable' };
    }
    return c.json({ status: storage.ok ? 'ok' : 'degraded', storage, embeddings: search.health() });
  });

  // The API description (lib/http/openapi.ts: the route table and the routes' own zod schemas); no token.
  app.get('/openapi.json', (c) => c.json(openApiDocument()));
  app.get('/docs', (c) => c.html(docsPage(openApiDocument())));

  app.use('/v1/*', async (c, next) => {
    if (c.req.path === '/v1/health') return next();
    // Webhooks carry a signature instead of a token; the route verifies it.
    if (c.req.method === 'POST' && /^\/v1\/hooks\/[^/]+$/.test(c.req.path)) return next();
    return bearerAuth(config.tokens ?? (options.allowOpen ? null : []))(c, next);
  });

  app.post('/v1/sessions', requireWrite, async (c) => {
    const body = await readJson(c, createBodySchema, maxBody);
    const { session } = await sessions.create(c.get('caller').namespace, body, writeContext(c));
    c.header('ETag', etag(session.revision));
    c.header('Location', `/v1/sessions/${session.id}`);
    return c.json(publicSession(session), 201);
  });

  app.get('/v1/sessions', async (c) => {
    const limit = parseLimit(c.req.query('limit'));
    const cursor = c.req.query('cursor');
    const after = c.req.query('updated_after');
    let updatedAfter: number | undefined;
    if (after !== undefined) {
      updatedAfter = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(after) ? Date.parse(after) : NaN;
      if (Number.isNaN(updatedAfter)) throw badRequest('updated_after must be an RFC 3339 time', [{ path: 'updated_after', message: 'not RFC 3339' }]);
    }
    const page = await sessions.list(
      c.get('caller').namespace,
      { limit, ...(cursor ? { cursor } : {}), ...(updatedAfter !== undefined ? { updatedAfter } : {}) },
      scheduler(c),
    );
    return c.json(page);
  });

  app.get('/v1/sessions/latest', async (c) => {
    const session = await sessions.latest(c.get('caller').namespace, scheduler(c));
    // The ETag is the revision, which does not name the session: a tag from another session that is the
    // latest now could match. So latest never answers 304; revalidate at the Content-Location instead.
    c.header('Content-Location', `/v1/sessions/${session.id}`);
    return sendSession(c, session, false);
  });

  app.post('/v1/sessions/cleanup', requireWrite, async (c) => {
    const body = await readJson(c, cleanupBodySchema, maxBody);
    return c.json(await sessions.cleanup(c.get('caller').namespace, body.older_than_days, writeContext(c)));
  });

  app.get('/v1/sessions/:id', async (c) => {
    const session = await sessions.get(c.get('caller').namespace, c.req.param('id'));
    return sendSession(c, session);
  });

  app.put('/v1/sessions/:id', requireWrite, async (c) => {
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    if (ifMatch === undefined) throw preconditionRequired('PUT needs If-Match with the revision you read');
    const body = await readJson(c, replaceBodySchema, maxBody);
    const result = await sessions.replace(c.get('caller').namespace, c.req.param('id'), body, ifMatch, writeContext(c));
    markReplay(c, result);
    c.header('ETag', etag(result.session.revision));
    return c.json(publicSession(result.session));
  });

  app.delete('/v1/sessions/:id', requireWrite, async (c) => {
    await sessions.delete(c.get('caller').namespace, c.req.param('id'), writeContext(c));
    return c.body(null, 204);
  });

  app.post('/v1/sessions/:id/messages', requireWrite, async (c) => {
    const ifMatch = parseIfMatch(c.req.header('if-match'));
    const body = await readJson(c, appendBodySchema, maxBody);
    const result = await sessions.append(c.get('caller').namespace, c.req.param('id'), body, ifMatch, writeContext(c));
    return sendReceipt(c, result);
  });

  app.post('/v1/sessions/:id/continue', requireWrite, async (c) => {
    const ns = c.get('caller').namespace;
    const body = await readJson(c, continueBodySchema, maxBody);
    const ctx = writeContext(c);
    let id = c.req.param('id');
    if (id === 'latest') id = await continuer.latest(ns, ctx.idempotencyKey, ctx.schedule);
    const out = await continuer.run(ns, id, body, parseIfMatch(c.req.header('if-match')), ctx);
    if (out.replayed) c.header('Idempotent-Replayed', 'true');
    c.header('ETag', etag(out.answer.revision));
    return c.json(out.answer);
  });

  app.get('/v1/sessions/:id/audit', async (c) => {
    return c.json({ records: await sessions.auditRecords(c.get('caller').namespace, c.req.param('id')) });
  });

  app.post('/v1/hooks/:name', async (c) => {
    const header = (name: string) => c.req.header(name);
    const delivery = await webhooks.verify(c.req.param('name'), header, () => readBodyBytes(c.req.raw, maxBody));
    // Verified: answer now, store after the response (waitUntil on Workers, drained on Lambda).
    const schedule = scheduler(c);
    schedule(webhooks.process(delivery, schedule));
    const session = await webhooks.plannedSession(delivery);
    return c.json({ accepted: true, delivery: delivery.delivery, ...(session ? { session } : {}) }, 202);
  });

  app.post('/v1/session_search', async (c) => {
    const body = await readJson(c, sessionSearchBodySchema, maxBody);
    return c.json(await runSessionSearch(sessions, c.get('caller').namespace, body, search, scheduler(c)));
  });

  app.post('/v1/sessions/:id/trim', requireWrite, async (c) => {
    const body = await readJson(c, trimBodySchema, maxBody);
    const out = await sessions.trim(c.get('caller').namespace, c.req.param('id'), body.keep, writeContext(c));
    if (out.receipt) c.header('ETag', etag(out.receipt.revision));
    return c.json({ id: out.id, before: out.before, after: out.after, dropped: out.dropped });
  });

  return { app, sessions, search, background, log };
}

/**
 * `Satchel-Secrets`: secret values for this request only, as base64 of a JSON array of strings. They are
 * redacted from everything this request stores, in every encoding, and never stored themselves.
 */
function requestSecrets(header: string | undefined): string[] {
  if (!header) return [];
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(header.trim()), (ch) => ch.charCodeAt(0))));
    if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string') && parsed.length <= 100) return parsed;
  } catch {
    // fall through
  }
  throw badRequest('Satchel-Secrets must be base64 of a JSON array of at most 100 strings', [{ path: 'Satchel-Secrets', message: 'invalid' }]);
}

function etag(revision: number): string {
  return `"${revision}"`;
}

function sendSession(c: Context<Env>, session: { revision: number } & Record<string, unknown>, conditional = true) {
  const tag = etag(session.revision);
  c.header('ETag', tag);
  const inm = conditional ? c.req.header('if-none-match') : undefined;
  if (inm && (inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === tag))) {
    return c.body(null, 304);
  }
  return c.json(publicSession(session as never));
}

function sendReceipt(c: Context<Env>, result: WriteResult) {
  markReplay(c, result);
  c.header('ETag', etag(result.receipt.revision));
  return c.json(result.receipt);
}

function markReplay(c: Context<Env>, result: WriteResult) {
  if (result.replayed) c.header('Idempotent-Replayed', 'true');
}

/** Parses If-Match into a revision: `*` is ANY_REVISION; a tag that is not a revision can never match (-1). */
function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return ANY_REVISION;
  const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(value);
  return m ? Number(m[1]) : -1;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined || value === '') return 20;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw badRequest('limit must be an integer from 1 to 100', [{ path: 'limit', message: 'out of range' }]);
  return n;
}
