import { afterEach, describe, expect, it } from 'vitest';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { runEntry } from '../support/node-entry.js';

// Review s64g, finding 2, as a new user meets it: `npm start` on S3 with S3_REGION unset (so Satchel signs
// for us-east-1) for a bucket in eu-west-1, or with temporary credentials past their expiry. The start line
// promised 503s, and every request answered a bare 500. Now each answers 503 (Retry-After 2) naming what to
// set, health says the cause, and so does the start line.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const error = (code: string, message: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}` +
  '<RequestId>ABC</RequestId><HostId>xyz</HostId></Error>';

/** AWS's answers (scratch/s64g/fake-s3-wrong-region.mjs): global endpoint, regional one, expired token. */
const MODES = {
  '400': {
    status: 400,
    body: error(
      'AuthorizationHeaderMalformed',
      "The authorization header is malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1'",
      '<Region>eu-west-1</Region>',
    ),
  },
  '301': {
    status: 301,
    body: error(
      'PermanentRedirect',
      'The bucket you are attempting to access must be addressed using the specified endpoint.',
      '<Endpoint>my-satchel.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>my-satchel</Bucket>',
    ),
  },
  expired: { status: 400, body: error('ExpiredToken', 'The provided token has expired.') },
};

/** What each mode's 503, health and start line say. */
const SAYS = {
  '400': {
    detail:
      'storage says the bucket is in eu-west-1 (HTTP 400 AuthorizationHeaderMalformed): set S3_REGION=eu-west-1',
    health:
      'HTTP 400 AuthorizationHeaderMalformed: the bucket is in eu-west-1, set S3_REGION=eu-west-1',
    reason: 'error',
    start:
      /^in another region \(HTTP 400 AuthorizationHeaderMalformed: .*set S3_REGION=eu-west-1\): .*503 until S3_REGION is set$/,
  },
  '301': {
    detail:
      'storage says the bucket is in eu-west-1 (HTTP 301 PermanentRedirect): set S3_REGION=eu-west-1 ' +
      "(and S3_ENDPOINT, if set, to that region's endpoint)",
    health:
      'HTTP 301 PermanentRedirect: the bucket is in eu-west-1, set S3_REGION=eu-west-1 (and ' +
      "S3_ENDPOINT, if set, to that region's endpoint)",
    reason: 'error',
    start:
      /^in another region \(HTTP 301 PermanentRedirect: .*set S3_REGION=eu-west-1 .*\): .*503 until S3_REGION is set$/,
  },
  expired: {
    detail:
      "storage refused Satchel's credentials: the session token has expired (HTTP 400 ExpiredToken); " +
      'refresh the temporary credentials (AWS_SESSION_TOKEN with its AWS_ACCESS_KEY_ID and ' +
      'AWS_SECRET_ACCESS_KEY, or the AWS_PROFILE they come from)',
    health: 'HTTP 400 ExpiredToken',
    reason: 'denied',
    start:
      /^refusing access \(HTTP 400 ExpiredToken\): requests answer 503 until the temporary credentials are refreshed/,
  },
};

describe('npm start on S3 signing for another region, or with an expired session token (review s64g)', () => {
  for (const mode of ['400', '301', 'expired'] as const)
    it(`MODE=${mode}: every request 503 naming the cause, health and the start line too`, async () => {
      const { status, body } = MODES[mode];
      const s3 = await misbehavingServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(status, {
            'content-type': 'application/xml',
            'x-amz-bucket-region': 'eu-west-1',
          });
          res.end(req.method === 'HEAD' ? undefined : body);
        });
      }, closers);
      const auth = { authorization: 'Bearer tok_alice_laptop_7Hq2' };
      const answers: { status: number; retryAfter: string | null; detail: string }[] = [];
      let health: { status: string; storage: { reason?: string; error?: string } } | undefined;
      const run = await runEntry(
        {
          SATCHEL_STORAGE: 's3',
          S3_BUCKET: 'my-satchel',
          S3_ENDPOINT: s3.url,
          AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
          AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEXAMPLE',
          SATCHEL_TOKENS: 'alice/laptop=tok_alice_laptop_7Hq2',
        },
        async (url) => {
          health = (await (await fetch(`${url}/v1/health`)).json()) as typeof health;
          const sent = [
            fetch(`${url}/v1/sessions`, { headers: auth }),
            fetch(`${url}/v1/sessions`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ task: 't' }),
            }),
          ];
          for (const res of await Promise.all(sent))
            answers.push({
              status: res.status,
              retryAfter: res.headers.get('retry-after'),
              detail: ((await res.json()) as { detail: string }).detail,
            });
        },
      );
      const says = SAYS[mode];
      expect(answers).toEqual([
        { status: 503, retryAfter: '2', detail: says.detail },
        { status: 503, retryAfter: '2', detail: says.detail },
      ]);
      expect(health).toMatchObject({
        status: 'degraded',
        storage: { reason: says.reason, error: says.health },
      });
      const banner = JSON.parse(run.stdout.split('\n')[0]!) as { storage_state: string };
      expect(banner.storage_state).toMatch(says.start);
      expect(run.stdout + run.stderr).not.toContain('unhandled error');
    });
});
