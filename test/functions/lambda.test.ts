import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { captureConsole } from '../support/logs.js';
import { buildLambda, packLambda } from '../../scripts/build.js';

// The Lambda zip as deployed (read back with Info-ZIP's unzip, not our own writer's logic), its handler
// answering API Gateway HTTP API (v2) events, which function URLs send too, against radosgw.
type Handler = (
  event: unknown,
  context: unknown,
) => Promise<{
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}>;
let handler: Handler;
let zipfile: string;
/** The deployed index.mjs, unpacked from the zip. */
let deployed: string;
/** The function's log lines (console), kept and printed only when a test fails. */
const logged = captureConsole();
afterAll(() => logged.restore());

function event(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const [rawPath, rawQueryString = ''] = path.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: {
      host: 'api.example.com',
      authorization: 'Bearer tok_lambda',
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: {
        method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
      requestId: 'req',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

const HOOK_SECRET = 'lambda-hook-secret-0123456789';

beforeAll(async () => {
  const s3 = inject('s3');
  Object.assign(process.env, {
    SATCHEL_TOKENS: 'lam/fn=tok_lambda',
    SATCHEL_HOOKS: JSON.stringify({
      ci: { secret: HOOK_SECRET, namespace: 'lam', session: 'new' },
    }),
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: s3.bucket,
    S3_PREFIX: `lambda-${Date.now()}`,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  });
  const dir = mkdtempSync(join(tmpdir(), 'satchel-lambda-'));
  const bundle = await buildLambda(join(dir, 'build', 'index.mjs'));
  zipfile = packLambda(bundle, join(dir, 'satchel-lambda.zip'));
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('unzip', ['-q', zipfile, '-d', unpacked]);
  const file = join(unpacked, 'index.mjs');
  deployed = file;
  expect(readFileSync(file)).toEqual(readFileSync(bundle));
  handler = (await import(pathToFileURL(file).href)).handler as Handler;
});

describe('the Lambda zip', () => {
  it('holds only index.mjs, readable by everyone, and its checksums hold', () => {
    expect(
      execFileSync('unzip', ['-Z1', zipfile], { encoding: 'utf8' }).trim().split('\n'),
    ).toEqual(['index.mjs']);
    expect(execFileSync('unzip', ['-Z', '-l', zipfile], { encoding: 'utf8' })).toMatch(
      /^-rw-r--r-- .* unx .* defN .* index\.mjs$/m,
    );
    expect(execFileSync('unzip', ['-t', zipfile], { encoding: 'utf8' })).toContain(
      'No errors detected',
    );
  });
});

describe('Lambda entry (API Gateway v2)', () => {
  it('creates, appends, lists and reads back', async () => {
    const created = await handler(event('POST', '/v1/sessions', { task: 'from lambda' }), {});
    expect(created.statusCode).toBe(201);
    const session = JSON.parse(created.body);
    expect(created.headers.etag).toBe('"1"');
    const appended = await handler(
      event('POST', `/v1/sessions/${session.id}/messages`, {
        messages: [{ role: 'user', content: 'hi' }],
      }),
      {},
    );
    expect(appended.statusCode).toBe(200);
    expect(JSON.parse(appended.body)).toMatchObject({ revision: 2, turns: 1 });
    const listed = await handler(event('GET', '/v1/sessions?limit=5'), {});
    expect(JSON.parse(listed.body).sessions.map((s: { id: string }) => s.id)).toEqual([session.id]);
    const notModified = await handler(
      event('GET', `/v1/sessions/${session.id}`, undefined, { 'if-none-match': '"2"' }),
      {},
    );
    expect(notModified.statusCode).toBe(304);
    // One access line per request: the route pattern and the caller, never the id or the token.
    expect(
      logged.find('request').map((l) => [l.method, l.route, l.status, l.namespace, l.device]),
    ).toEqual([
      ['POST', '/v1/sessions', 201, 'lam', 'fn'],
      ['POST', '/v1/sessions/:id/messages', 200, 'lam', 'fn'],
      ['GET', '/v1/sessions', 200, 'lam', 'fn'],
      ['GET', '/v1/sessions/:id', 304, 'lam', 'fn'],
    ]);
    expect(JSON.stringify(logged.records)).not.toMatch(new RegExp(`tok_lambda|${session.id}`));
  });

  it("answers a webhook's 202 once its message is stored", async () => {
    const payload = JSON.stringify({ type: 'deploy', ok: true });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${createHmac('sha256', HOOK_SECRET).update(`${t}.${payload}`).digest('hex')}`;
    const hook = {
      ...event('POST', '/v1/hooks/ci'),
      headers: {
        host: 'api.example.com',
        'content-type': 'application/json',
        'x-satchel-signature': signature,
        'x-satchel-delivery': 'lambda-d1',
      },
      body: payload,
    };
    const accepted = await handler(hook, {});
    expect(accepted.statusCode).toBe(202);
    const { session } = JSON.parse(accepted.body) as { session: string };
    const read = await handler(event('GET', `/v1/sessions/${session}`), {});
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body).messages).toHaveLength(1);
    // A redelivery: the same answer, nothing stored twice.
    expect(JSON.parse((await handler(hook, {})).body)).toEqual(JSON.parse(accepted.body));
    const again = await handler(event('GET', `/v1/sessions/${session}`), {});
    expect(JSON.parse(again.body).messages).toHaveLength(1);
  });

  it('answers through a named stage: its path carries the stage, and so do the Locations answered (review)', async () => {
    // An HTTP API's named stage puts itself in rawPath (`/prod/v1/health`): every request was a 404.
    const domainName = 'abc123.execute-api.us-east-1.amazonaws.com';
    const staged = (method: string, path: string, body?: unknown) => {
      const e = event(method, `/prod${path}`, body);
      return { ...e, requestContext: { ...e.requestContext, stage: 'prod', domainName } };
    };
    expect((await handler(staged('GET', '/v1/health'), {})).statusCode).toBe(200);
    const created = await handler(staged('POST', '/v1/sessions', { task: 'staged' }), {});
    expect(created.statusCode).toBe(201);
    const { id } = JSON.parse(created.body) as { id: string };
    expect(created.headers.location).toBe(`/prod/v1/sessions/${id}`);
    const read = await handler(staged('GET', `/v1/sessions/${id}`), {});
    expect(JSON.parse(read.body)).toMatchObject({ id, task: 'staged' });
    // A path that does not start with the stage routes as sent; so does any path through a custom
    // domain, whose API mapping puts no stage in it, even for a stage named like the API's `/v1` (review).
    const other = event('GET', '/v1/health');
    const at = (stage: string, domain: string) => ({
      ...other,
      requestContext: { ...other.requestContext, stage, domainName: domain },
    });
    expect((await handler(at('prod', domainName), {})).statusCode).toBe(200);
    expect((await handler(at('v1', 'api.example.com'), {})).statusCode).toBe(200);
    const post = event('POST', '/v1/sessions', { task: 'custom domain' });
    const mapped = await handler(
      {
        ...post,
        requestContext: { ...post.requestContext, stage: 'v1', domainName: 'api.example.com' },
      },
      {},
    );
    expect(mapped.headers.location).toMatch(/^\/v1\/sessions\//);
  });

  it('answers a GET that carries a body as Node does (review: Hono refused it with a text/plain 400)', async () => {
    const read = await handler(
      { ...event('GET', '/v1/sessions?limit=1'), body: '{}', isBase64Encoded: false },
      {},
    );
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-type']).toMatch(/^application\/json/);
  });

  it('bad input and bad tokens are problems, not crashes', async () => {
    const bad = await handler(
      {
        ...event('POST', '/v1/sessions'),
        body: '{',
        headers: { authorization: 'Bearer tok_lambda', 'content-type': 'application/json' },
      },
      {},
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe('application/problem+json');
    expect(
      (await handler(event('GET', '/v1/sessions', undefined, { authorization: 'Bearer nope' }), {}))
        .statusCode,
    ).toBe(401);
  });

  it('serves the OpenAPI document and the docs page without a token', async () => {
    const doc = await handler(event('GET', '/openapi.json', undefined, { authorization: '' }), {});
    expect(doc.statusCode).toBe(200);
    expect(JSON.parse(doc.body).openapi).toBe('3.1.0');
    const page = await handler(event('GET', '/docs', undefined, { authorization: '' }), {});
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  });
});

it('a configuration error answers every request with a 500 naming it, and ends no init (review)', async () => {
  const saved = process.env.SATCHEL_TOKENS;
  process.env.SATCHEL_TOKENS = 'lam/fn'; // not namespace[/device]=token
  const rejections: unknown[] = [];
  const onRejection = (err: unknown) => rejections.push(err);
  process.on('unhandledRejection', onRejection);
  try {
    // A new instance of the module, as a new function instance with this environment loads it.
    const url = `${pathToFileURL(deployed).href}?config-error`;
    const broken = (await import(url)).handler as Handler;
    await new Promise((r) => setTimeout(r, 50)); // an init that rejected unhandled would be seen by now
    for (const path of ['/v1/sessions', '/v1/health']) {
      const res = await broken(event('GET', path), {});
      expect(res.statusCode).toBe(500);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(res.body).detail).toMatch(
        /^the server is not configured: SATCHEL_TOKENS entry 1/,
      );
    }
    expect(rejections).toEqual([]);
    expect(logged.records.map((r) => JSON.stringify(r)).join('\n')).toMatch(
      /SATCHEL_TOKENS entry 1/,
    );
  } finally {
    process.off('unhandledRejection', onRejection);
    process.env.SATCHEL_TOKENS = saved;
  }
});

describe('Lambda and its 6 MB answers', () => {
  it('caps sessions at 4 MiB by default, so a session grown in appends is still read back (review)', async () => {
    // A synchronous Lambda answers at most 6 MB: past that the caller gets a 502, never the session.
    const limit = 6 * 1024 * 1024;
    const created = await handler(
      event('POST', '/v1/sessions', { task: 'large tool outputs' }),
      {},
    );
    const { id } = JSON.parse(created.body) as { id: string };
    const chunk = 'log line of a long build output 0123456789 '.repeat(40_000); // 1.7 MB
    for (let i = 0; i < 4; i++) {
      const appended = await handler(
        event('POST', `/v1/sessions/${id}/messages`, {
          messages: [
            { role: 'user', content: `step ${i}` },
            { role: 'assistant', content: chunk },
          ],
        }),
        {},
      );
      expect(appended.statusCode).toBe(200);
    }
    const read = await handler(event('GET', `/v1/sessions/${id}`), {});
    expect(read.statusCode).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(read))).toBeLessThan(limit);
    // The size cap kept the newest steps and says what it dropped.
    expect(JSON.stringify(JSON.parse(read.body).messages.at(-2))).toContain('step 3');
  });

  it('refuses a SATCHEL_MAX_SESSION_BYTES it could not answer with', async () => {
    process.env.SATCHEL_MAX_SESSION_BYTES = String(32 * 1024 * 1024);
    try {
      const broken = (await import(`${pathToFileURL(deployed).href}?session-cap`))
        .handler as Handler;
      const res = await broken(event('GET', '/v1/sessions'), {});
      expect(res.statusCode).toBe(500);
      expect(JSON.parse(res.body).detail).toMatch(
        /SATCHEL_MAX_SESSION_BYTES must be at most 5242880/,
      );
    } finally {
      delete process.env.SATCHEL_MAX_SESSION_BYTES;
    }
  });
});
