import { beforeAll, describe, expect, it } from 'vitest';
import { s3Env } from '../support/s3.js';
import { captureConsole } from '../../test/support/logs.js';

// Review s52c: through a named stage of the API's own execute-api endpoint, functions/lambda.ts takes the
// stage off the path and puts it back in front of Location headers (docs/deploy.md). The session browser
// it serves there named its script, stylesheet and API by root paths (/ui/app.js, /v1/sessions), which at
// that host have no stage: API Gateway answered them {"message":"Not Found"} and the page never ran. They
// are relative to the page now (test/ui/lambda-stage.test.ts runs it in Chromium behind such a stage).

type Result = { statusCode: number; headers: Record<string, string>; body: string };
let handler: (event: unknown, context: unknown) => Promise<Result>;
captureConsole();
const HOST = 'abc123.execute-api.eu-west-1.amazonaws.com';

function event(method: string, path: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: HOST },
    requestContext: {
      domainName: HOST,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
      requestId: 'r',
      routeKey: '$default',
      stage: 'prod',
      timeEpoch: Date.now(),
    },
    isBase64Encoded: false,
  };
}

beforeAll(async () => {
  Object.assign(process.env, {
    SATCHEL_TOKENS: 'lam/fn=tok_lambda_stage_0123',
    ...s3Env('s52c-stage'),
    SATCHEL_LOG: 'off',
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

describe('Lambda through a named stage: the session browser', () => {
  it('the redirect keeps the stage, and so must the page it leads to', async () => {
    const root = await handler(event('GET', '/prod/'), {});
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/prod/ui'); // the entry's own fix
    const page = await handler(event('GET', '/prod/ui'), {});
    expect(page.statusCode).toBe(200);
    const script = /<script src="([^"]+)"/.exec(page.body)![1]!;
    const style = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1]!;
    // Resolved as the browser does, against the page's URL: they must stay under the stage.
    const base = `https://${HOST}/prod/ui`;
    expect(new URL(script, base).pathname).toMatch(/^\/prod\//);
    expect(new URL(style, base).pathname).toMatch(/^\/prod\//);
    // A transcript's page too, two levels further down.
    const session = await handler(event('GET', '/prod/ui/sessions/abc'), {});
    expect(session.statusCode).toBe(200);
    const src = /<script src="([^"]+)"/.exec(session.body)![1]!;
    expect(new URL(src, `https://${HOST}/prod/ui/sessions/abc`).pathname).toMatch(
      /^\/prod\/ui\/app\.js$/,
    );
  });
});
