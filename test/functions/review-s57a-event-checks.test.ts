import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureConsole } from '../support/logs.js';
import { httpApiEvent, type LambdaResult } from '../support/lambda-events.js';
import { s3Env } from '../support/s3.js';

// Review s57a, items 3 and 4: events hono/aws-lambda turns into a Request badly.
// - A header value holding NUL, CR or LF, or a method a Request refuses (TRACE), made the adapter answer
//   itself: a text/plain 400 "Invalid request", no access-log line, and `console.error` of undici's error,
//   which quoted the whole header value: a bearer token reached the function's log. The Node server
//   answers problem+json (its parser refuses the header; TRACE is routed: 401, or 405 with Allow).
// - A non-ASCII Idempotency-Key (`clé-1`) was percent-encoded by the adapter (`cl%C3%A9-1`), a valid key:
//   two keys named one write, where the Node server answers 400. X-Satchel-Delivery likewise.

let handler: (event: unknown, context: unknown) => Promise<LambdaResult>;
const TOKEN = 'tok_s57a_event_checks_0123456789';
const HOOK_SECRET = 's57a-hook-secret-0123456789';
const HOST = 'abc.lambda-url.us-east-1.on.aws';
const auth = { authorization: `Bearer ${TOKEN}` };
const logged = captureConsole();
afterAll(() => logged.restore());

/** A payload 2.0 event (function URL / HTTP API `$default`). */
function v2(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return httpApiEvent(method, path, { host: HOST, body, headers });
}

beforeAll(async () => {
  Object.assign(process.env, {
    SATCHEL_TOKENS: `evc/fn=${TOKEN}`,
    SATCHEL_HOOKS: JSON.stringify({
      ci: { secret: HOOK_SECRET, namespace: 'evc', session: 'new' },
    }),
    ...s3Env('s57a-event-checks'),
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

const problem = (r: LambdaResult) => JSON.parse(r.body) as { status: number; detail: string };

describe('Lambda: events the adapter cannot make a Request of', () => {
  it('a header value holding NUL: 400 problem+json with its access line, the value in no log', async () => {
    logged.clear();
    const r = await handler(
      v2('GET', '/v1/sessions', undefined, { authorization: `Bearer ${TOKEN}\0` }),
      {},
    );
    expect(r.statusCode).toBe(400);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(problem(r).detail).toMatch(/authorization header holds a NUL, CR or LF/);
    expect(JSON.stringify(logged.records)).not.toContain(TOKEN);
    expect(logged.find('request').at(-1)).toMatchObject({ method: 'GET', route: '-', status: 400 });
  });

  it('a CR or LF inside a value, and a method that is no token, are refused the same way', async () => {
    const lf = await handler(
      v2('GET', '/v1/sessions', undefined, { ...auth, 'x-note': 'a\r\nb' }),
      {},
    );
    expect(lf.statusCode).toBe(400);
    expect(problem(lf).detail).toMatch(/x-note header/);
    const method = await handler(v2('GE T', '/v1/sessions', undefined, auth), {});
    expect(method.statusCode).toBe(400);
    expect(method.headers['content-type']).toBe('application/problem+json');
  });

  it('TRACE is routed as on the Node server: 405 with Allow, and 401 without a token', async () => {
    const r = await handler(v2('TRACE', '/v1/sessions', undefined, auth), {});
    expect(r.statusCode).toBe(405);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.headers.allow).toBe('POST, GET, HEAD');
    expect(problem(r).detail).toBe('TRACE is not served at /v1/sessions; use POST, GET, HEAD');
    expect((await handler(v2('TRACE', '/v1/sessions'), {})).statusCode).toBe(401);
    expect((await handler(v2('CONNECT', '/v1/health'), {})).statusCode).toBe(405);
  });

  it('an event the checks pass but the adapter cannot read: problem+json, the error not logged', async () => {
    // A payload 1.0 event without requestContext.domainName: the URL is made of the Host header.
    logged.clear();
    const secret = 'tok_in_a_host_header_0123456789';
    const event = {
      resource: '/{proxy+}',
      path: '/v1/health',
      httpMethod: 'GET',
      headers: { host: `${secret} x` },
      multiValueHeaders: { host: [`${secret} x`] },
      requestContext: { httpMethod: 'GET', path: '/v1/health', requestId: 'r', stage: 'prod' },
      body: null,
      isBase64Encoded: false,
    };
    const r = await handler(event, {});
    expect(r.statusCode).toBe(400);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(JSON.stringify(logged.records)).not.toContain(secret);
  });
});

describe('Lambda: non-ASCII in a header Satchel reads as visible ASCII', () => {
  it('Idempotency-Key: clé-1 is 400, as on the Node server, not the key cl%C3%A9-1', async () => {
    const c = await handler(v2('POST', '/v1/sessions', { task: 'nonascii' }, auth), {});
    const { id } = JSON.parse(c.body) as { id: string };
    const append = (key: string) =>
      handler(
        v2(
          'POST',
          `/v1/sessions/${id}/messages`,
          { messages: [{ role: 'user', content: 'x' }] },
          {
            ...auth,
            'idempotency-key': key,
          },
        ),
        {},
      );
    const r = await append('clé-1');
    expect(r.statusCode, r.body).toBe(400);
    expect(problem(r).detail).toBe('Idempotency-Key must be 1-255 visible ASCII characters');
    // Nothing was stored under the key it used to become.
    expect((await append('cl%C3%A9-1')).headers['idempotency-replayed']).toBeUndefined();
    const read = await handler(v2('GET', `/v1/sessions/${id}`, undefined, auth), {});
    expect(JSON.parse(read.body).messages).toHaveLength(1);
  });

  it('X-Satchel-Delivery: 400 after the signature is checked (401 unsigned), as on the Node server', async () => {
    const payload = JSON.stringify({ type: 'deploy' });
    const t = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', HOOK_SECRET).update(`${t}.${payload}`).digest('hex');
    const hook = (signed: boolean) => ({
      ...v2('POST', '/v1/hooks/ci'),
      headers: {
        host: HOST,
        'content-type': 'application/json',
        'x-satchel-delivery': 'livraison-é',
        ...(signed ? { 'x-satchel-signature': `t=${t},v1=${mac}` } : {}),
      },
      body: payload,
    });
    const r = await handler(hook(true), {});
    expect(r.statusCode, r.body).toBe(400);
    expect(problem(r).detail).toBe('X-Satchel-Delivery must be 1-255 visible ASCII characters');
    expect((await handler(hook(false), {})).statusCode).toBe(401);
  });
});
