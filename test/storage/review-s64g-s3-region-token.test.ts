import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { utf8 } from '../../lib/storage/port.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

// Review s64g, finding 2: a bucket in another region than the one Satchel signs for (S3_REGION unset, so
// us-east-1), and temporary credentials past their expiry, were rethrown as they came: every request a bare
// 500. S3 answers them as below (an expired session token is a 400, not a 403: HADOOP-18353); each is now a
// 503 naming what to set, over the Node wire and through the SDK, and the ping (health, the start line) says so.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const xml = (code: string, message: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>` +
  `${extra}<RequestId>ABC</RequestId><HostId>xyz</HostId></Error>`;

/** How AWS S3 answers each case: status, body, and the bucket's region in `x-amz-bucket-region`. */
const ANSWERS = {
  // The global endpoint, signed for us-east-1.
  AuthorizationHeaderMalformed: {
    status: 400,
    body: xml(
      'AuthorizationHeaderMalformed',
      "The authorization header is malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1'",
      '<Region>eu-west-1</Region>',
    ),
  },
  // A regional endpoint of another region.
  PermanentRedirect: {
    status: 301,
    body: xml(
      'PermanentRedirect',
      'The bucket you are attempting to access must be addressed using the specified endpoint.',
      '<Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>b</Bucket>',
    ),
  },
  TemporaryRedirect: {
    status: 307,
    body: xml(
      'TemporaryRedirect',
      'Please re-send this request to the specified temporary endpoint.',
      '<Endpoint>b.s3-eu-west-1.amazonaws.com</Endpoint><Bucket>b</Bucket>',
    ),
  },
  IllegalLocationConstraintException: {
    status: 400,
    body: xml(
      'IllegalLocationConstraintException',
      'The eu-west-1 location constraint is incompatible for the region specific endpoint this request was sent to.',
    ),
  },
  ExpiredToken: { status: 400, body: xml('ExpiredToken', 'The provided token has expired.') },
  TokenRefreshRequired: {
    status: 400,
    body: xml('TokenRefreshRequired', 'The provided token must be refreshed.'),
  },
  InvalidToken: {
    status: 400,
    body: xml('InvalidToken', 'The provided token is malformed or otherwise invalid.'),
  },
} as const;
type Code = keyof typeof ANSWERS;

/** A server answering every request as AWS answers `code` (a HEAD without its body), counting them. */
async function answering(code: Code) {
  const { status, body } = ANSWERS[code];
  return misbehavingServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, {
        'content-type': 'application/xml',
        // AWS names the bucket's region on such answers, an expired token's too.
        'x-amz-bucket-region': 'eu-west-1',
        'x-amz-request-id': 'ABC',
        ...(status === 307 ? { location: 'https://b.s3-eu-west-1.amazonaws.com/' } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  }, closers);
}

/** Every operation of the store, each expected to fail. */
function everyCall(store: ReturnType<typeof fakeS3>): [string, () => Promise<unknown>][] {
  return [
    ['get', () => store.get('k')],
    ['head', () => store.head('k')],
    ['put', () => store.put('k', utf8('v'))],
    ['create-only put', () => store.put('k', utf8('v'), { ifNoneMatch: '*' })],
    ['delete', () => store.delete('k')],
    ['list', () => store.list('p/')],
  ];
}

const REGION_CODES: Code[] = [
  'AuthorizationHeaderMalformed',
  'PermanentRedirect',
  'TemporaryRedirect',
  'IllegalLocationConstraintException',
];

describe.each([
  ['Node wire', true],
  ['SDK', false],
])('S3 answers that no retry mends (review s64g, %s)', (_, overWire) => {
  for (const code of REGION_CODES)
    it(`${code}: every call a 503 naming the region to set, not retried; the ping says it`, async () => {
      const server = await answering(code);
      const store = fakeS3(server.url, { overWire });
      const status = ANSWERS[code].status;
      // Sent to another region's endpoint, not only signed for another region: a set S3_ENDPOINT is wrong too.
      const also =
        code === 'AuthorizationHeaderMalformed'
          ? ''
          : " (and S3_ENDPOINT, if set, to that region's endpoint)";
      for (const [what, call] of everyCall(store)) {
        const before = server.hits();
        const err = await call().catch((e: unknown) => e);
        expect(err, what).toMatchObject({
          name: 'SatchelError',
          kind: 'unavailable',
          extra: { retryAfter: 2 },
        });
        // A HEAD's answer has no code: its status alone.
        const label =
          what === 'head' && status !== 400 ? `HTTP ${status}` : `HTTP ${status} ${code}`;
        expect((err as Error).message, what).toBe(
          `storage says the bucket is in eu-west-1 (${label}): set S3_REGION=eu-west-1${also}`,
        );
        // A HEAD has no body to say why: the same key's GET is asked.
        expect(server.hits() - before, what).toBeLessThanOrEqual(what === 'head' ? 2 : 1);
      }
      const ping = await store.ping(1500);
      expect(ping).toMatchObject({ ok: false, reason: 'error' });
      expect(ping.error).toBe(
        `HTTP ${status} ${code}: the bucket is in eu-west-1, set S3_REGION=eu-west-1${also}`,
      );
    });

  for (const code of ['ExpiredToken', 'TokenRefreshRequired'] as const)
    it(`${code} (HTTP 400): a 503 saying the session token expired, not retried; the ping says denied`, async () => {
      const server = await answering(code);
      const store = fakeS3(server.url, { overWire, sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE' });
      for (const [what, call] of everyCall(store)) {
        const before = server.hits();
        const err = await call().catch((e: unknown) => e);
        expect(err, what).toMatchObject({ kind: 'unavailable', extra: { retryAfter: 2 } });
        expect((err as Error).message, what).toBe(
          `storage refused Satchel's credentials: the session token has expired (HTTP 400 ${code}); ` +
            'refresh the temporary credentials (AWS_SESSION_TOKEN with its AWS_ACCESS_KEY_ID and ' +
            'AWS_SECRET_ACCESS_KEY, or the AWS_PROFILE they come from)',
        );
        expect(server.hits() - before, what).toBeLessThanOrEqual(what === 'head' ? 2 : 1);
      }
      expect(await store.ping(1500)).toMatchObject({
        ok: false,
        reason: 'denied',
        error: `HTTP 400 ${code}`,
      });
    });

  it('InvalidToken (HTTP 400): a 503 naming AWS_SESSION_TOKEN', async () => {
    const server = await answering('InvalidToken');
    const store = fakeS3(server.url, { overWire, sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE' });
    const err = await store.get('k').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'unavailable' });
    expect((err as Error).message).toBe(
      "storage refused Satchel's credentials: the session token is not valid (HTTP 400 InvalidToken); " +
        'check AWS_SESSION_TOKEN, and that it goes with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    );
    expect(await store.ping(1500)).toMatchObject({
      reason: 'denied',
      error: 'HTTP 400 InvalidToken',
    });
  });
});
