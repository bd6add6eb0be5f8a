import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureConsole } from '../support/logs.js';
import { httpApiEvent, type LambdaResult } from '../support/lambda-events.js';
import { s3Env } from '../support/s3.js';

// Review s57a, item 2: stages of an API Gateway API's own endpoint.
// - A REST API (payload 1.0) has no stage in `path` (it is in `requestContext.path`): the Location of a
//   create and GET /'s redirect named a path without it, which API Gateway answers 403.
// - The endpoint in the China regions ends in `.amazonaws.com.cn`: the stage was not taken off there,
//   and every request through a named stage was a 404.
// - The stage's root without a slash (`/prod`) was a 404, where `/prod/` redirects to `/prod/ui`.
// - The /docs page linked `/openapi.json`, outside the API under a stage.

let handler: (event: unknown, context: unknown) => Promise<LambdaResult>;
const TOKEN = 'tok_s57a_stages_0123456789';
const HOST = 'abc123.execute-api.us-east-1.amazonaws.com';
const logged = captureConsole();
afterAll(() => logged.restore());

beforeAll(async () => {
  Object.assign(process.env, { SATCHEL_TOKENS: `stg/fn=${TOKEN}`, ...s3Env('s57a-stages') });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

/** A REST API (payload 1.0) event through stage `prod` of the API's own endpoint, as AWS sends it. */
function v1(method: string, path: string, body?: string) {
  const headers: Record<string, string> = {
    Host: HOST,
    Authorization: `Bearer ${TOKEN}`,
    ...(body ? { 'Content-Type': 'application/json' } : {}),
  };
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    requestContext: {
      domainName: HOST,
      httpMethod: method,
      path: `/prod${path}`,
      requestId: 'r',
      resourcePath: '/{proxy+}',
      stage: 'prod',
    },
    body: body ?? null,
    isBase64Encoded: false,
  };
}

/** An HTTP API (payload 2.0) event through stage `prod` of the endpoint `host`: the stage in its path. */
function v2(method: string, path: string, host = HOST) {
  return httpApiEvent(method, path, {
    host,
    headers: { authorization: `Bearer ${TOKEN}` },
    stage: 'prod',
  });
}

describe('Lambda through a named stage', () => {
  it('REST API (payload 1.0): the Location of a create and the redirect of / name the stage', async () => {
    const c = await handler(
      v1('POST', '/v1/sessions', JSON.stringify({ task: 'v1 location' })),
      {},
    );
    expect(c.statusCode, c.body).toBe(201);
    const { id } = JSON.parse(c.body) as { id: string };
    expect(c.headers.location).toBe(`/prod/v1/sessions/${id}`);
    const root = await handler(v1('GET', '/'), {});
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/prod/ui');
    // Through a custom domain (its own name, no stage in requestContext.path): nothing is prefixed.
    const custom = v1('GET', '/');
    custom.requestContext = { ...custom.requestContext, domainName: 'api.example.com', path: '/' };
    expect((await handler(custom, {})).headers.location).toBe('/ui');
  });

  it('HTTP API in a China region (.amazonaws.com.cn): the stage is taken off', async () => {
    const host = 'abc123.execute-api.cn-north-1.amazonaws.com.cn';
    const r = await handler(v2('GET', '/prod/v1/health', host), {});
    expect(r.statusCode, r.body).toBe(200);
  });

  it("HTTP API: the stage's root without a slash redirects as /prod/ does", async () => {
    const bare = await handler(v2('GET', '/prod'), {});
    expect(bare.statusCode, bare.body).toBe(302);
    expect(bare.headers.location).toBe('/prod/ui');
  });

  it('the /docs page links to the OpenAPI document under the stage', async () => {
    const r = await handler(v2('GET', '/prod/docs'), {});
    expect(r.statusCode).toBe(200);
    const href = /href="([^"#]*openapi\.json)"/.exec(r.body)![1]!;
    expect(new URL(href, `https://${HOST}/prod/docs`).pathname).toBe('/prod/openapi.json');
    // And the document is there.
    expect((await handler(v2('GET', '/prod/openapi.json'), {})).statusCode).toBe(200);
  });
});
