// What the Lambda entry does to an event before hono/aws-lambda turns it into a Request: the checks that
// adapter would fail on (answered here as problem+json, never logging a header's value), a path it would
// read otherwise than sent, the methods a Request refuses, the values it would percent-encode, a named
// stage's prefix and a read's body.

/** A request refused before the app: its status and detail (no header's value in it). */
export interface Refusal {
  status: 400;
  detail: string;
}

/** The event to route, and the method to give the app when it is one a Request cannot carry. */
export interface Prepared<E> {
  event: E;
  /** CONNECT, TRACE or TRACK as sent: the event carries GET, the app is told this one (`asSent`). */
  method?: string;
}

/** An RFC 9110 token: what a method and a header's name are. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The methods the Fetch standard's Request refuses (any case); the Node server routes them (405). */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * Headers Satchel reads as visible ASCII (the key or id as sent, or a token). hono/aws-lambda
 * percent-encodes a value holding any other character (`clé-1` became `cl%C3%A9-1`, a valid key: two keys
 * named one write, review s57a); each such character is put as DEL (0x7F) instead, which the app's own
 * check refuses (400, at the point the Node server refuses the same request: after auth, or after a
 * webhook's signature) and which no token holds.
 */
const ASCII_HEADERS = new Set([
  'authorization',
  'idempotency-key',
  'x-satchel-delivery',
  'x-github-delivery',
]);

/**
 * A path hono/aws-lambda can paste into a URL and the app reads back as sent: between slashes only what a
 * URL path carries as it is (RFC 3986 pchar without `%`), no `.` or `..` segment. An HTTP API hands the
 * function the path decoded (`/a%2Fb` arrives as `/a/b`): a decoded `/..` was resolved, a `?` or `#` split
 * off, `\` read as `/`, a tab or trailing space dropped, a `%` decoded again, each naming another session
 * than the client's (a DELETE deleted it, review s67f). No route or id holds any of them.
 */
const SAFE_PATH = /^(?:\/(?!\.\.?(?:\/|$))[\w.~!$&'()*+,;=:@-]*)*$/;

type Headers = Record<string, string | string[] | undefined | null>;

interface EventShape {
  rawPath?: string;
  path?: string;
  headers?: Headers | null;
  multiValueHeaders?: Headers | null;
  cookies?: string[];
  httpMethod?: string;
  method?: string;
  body?: unknown;
  requestContext?: { http?: { method?: string } };
}

/**
 * The event, checked: a header whose name is not a token or whose value holds NUL, CR or LF, and a method
 * that is not a token, are refused (400: the Node server's HTTP parser refuses them too; undici's error
 * for them quoted the value, a bearer token, into the function's log, review s57a); so is a path that is
 * not SAFE_PATH (400: which session it names cannot be told).
 */
export function prepared<E extends object>(event: E): Prepared<E> | Refusal {
  const e = event as EventShape;
  const method = methodOf(event);
  if (!TOKEN.test(method)) return refusal('the request method is not a valid token (RFC 9110)');
  // Payload 2.0's rawPath; payload 1.0's, ALB's and VPC Lattice's path (what hono/aws-lambda reads).
  if (!SAFE_PATH.test(e.rawPath ?? e.path ?? ''))
    return refusal(
      "the request path holds a character or a '.' or '..' segment that cannot be passed on here " +
        '(an API Gateway HTTP API hands the path over percent-decoded): a session id is 1-128 of ' +
        '[A-Za-z0-9._-]',
    );
  const lists: [string, Headers | null | undefined][] = [
    ['headers', e.headers],
    ['multiValueHeaders', e.multiValueHeaders],
    ['cookies', e.cookies ? { cookie: e.cookies } : undefined],
  ];
  for (const [, headers] of lists)
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (!TOKEN.test(name)) return refusal('a header name is not a valid token (RFC 9110)');
      const values = Array.isArray(value) ? value : [value ?? ''];
      if (values.some((v) => /[\0\r\n]/.test(v)))
        return refusal(
          `the ${name.slice(0, 64)} header holds a NUL, CR or LF, which a header value may not`,
        );
    }
  let out = asciiHeaders(event);
  if (!FORBIDDEN_METHODS.has(method.toUpperCase())) return { event: out };
  // A Request cannot carry it: the event goes as a GET without a body, and the app is told the method.
  out = { ...withMethod(out, 'GET'), body: undefined } as E;
  return { event: out, method };
}

function refusal(detail: string): Refusal {
  return { status: 400, detail };
}

/** The event with each non-ASCII character of the ASCII_HEADERS put as DEL. */
function asciiHeaders<E extends object>(event: E): E {
  const e = event as EventShape;
  const known = (name: string, value: unknown) =>
    ASCII_HEADERS.has(name.toLowerCase()) && /[^\x00-\x7f]/.test(String(value ?? ''));
  const fix = (v: string) => v.replace(/[^\x00-\x7f]/g, '\x7f');
  const fixed = (headers: Headers | null | undefined) =>
    headers &&
    Object.fromEntries(
      Object.entries(headers).map(([name, v]) => [
        name,
        known(name, v) && v ? (Array.isArray(v) ? v.map(fix) : fix(v)) : v,
      ]),
    );
  const lists = [e.headers, e.multiValueHeaders];
  if (!lists.some((h) => Object.entries(h ?? {}).some(([name, v]) => known(name, v)))) return event;
  return {
    ...event,
    ...(e.headers ? { headers: fixed(e.headers) } : {}),
    ...(e.multiValueHeaders ? { multiValueHeaders: fixed(e.multiValueHeaders) } : {}),
  };
}

/** The request as sent to the app, with the method a Request refuses (`Prepared.method`) put back. */
export function asSent(request: Request, method: string | undefined): Request {
  // An own property over Request's getter: Hono reads `request.method`, and the app answers it as the
  // Node server does (401 without a token, else 405 with Allow, each with its access-log line).
  if (method !== undefined) Object.defineProperty(request, 'method', { value: method });
  return request;
}

/** The event's method, as sent (payload 2.0, 1.0 and ALB, VPC Lattice). */
export function methodOf(event: object): string {
  const e = event as EventShape;
  return e.requestContext?.http?.method ?? e.httpMethod ?? e.method ?? '';
}

function withMethod<E extends object>(event: E, method: string): E {
  const e = event as EventShape;
  if (e.requestContext?.http)
    return {
      ...event,
      requestContext: { ...e.requestContext, http: { ...e.requestContext.http, method } },
    };
  return { ...event, ...(e.method !== undefined ? { method } : { httpMethod: method }) };
}

export function headerOf(event: object, name: string): string | undefined {
  const headers = (event as { headers?: Record<string, string | undefined> }).headers ?? {};
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** A GET or HEAD with a body (which Node serves, ignoring it) without it: Hono cannot build that request. */
export function withoutReadBody<E extends object>(event: E): E {
  const method = methodOf(event).toUpperCase();
  if ((method === 'GET' || method === 'HEAD') && (event as { body?: unknown }).body != null)
    return { ...event, body: undefined };
  return event;
}

/**
 * A request through a named stage of the API's own endpoint (`<api>.execute-api.<region>.amazonaws.com`,
 * `.amazonaws.com.cn` in the China regions): answers the event to route and the stage's prefix, which the
 * entry puts in front of the (Content-)Location answered ('' for none). The API routes on the path without
 * the stage, as through the `$default` stage, a custom domain and function URLs.
 * - An HTTP API (payload 2.0) puts the stage in the path (`/prod/v1/health`, `requestContext.stage:
 *   "prod"`): taken off; the stage's root `/prod` is `/prod/`.
 * - A REST API (payload 1.0) routes on `path`, which has no stage; `requestContext.path` has it
 *   (`/prod/v1/health`): routed as it is, the prefix answered (review s57a: its Location named no stage).
 */
export function withoutStage<E extends object>(event: E): { event: E; stage: string } {
  const e = event as {
    rawPath?: string;
    path?: string;
    requestContext?: {
      stage?: string;
      domainName?: string;
      path?: string;
      http?: { path?: string };
    };
  };
  const name = e.requestContext?.stage;
  // Only the API's own endpoint puts the stage in the path: through a custom domain's API mapping the
  // path has none, whatever the stage is named (one named `v1` is not the API's `/v1`).
  const own = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(
    e.requestContext?.domainName ?? '',
  );
  const stage = own && name && name !== '$default' ? `/${name}` : '';
  if (!stage) return { event, stage: '' };
  if (e.rawPath === undefined)
    return {
      event,
      stage: e.path !== undefined && e.requestContext?.path === stage + e.path ? stage : '',
    };
  const path = (p?: string) =>
    p === stage ? '/' : p?.startsWith(stage + '/') ? p.slice(stage.length) : p;
  if (e.rawPath !== stage && !e.rawPath.startsWith(stage + '/')) return { event, stage: '' };
  const http = e.requestContext!.http;
  return {
    event: {
      ...event,
      rawPath: path(e.rawPath),
      requestContext: {
        ...e.requestContext,
        ...(http ? { http: { ...http, path: path(http.path) } } : {}),
      },
    },
    stage,
  };
}
