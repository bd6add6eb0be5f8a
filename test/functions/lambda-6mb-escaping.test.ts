import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../support/lambda-events.js';
import { s3Env } from '../support/s3.js';
import { captureConsole } from '../support/logs.js';

// Review s52c: the Lambda cap (4 MiB by default) counts the stored JSON, where `"` and `\` take 2 bytes;
// the Lambda result escapes the body again (4 bytes each), so a session of escaped-JSON tool output under
// the cap serialised to 6,480,911 bytes, over AWS's 6,291,456 (AWS answers a bare 502). An answer over the
// limit now goes gzip-compressed when the request accepts gzip, and is a problem+json when it cannot fit.

type Result = {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
};
let handler: (event: unknown, context: unknown) => Promise<Result>;
const logged = captureConsole();
const LIMIT = 6 * 1024 * 1024; // AWS: 6,291,456 bytes for a synchronous answer
const CAP = 4 * 1024 * 1024; // the Lambda default of SATCHEL_MAX_SESSION_BYTES

function event(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return httpApiEvent(method, path, {
    host: 'fn.lambda-url.eu-west-1.on.aws',
    body,
    headers: { authorization: 'Bearer tok_lambda_6mb_0123', ...headers },
  });
}

/** What the Lambda runtime sends back: the result object serialised as JSON. */
const answered = (result: Result) => Buffer.byteLength(JSON.stringify(result));

