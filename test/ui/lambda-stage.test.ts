import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Env } from '../support/s3.js';
import { captureConsole } from '../support/logs.js';
import { apiClient, launchBrowser, openPage, signIn, visibleText } from './browser.js';

// Review s52c: through a named stage of an HTTP API's own endpoint (https://<api>.execute-api.<region>
// .amazonaws.com/prod/...), the Lambda handler takes the stage off the path, but the session browser named
// its script, stylesheet, links and API calls by root paths (/ui/app.js, /v1/sessions), which at that host
// have no stage: API Gateway answered them {"message":"Not Found"} and the page never ran. Here a small
// HTTP server does what API Gateway does (only /prod/... reaches the function, as a payload 2.0 event
// naming the stage), in front of the real Lambda handler on radosgw, and Chromium opens the page.

type Result = {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
};
type Handler = (event: unknown, context: unknown) => Promise<Result>;

const TOKEN = 'tok_lambda_stage_ui_0123';
const STAGE = 'prod';
const logged = captureConsole();
let handler: Handler;
let gateway: Server;
let origin: string;
let browser: Browser;
/** The paths the browser asked for that API Gateway would not route to the function. */
const strays: string[] = [];

/** API Gateway (HTTP API, payload 2.0) in front of the function, on its own execute-api endpoint. */
function startGateway(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://gw');
      if (!url.pathname.startsWith(`/${STAGE}/`) && url.pathname !== `/${STAGE}`) {
        strays.push(url.pathname);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const body = Buffer.concat(chunks);
      const event = {
        version: '2.0',
        routeKey: '$default',
        rawPath: url.pathname,
        rawQueryString: url.search.slice(1),
        headers,
        requestContext: {
          domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
          http: {
            method: req.method,
            path: url.pathname,
            protocol: 'HTTP/1.1',
            sourceIp: '127.0.0.1',
          },
          requestId: 'r',
          routeKey: '$default',
          stage: STAGE,
          timeEpoch: Date.now(),
        },
        ...(body.length
          ? { body: body.toString('base64'), isBase64Encoded: true }
          : { isBase64Encoded: false }),
      };
      handler(event, {}).then(
        (result) => {
          const out = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
          res.writeHead(result.statusCode, result.headers ?? {}).end(out);
        },
        () =>
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end('{"message":"Internal Server Error"}'),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  Object.assign(process.env, {
    SATCHEL_TOKENS: `stage/ui=${TOKEN}`,
    ...s3Env('s52c-stage-ui'),
    SATCHEL_LOG: 'json',
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
  gateway = await startGateway();
  origin = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => gateway?.close(resolve));
  logged.restore();
});

describe('the session browser through a named API Gateway stage (/prod)', () => {
  it('loads, signs in, lists sessions, opens one and comes back, all under the stage', async () => {
    const api = apiClient(`${origin}/${STAGE}`, TOKEN);
    const created = await api('POST', '/v1/sessions', {
      task: 'Staged task',
      messages: [{ role: 'user', content: 'hello from behind the stage' }],
    });
    expect(created.status, created.text).toBe(201);
    const { page, errors, violations } = await openPage(browser);
    await page.goto(`${origin}/${STAGE}/`); // GET / redirects to /ui: under the stage
    expect(new URL(page.url()).pathname).toBe(`/${STAGE}/ui`);
    await signIn(page, TOKEN);
    expect(await visibleText(page, '#rows')).toContain('Staged task');
    // The script and stylesheet ran (the page is styled by its own sheet).
    expect(await page.evaluate(() => document.styleSheets.length)).toBeGreaterThan(0);

    await Promise.all([page.waitForNavigation(), page.click('#rows a')]);
    expect(new URL(page.url()).pathname).toBe(`/${STAGE}/ui/sessions/${created.json.id}`);
    expect(await visibleText(page, '#messages')).toContain('hello from behind the stage');

    await Promise.all([page.waitForNavigation(), page.click('a.brand')]);
    expect(new URL(page.url()).pathname).toBe(`/${STAGE}/ui`);
    expect(await visibleText(page, '#rows')).toContain('Staged task');

    const docs = await page.$eval('a[href$="docs"]', (a) => (a as HTMLAnchorElement).href);
    expect(new URL(docs).pathname).toBe(`/${STAGE}/docs`);
    expect(strays).toEqual([]);
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);
});
