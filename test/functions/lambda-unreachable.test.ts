// The Lambda bundle when S3 cannot be reached: a plain request answers 503 with Retry-After, and so does a
// webhook whose message could not be stored (the Lambda answers after its background work, so it knows;
// it answered 202, which tells a sender not to send it again: the delivery was lost).
import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildLambda } from '../../scripts/build.js';

type Result = { statusCode: number; headers: Record<string, string>; body: string };
let handler: (event: unknown, context: unknown) => Promise<Result>;
const SECRET = 'review-hook-secret-0123456789';
const payload = JSON.stringify({ type: 'deploy', ok: false });
const signed = (t = Math.floor(Date.now() / 1000)) =>
  `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${payload}`).digest('hex')}`;

function event(method: string, path: string, headers: Record<string, string>, body?: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.us-east-1.on.aws', ...headers },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc',
      domainName: 'abc.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abc',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '04/Dec/2026:12:00:00 +0000',
      timeEpoch: Date.now(),
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: false,
  };
}

beforeAll(async () => {
  // A port nothing listens on: storage unreachable (connection refused).
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const saved = { ...process.env };
  Object.assign(process.env, {
    SATCHEL_TOKENS: 'edge/fn=tok_down',
    SATCHEL_HOOKS: JSON.stringify({
      ci: { secret: SECRET, namespace: 'edge', session: 'fixed-target' },
    }),
    SATCHEL_LOG: 'off',
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_REGION: 'us-east-1',
    S3_BUCKET: 'satchel-test',
    S3_PREFIX: 'down',
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: 'AKIDREVIEW',
    AWS_SECRET_ACCESS_KEY: 'review-secret-key',
  });
  const file = await buildLambda(join(mkdtempSync(join(tmpdir(), 'rv-lambda-down-')), 'index.mjs'));
  handler = (await import(`${pathToFileURL(file).href}?down`)).handler;
  process.env = saved;
}, 120_000);

describe('Lambda with storage unreachable', () => {
  it('a read answers 503 problem+json with Retry-After', async () => {
    const res = await handler(
      event('GET', '/v1/sessions/abc', { authorization: 'Bearer tok_down' }),
      {},
    );
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('a webhook whose message could not be stored is not acknowledged with 202', async () => {
    const res = await handler(
      event(
        'POST',
        '/v1/hooks/ci',
        {
          'content-type': 'application/json',
          'x-satchel-signature': signed(),
          'x-satchel-delivery': 'd-1',
        },
        payload,
      ),
      {},
    );
    // The handler waited for the work (docs/deploy.md: "a webhook's 202 comes once the message is
    // stored"), so it knows the message was not stored: a 202 tells the sender not to send it again.
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });
});