/** The body as the client reads it, after undoing a gzip content coding. */
function decoded(result: Result): string {
  if (!result.isBase64Encoded) return result.body;
  const raw = Buffer.from(result.body, 'base64');
  return (result.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
}

/** A session filled with `content(i)` tool results until the next would pass the cap. */
async function filled(content: (i: number) => string): Promise<{ id: string; bytes: number }> {
  const created = await handler(event('POST', '/v1/sessions', { task: 'api calls' }), {});
  expect(created.statusCode, created.body).toBe(201);
  const { id } = JSON.parse(created.body) as { id: string };
  let bytes = 0;
  let step = 0;
  for (let i = 0; bytes + step * 1.1 < CAP; i++) {
    const messages = [{ role: 'tool', tool_call_id: `c${i}`, content: content(i) }];
    const appended = await handler(event('POST', `/v1/sessions/${id}/messages`, { messages }), {});
    expect(appended.statusCode, appended.body).toBe(200);
    const now = (JSON.parse(appended.body) as { bytes: number }).bytes;
    step = now - bytes;
    bytes = now;
  }
  expect(bytes).toBeLessThanOrEqual(CAP);
  return { id, bytes };
}

beforeAll(async () => {
  Object.assign(process.env, {
    SATCHEL_TOKENS: 'lam/fn=tok_lambda_6mb_0123',
    ...s3Env('s52c-lambda'),
    SATCHEL_LOG: 'json',
  });
  handler = (await import('../../functions/lambda.js')).handler as never;
});

describe('Lambda: every session under the default cap can be read back in one answer', () => {
  // A tool result that holds JSON encoded as a string (an HTTP tool returning a JSON body as text).
  const record = JSON.stringify({ id: 'x1', name: 'ab', tags: ['a', 'b'], ok: true });
  const escapedJson = JSON.stringify(record.repeat(20_000)); // about 1.4 MB of \" and text
  let escaped: { id: string; bytes: number };

  it('a session of escaped-JSON tool output answers GET under 6 MB (the review case)', async () => {
    escaped = await filled(() => escapedJson);
    const read = await handler(event('GET', `/v1/sessions/${escaped.id}`), {});
    expect(read.statusCode).toBe(200);
    expect(answered(read)).toBeLessThan(LIMIT);
  }, 120_000);

  it('is answered gzip-compressed to a client that accepts gzip, the same session', async () => {
    const plain = await handler(event('GET', `/v1/sessions/${escaped.id}`), {});
    const read = await handler(
      event('GET', `/v1/sessions/${escaped.id}`, undefined, {
        'accept-encoding': 'gzip, deflate, br',
      }),
      {},
    );
    expect(read.statusCode).toBe(200);
    expect(answered(read)).toBeLessThan(LIMIT);
    expect(read.headers).toMatchObject({
      'content-encoding': 'gzip',
      vary: expect.stringMatching(/Accept-Encoding/),
    });
    expect(read.headers.etag).toBe(plain.headers.etag);
    const session = JSON.parse(decoded(read)) as { id: string; messages: { content: string }[] };
    expect(session.id).toBe(escaped.id);
    expect(session.messages.map((m) => m.content)).toEqual(
      Array(session.messages.length).fill(escapedJson),
    );
    // Uncompressed, it would have been over the limit: that is what gzip is for here.
    expect(answered({ ...read, body: decoded(read), isBase64Encoded: false })).toBeGreaterThan(
      LIMIT,
    );
  });

  it('a client that refuses gzip gets a 406 problem saying how to read it, not an AWS 502', async () => {
    const read = await handler(
      event('GET', `/v1/sessions/${escaped.id}`, undefined, {
        'accept-encoding': 'identity, gzip;q=0',
      }),
      {},
    );
    expect(read.statusCode).toBe(406);
    expect(read.headers['content-type']).toBe('application/problem+json');
    expect(read.headers['content-encoding']).toBeUndefined();
    expect(read.headers.etag).toBeUndefined(); // the revision named is the session's, not this answer's
    expect(JSON.parse(read.body)).toMatchObject({
      status: 406,
      title: 'Not Acceptable',
      detail: expect.stringMatching(
        /over the 6291456 a Lambda can answer: ask for it gzip-compressed/,
      ),
    });
    expect(logged.find('answer too large for Lambda')).not.toHaveLength(0);
  });

  it('a write whose answer cannot be sent says it was carried out, and keeps its ETag', async () => {
    const created = await handler(event('POST', '/v1/sessions', { task: 'replaced' }), {});
    const { id } = JSON.parse(created.body) as { id: string };
    const content = '"\\'.repeat(900_000); // 3.6 MB stored, 7.2 MB in the result
    const put = await handler(
      event(
        'PUT',
        `/v1/sessions/${id}`,
        { task: 'replaced', messages: [{ role: 'tool', tool_call_id: 'c1', content }] },
        { 'if-match': created.headers.etag!, 'accept-encoding': 'identity' },
      ),
      {},
    );
    expect(put.statusCode).toBe(406);
    expect(JSON.parse(put.body).detail).toMatch(
      /^the PUT was carried out \(200\), but its answer takes \d+ bytes/,
    );
    expect(put.headers.etag).toBeTruthy();
    expect(put.headers.vary).toMatch(/Accept-Encoding/);
    const read = await handler(
      event('GET', `/v1/sessions/${id}`, undefined, { 'accept-encoding': 'gzip' }),
      {},
    );
    expect(read.headers.etag).toBe(put.headers.etag);
    expect(JSON.parse(decoded(read)).messages[0].content).toBe(content);
  }, 60_000);

  it('a small answer is left as it was, gzip accepted or not', async () => {
    const created = await handler(event('POST', '/v1/sessions', { task: 'small' }), {});
    const { id } = JSON.parse(created.body) as { id: string };
    const read = await handler(
      event('GET', `/v1/sessions/${id}`, undefined, { 'accept-encoding': 'gzip' }),
      {},
    );
    expect(read.statusCode).toBe(200);
    expect(read.isBase64Encoded).toBe(false);
    expect(read.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(read.body)).toMatchObject({ id, task: 'small' });
  });

  it('the worst case: nothing but `"` and `\\`, up to the cap (twice the bytes uncompressed)', async () => {
    const { id, bytes } = await filled(() => '"\\'.repeat(300_000));
    expect(bytes).toBeGreaterThan(CAP * 0.85);
    const read = await handler(event('GET', `/v1/sessions/${id}`), {});
    expect(read.statusCode).toBe(200);
    expect(answered(read)).toBeLessThan(LIMIT);
    expect(JSON.parse(decoded(read)).messages[0].content).toBe('"\\'.repeat(300_000));
  }, 120_000);

  it('escaped and hard to compress: random text, 5 in 8 characters `"` or `\\`, up to the cap', async () => {
    const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const text = () =>
      Array.from(randomBytes(500_000), (b) =>
        b < 160 ? (b & 1 ? '"' : '\\') : letters[b % 62],
      ).join('');
    const { id, bytes } = await filled(text);
    expect(bytes).toBeGreaterThan(CAP * 0.8);
    const read = await handler(
      event('GET', `/v1/sessions/${id}`, undefined, { 'accept-encoding': 'gzip' }),
      {},
    );
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-encoding']).toBe('gzip');
    expect(answered(read)).toBeLessThan(LIMIT);
    expect(JSON.parse(decoded(read)).messages.length).toBeGreaterThan(3);
  }, 120_000);
});
