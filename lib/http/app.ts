import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono/tiny';
import { forbidden, methodNotAllowed, notFound } from '../model/errors.js';
import { buildServices, type ServiceOptions, type Services } from '../server/services.js';
import { uiRoutes } from '../ui/index.js';
import { accessLog } from './access-log.js';
import { bearerAuth, requireWrite } from './auth.js';
import { readJson } from './body.js';
import type { Env } from './context.js';
import { problemResponse } from './problem.js';
import { routes } from './routes/index.js';
import type { Route } from './spec.js';

export type { Env } from './context.js';

export interface AppOptions extends ServiceOptions {
  /** Open local mode: without SATCHEL_TOKENS, serve namespace `default` without a token (Node only). */
  allowOpen?: boolean;
}

/** Builds the Hono app once from a config object and a store; runtimes only adapt requests to it. */
export function createApp(options: AppOptions) {
  const services = buildServices(options);
  const { config, log } = services;
  const app = new Hono<Env>();
  const auth = bearerAuth<Env>(config.tokens ?? (options.allowOpen ? null : []));

  app.onError((err, c) => problemResponse(c, err, log));
  app.notFound((c) => notFoundOrNotAllowed(c, log));
  // First: every answer gets its line, a preflight's too.
  app.use('*', accessLog(log));
  // Browser apps on the configured origins may call the API; a preflight is answered before auth.
  if (config.corsOrigins.length > 0) app.use('/v1/*', apiCors(config.corsOrigins, isPreflight));
  app.use('*', async (c, next) => {
    c.set('services', services);
    return next();
  });
  if (config.tokens === null && options.allowOpen) app.use('*', loopbackOnly);
  // Every /v1 request needs a token unless its route's spec says otherwise (health; signed webhooks), so an
  // unknown path or a wrong method on an open route answers 401, not a hint of what exists.
  app.use('/v1/*', async (c, next) => (isOpen(c.req.method, c.req.path) ? next() : auth(c, next)));
  // The session browser (/ui, /ui/sessions/{id}, its assets) and GET / → /ui; it calls the /v1 API from the page.
  app.route('/', uiRoutes());
  // `latest` is a route of its own (GET): the other methods of `/v1/sessions/{id}` do not take it as an id.
  app.use('/v1/sessions/latest', async (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : notFoundOrNotAllowed(c, log),
  );
  for (const r of routes) register(app, r);
  return { app, ...services };
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Open mode answers only requests addressed to a loopback name. Listening on 127.0.0.1 is not enough: a
 * page of another site whose name resolves to 127.0.0.1 (DNS rebinding) would be same-origin with the
 * token-less API, and a tunnel would publish it.
 */
async function loopbackOnly(c: Context<Env>, next: () => Promise<void>) {
  const host = new URL(c.req.url).hostname.toLowerCase();
  if (!LOOPBACK_NAMES.has(host))
    throw forbidden(
      'without SATCHEL_TOKENS the server answers only requests to 127.0.0.1, localhost or [::1]; ' +
        'set SATCHEL_TOKENS to serve it under another name',
    );
  await next();
}

/** Registers one route from its spec: scope by `spec.scope`, the body by `spec.body` (auth: the /v1 middleware). */
function register(app: Hono<Env>, r: Route): void {
  const { spec } = r;
  const path = honoPath(spec.path);
  const handlers = [
    ...(spec.scope === 'write' ? [requireWrite] : []),
    async (c: Context<Env>) => {
      r.before?.(c);
      const body = spec.body
        ? await readJson(c, spec.body, c.var.services.config.maxBodyBytes)
        : undefined;
      return r.handler(c, body);
    },
  ];
  app.on(spec.method.toUpperCase(), path, ...(handlers as [never]));
}

/** `/v1/sessions/{id}` (OpenAPI) as `/v1/sessions/:id` (Hono). */
function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

// Each ends in `\/?$` as the router's own patterns do (hono/tiny's PatternRouter takes one trailing slash on
// every route), so 405-or-404 and the open-route check answer `/v1/health/` as `/v1/health` (review s61d).
const pathPatterns = [
  ...routes.map((r) => ({
    method: r.spec.method.toUpperCase(),
    pattern: new RegExp('^' + r.spec.path.replace(/\{\w+\}/g, '[^/]+') + '\\/?$'),
    open: r.spec.auth !== 'bearer',
  })),
  // The browser's pages and assets (lib/ui), GET only, so that another method is 405 there too.
  {
    method: 'GET',
    pattern: /^\/(ui(\/(sessions\/[^/]+|app\.(js|css|svg)))?\/?)?$/,
    open: true,
  },
];
/** `/v1/sessions/latest`, GET's only, with the trailing slash the router takes. */
const LATEST = /^\/v1\/sessions\/latest\/?$/;

/**
 * True when the request names a route whose spec needs no bearer token, or an open route's path with a
 * method it does not serve: its 405 says nothing a token should guard.
 */
function isOpen(method: string, path: string): boolean {
  const m = method === 'HEAD' ? 'GET' : method;
  const here = pathPatterns.filter((p) => p.pattern.test(path));
  const route = here.find((p) => p.method === m);
  return route ? route.open : here.some((p) => p.open);
}

/**
 * A CORS preflight: an OPTIONS with `Origin` and `Access-Control-Request-Method`, to a path the API
 * serves. Any other OPTIONS is routed like any other method (404, or 405 with `Allow`).
 */
function isPreflight(c: Context): boolean {
  const h = (name: string) => c.req.header(name) !== undefined;
  return (
    c.req.method === 'OPTIONS' &&
    h('origin') &&
    h('access-control-request-method') &&
    // The patterns take the router's trailing slash (`/v1/sessions/`): a preflight to one is one (review s53f).
    pathPatterns.some((p) => p.pattern.test(c.req.path))
  );
}

/** 405 with `Allow` for a known path with another method; 404 otherwise. */
function notFoundOrNotAllowed(c: Context<Env>, log: Services['log']): Response {
  // `/v1/sessions/latest` is GET's only: the other methods of `/v1/sessions/{id}` do not take it.
  const allowed = LATEST.test(c.req.path)
    ? ['GET']
    : [...new Set(pathPatterns.filter((p) => p.pattern.test(c.req.path)).map((p) => p.method))];
  if (allowed.length === 0)
    return problemResponse(c, notFound(`no route for ${c.req.method} ${c.req.path}`), log);
  if (allowed.includes('GET')) allowed.push('HEAD');
  const allow = allowed.join(', ');
  const detail = `${c.req.method} is not served at ${c.req.path}; use ${allow}`;
  return problemResponse(c, methodNotAllowed(detail, allow), log);
}

/** The API's response headers a page on a listed origin may read. */
export const CORS_EXPOSE = [
  'ETag',
  'Location',
  'Content-Location',
  'Retry-After',
  'Idempotent-Replayed',
  'Satchel-Redactions',
  'Satchel-Dropped-Groups',
  'Satchel-Dropped-First-User-Message',
  'WWW-Authenticate',
];
/** The request headers a page on a listed origin may send. */
export const CORS_ALLOW = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
  'Satchel-Secrets',
];

/**
 * CORS for the configured origins: the API's request headers allowed, its response headers exposed.
 * What hono/cors does for a list of origins without credentials (its other options, a function origin
 * among them, cost the Worker bundle about 300 B gzip, which it does not have). `preflight` says which
 * requests are answered 204 here (hono/cors: every OPTIONS).
 */
export function apiCors(
  origins: string[],
  preflight = (c: Context) => c.req.method === 'OPTIONS',
): MiddlewareHandler {
  const expose = CORS_EXPOSE.join(',');
  const allowHeaders = CORS_ALLOW.join(',');
  return async (c, next) => {
    const h = c.res.headers;
    const origin = c.req.header('origin') ?? '';
    if (origins.includes(origin)) h.set('Access-Control-Allow-Origin', origin);
    h.set('Access-Control-Expose-Headers', expose);
    if (preflight(c)) {
      h.append('Vary', 'Origin');
      h.set('Access-Control-Max-Age', '600');
      h.set('Access-Control-Allow-Methods', 'GET,POST,PUT,DELETE');
      h.set('Access-Control-Allow-Headers', allowHeaders);
      h.append('Vary', 'Access-Control-Request-Headers');
      h.delete('Content-Length');
      h.delete('Content-Type');
      return new Response(null, { headers: h, status: 204, statusText: 'No Content' });
    }
    await next();
    c.header('Vary', 'Origin', { append: true });
  };
}
