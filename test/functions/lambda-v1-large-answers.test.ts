// Review s53g (2026-12-06), fixed the same day; this test failed on the code before the fix.
// API Gateway payload 1.0 events (REST APIs, HTTP APIs set to 1.0): Hono answers them in
// `multiValueHeaders`, which the 6 MB handling did not see. A gzip-compressed answer kept the
// uncompressed Content-Length there (API Gateway lets `multiValueHeaders` win a shared key: a 5 KB body
// sent with Content-Length 4,800,403), and a 406 after a PUT that stood lost the write's ETag.
import { gunzipSync } from 'node:zlib';
import { beforeAll, expect, it } from 'vitest';
import { s3Env } from '../support/s3.js';

type Result = {
  statusCode: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded?: boolean;
};
let handler: (event: unknown, context: unknown) => Promise<Result>;
const TOKEN = 'tok_lambda_v1_0123456789';

function v1(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const hs: Record<string, string> = {
    Host: 'abc123.execute-api.us-east-1.amazonaws.com',
    Authorization: `Bearer ${TOKEN}`,
    ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    ...headers,
  };
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: hs,
    multiValueHeaders: Object.fromEntries(Object.entries(hs).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { proxy: path.slice(1) },
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      httpMethod: method,
      path: `/prod${path}`,
      protocol: 'HTTP/1.1',
      requestId: 'r',
      resourcePath: '/{proxy+}',
      stage: 'prod',
    },
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/** The headers API Gateway sends: `headers` and `multiValueHeaders` merged, `multiValueHeaders` winning. */
function sent(r: Result): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers ?? {})) out[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(r.multiValueHeaders ?? {}))
    out[k.toLowerCase()] = v.join(',');
  return out;
}

beforeAll(async () => {
  Object.assign(process.env, {
    SATCHEL_TOKENS: `lamv1/dev=${TOKEN}`,
    ...s3Env('s53g-lambda-v1'),
    SATCHEL_MAX_SESSION_BYTES: String(5 * 1024 * 1024),
    SATCHEL_LOG: 'off',
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

it('over 6 MB: the gzip answer names no uncompressed length, and a 406 after a PUT keeps its ETag', async () => {
  const created = await handler(v1('POST', '/v1/sessions', { task: 'v1 large' }), {});
  expect(created.statusCode, created.body).toBe(201);
  const { id } = JSON.parse(created.body) as { id: string };
  // Quotes and backslashes: 2.4 MB of content, about 4.8 MB stored, about 9.6 MB in Lambda's result.
  const big = '"\\'.repeat(600_000);
  const messages = [
    { role: 'user', content: big },
    { role: 'assistant', content: big },
  ];
  const put = await handler(
    v1(
      'PUT',
      `/v1/sessions/${id}`,
      { task: 'v1 large', messages },
      { 'If-Match': '"1"', 'Accept-Encoding': 'identity' },
    ),
    {},
  );
  expect(put.statusCode).toBe(406);
  expect(sent(put).etag).toBe('"2"');
  const read = await handler(
    v1('GET', `/v1/sessions/${id}`, undefined, { 'Accept-Encoding': 'gzip' }),
    {},
  );
  expect(read.statusCode).toBe(200);
  expect(read.isBase64Encoded).toBe(true);
  const bytes = Buffer.from(read.body, 'base64');
  expect(gunzipSync(bytes).length).toBeGreaterThan(4_000_000);
  const headers = sent(read);
  expect(headers['content-encoding']).toBe('gzip');
  if (headers['content-length'] !== undefined)
    expect(Number(headers['content-length'])).toBe(bytes.length);
  expect(headers.etag).toBe('"2"');
}, 180_000);
