import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { badRequest } from '../model/errors.js';
import type { Logger } from '../model/log.js';
import type { Env } from './context.js';

/**
 * The access log: one line per request with the method, the route pattern (`/v1/sessions/:id`, never the
 * raw path, so no id reaches the log), the status, the time in ms, and the caller's namespace and device
 * label. Never a header, a token, a query or a body. The logger redacts every line as well.
 *
 * A client that goes away while sending its body is not a server failure: the body stream's error becomes
 * a 400 (`the client closed the connection…`, answered to nobody) instead of reaching the 500 path, and the
 * line says `aborted` at info level.
 */
export function accessLog(log: Logger): MiddlewareHandler<Env> {
  return async function accessLog(c, next) {
    const started = performance.now();
    let aborted = false;
    guardBody(c, () => (aborted = true));
    await next();
    const fields = {
      method: c.req.method,
      route: routePattern(c),
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      namespace: c.var.caller?.namespace,
      device: c.var.caller?.device,
    };
    if (aborted) log.info('request aborted by the client', { ...fields, aborted: true });
    else log.info('request', fields);
  };
}

/**
 * The pattern of the route that answered; when none did (401 before routing, 404), the pattern of the
 * request's route for this method if one matches, else `-`. Middleware (`*`, `/v1/*`) is never named.
 */
function routePattern(c: Context<Env>): string {
  const routes = matchedRoutes(c);
  const answered = routes[c.req.routeIndex];
  if (answered && answered.method !== 'ALL') return answered.path;
  const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
  return routes.findLast((r) => r.method === method)?.path ?? '-';
}

/**
 * Makes a failure to read the request body (the client closed the connection mid-upload) a 400 that
 * says so, and tells `onAbort`. The body is wrapped only when someone reads it.
 */
function guardBody(c: Context<Env>, onAbort: () => void): void {
  const raw = c.req.raw;
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return;
  const proto: object = Object.getPrototypeOf(raw);
  let wrapped: ReadableStream<Uint8Array> | null | undefined;
  try {
    Object.defineProperty(raw, 'body', {
      configurable: true,
      get() {
        if (wrapped !== undefined) return wrapped;
        const inner = Reflect.get(proto, 'body', raw) as ReadableStream<Uint8Array> | null;
        wrapped = inner ? abortAware(inner, onAbort) : null;
        return wrapped;
      },
    });
  } catch {
    // A runtime whose Request does not allow it: aborts then take the ordinary error path.
  }
}

function abortAware(
  inner: ReadableStream<Uint8Array>,
  onAbort: () => void,
): ReadableStream<Uint8Array> {
  const reader = inner.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch {
        onAbort();
        controller.error(
          badRequest('the client closed the connection before the whole body arrived'),
        );
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
