// Review s67f, item 2: API Gateway HTTP APIs (payload 2.0 and 1.0) hand the function the request path
// percent-DECODED (live captures: fastify/aws-lambda-fastify#169, `/a%2Fb` arrived as rawPath `/a/b`;
// middleapi/standard-server#93). hono/aws-lambda pastes that path into a URL, whose parser resolves a
// decoded `/..`, splits at a decoded `?` or `#`, reads `\` as `/`, drops a tab and trailing spaces, and
// whose `%` hono decodes once more: `DELETE /v1/sessions/nope%2F..%2F<victim>` deleted <victim> (the Node
// server answers 400: `nope/../<victim>` is no id). The entry now refuses such a path with 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { captureConsole } from '../support/logs.js';
import { httpApiEvent, type LambdaResult } from '../support/lambda-events.js';
import { s3Env } from '../support/s3.js';

let handler: (event: unknown, context: unknown) => Promise<LambdaResult>;
const TOKEN = 'tok_s67f_decoded_path_0123456789';
const HOST = 'abc123.execute-api.us-east-1.amazonaws.com'; // an HTTP API's own endpoint, $default stage
const auth = { authorization: `Bearer ${TOKEN}` };
const logged = captureConsole();
afterAll(() => logged.restore());

beforeAll(async () => {
  Object.assign(process.env, { SATCHEL_TOKENS: `dec/fn=${TOKEN}`, ...s3Env('s67f-decoded') });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

/** The payload 2.0 event of an HTTP API for a request whose path was `encoded`: rawPath decoded. */
function v2(method: string, encoded: string) {
  const decoded = decodeURIComponent(encoded);
  return httpApiEvent(method, decoded, { host: HOST, headers: auth });
}

/** The payload 1.0 event (an HTTP API set to 1.0; a REST API's shape) with `path` decoded. */
function v1(method: string, encoded: string) {
  const path = decodeURIComponent(encoded);
  const headers = { host: HOST, ...auth };
  return {
    version: '1.0',
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
      path,
      requestId: 'r',
      stage: '$default',
    },
    body: null,
    isBase64Encoded: false,
  };
}

/** An Application Load Balancer's event (it keeps the encoding; `path` as given here). */
function alb(method: string, path: string) {
  return {
    requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:1:tg/t/1' } },
    httpMethod: method,
    path,
    queryStringParameters: {},
    headers: { host: 'satchel.example', ...auth },
    body: '',
    isBase64Encoded: false,
  };
}

async function create(task: string): Promise<string> {
  const r = await handler(
    httpApiEvent('POST', '/v1/sessions', { host: HOST, headers: auth, body: { task } }),
    {},
  );
  expect(r.statusCode, r.body).toBe(201);
  return (JSON.parse(r.body) as { id: string }).id;
}

const read = async (id: string) =>
  (await handler(httpApiEvent('GET', `/v1/sessions/${id}`, { host: HOST, headers: auth }), {}))
    .statusCode;

/** 400 problem+json that says why, naming nothing of the path. */
function expectRefused(r: LambdaResult, what: string) {
  expect({ what, status: r.statusCode, type: r.headers['content-type'] }).toEqual({
    what,
    status: 400,
    type: 'application/problem+json',
  });
  expect(JSON.parse(r.body).detail).toMatch(/request path/);
}

describe('Lambda: a path the event carries decoded', () => {
  it('DELETE of `nope%2F..%2F<victim>` is 400 as on the Node server, and <victim> stays (v2 and v1)', async () => {
    const victim = await create('victim');
    const path = `/v1/sessions/${encodeURIComponent(`nope/../${victim}`)}`;
    // The Node server's app, on the path as sent (encoded): the id `nope/../<victim>` is no id.
    const node = await makeApp();
    expect((await node.call('DELETE', path)).status).toBe(400);
    expectRefused(await handler(v2('DELETE', path), {}), 'v2');
    expectRefused(await handler(v1('DELETE', path), {}), 'v1');
    // The request is logged as refused before the app, its path in no log line.
    expect(logged.find('request').at(-1)).toMatchObject({
      method: 'DELETE',
      route: '-',
      status: 400,
    });
    expect(JSON.stringify(logged.records)).not.toContain('nope/');
    expect(await read(victim)).toBe(200);
  });

  it('a decoded `?`, `#`, `\\`, `%`, tab or trailing space naming another session is refused', async () => {
    const id = await create('other');
    const hex = id.charCodeAt(0).toString(16);
    // Each id as the client meant it (none is an id: 400 on the Node server); once decoded, the URL
    // parser or hono's own decoding turned each into `id`.
    const meant = [
      `${id}?limit=1`,
      `${id}#x`,
      `x\\..\\${id}`,
      `%${hex}${id.slice(1)}`,
      `${id.slice(0, 2)}\t${id.slice(2)}`,
      `${id} `,
    ];
    const node = await makeApp();
    for (const m of meant) {
      const path = `/v1/sessions/${encodeURIComponent(m)}`;
      expect({ m, status: (await node.call('GET', path)).status }).toEqual({ m, status: 400 });
      expectRefused(await handler(v2('GET', path), {}), `v2 ${JSON.stringify(m)}`);
      expectRefused(await handler(v1('GET', path), {}), `v1 ${JSON.stringify(m)}`);
    }
  });

  it('a dot segment is refused in the ALB shape too; ordinary paths answer in every shape', async () => {
    const id = await create('shapes');
    expectRefused(await handler(alb('DELETE', `/v1/sessions/nope/../${id}`), {}), 'alb');
    expect(await read(id)).toBe(200);
    expect((await handler(alb('GET', `/v1/sessions/${id}`), {})).statusCode).toBe(200);
    expect((await handler(v1('GET', `/v1/sessions/${id}`), {})).statusCode).toBe(200);
    expect((await handler(v2('GET', `/v1/sessions/${id}/audit`), {})).statusCode).toBe(200);
    // Characters a path carries as they are (sub-delims, `:`, `@`, `~`) reach the app, as on Node.
    const plain = "/v1/sessions/a~b!$&'()*+,;=:@c";
    const r = await handler(v2('GET', plain), {});
    expect(JSON.parse(r.body).detail).not.toMatch(/request path/);
    expect(r.statusCode).toBe((await (await makeApp()).call('GET', plain)).status);
  });
});
