import { afterEach, describe, expect, it } from 'vitest';
import { utf8 } from '../../lib/storage/port.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

// Review s63g (suspected, from the code): a 403 AccessDenied comes from keys storage knows but whose policy
// lacks the action (s3:DeleteObject left out of the policy), yet the 503 said to check the keys themselves.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const denied = (code: string) =>
  `<?xml version="1.0"?><Error><Code>${code}</Code><Message>denied</Message></Error>`;

describe('a request storage denies (review s63g)', () => {
  for (const overWire of [true, false]) {
    const via = overWire ? 'Node wire' : 'SDK';
    it(`AccessDenied names the policy, a bad key the keys (${via})`, async () => {
      let code = 'AccessDenied';
      const server = await misbehavingServer((req, res) => {
        req.resume();
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(denied(code));
      }, closers);
      const store = fakeS3(server.url, { overWire });
      const err = await store.delete('k').catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'unavailable' });
      expect((err as Error).message).toBe(
        "storage denied the request (HTTP 403 AccessDenied); check that the credentials' policy allows " +
          'the S3 actions docs/deploy.md lists on this bucket and prefix',
      );
      code = 'InvalidAccessKeyId';
      const bad = await store.put('k', utf8('v')).catch((e: unknown) => e);
      expect((bad as Error).message).toMatch(
        /^storage refused Satchel's credentials .*check AWS_ACCESS_KEY_ID/,
      );
    });
  }
});
