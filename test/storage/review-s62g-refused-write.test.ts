import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { fakeS3 } from '../support/s3.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { utf8 } from '../../lib/storage/port.js';

// Review s62g, finding 1: a 403 is now a 503 naming the refused credentials. A write refused that way was
// not applied (not stored), but after an attempt whose answer was lost it may still have landed: that must
// not be lost, on the Node wire or through the SDK.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const denied =
  '<?xml version="1.0"?><Error><Code>InvalidAccessKeyId</Code><Message>no such key</Message></Error>';

describe('a write refused with a 403 (review s62g)', () => {
  for (const overWire of [true, false]) {
    const via = overWire ? 'Node wire' : 'SDK';
    it(`refused at once: unavailable naming the refusal, not "may have landed" (${via})`, async () => {
      const server = await misbehavingServer((_req, res) => {
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(denied);
      }, closers);
      const err = await fakeS3(server.url, { overWire })
        .put('k', utf8('v'), { ifNoneMatch: '*' })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({
        name: 'SatchelError',
        kind: 'unavailable',
        message:
          "storage refused Satchel's credentials (HTTP 403 InvalidAccessKeyId); check " +
          'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
      });
      expect(StorageUnavailableError.is(err) && err.mayHaveLanded).toBe(false);
      expect(server.hits()).toBe(1); // not retried
    });

    it(`refused after an attempt that got no answer: may have landed (${via})`, async () => {
      let n = 0;
      const server = await misbehavingServer((req, res) => {
        req.resume();
        if (n++ === 0) return; // never answered: the attempt times out
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(denied);
      }, closers);
      const err = await fakeS3(server.url, {
        overWire,
        timeouts: { connectMs: 500, requestMs: 300, deadlineMs: 3000 },
      })
        .put('k', utf8('v'), { ifNoneMatch: '*' })
        .catch((e: unknown) => e);
      expect(StorageUnavailableError.is(err)).toBe(true);
      expect(err).toMatchObject({ mayHaveLanded: true, noAnswer: true });
      expect((err as Error).message).toMatch(/storage refused Satchel's credentials/);
    });
  }

  it('a HEAD or GET refused is never "no such object"', async () => {
    const server = await misbehavingServer((req, res) => {
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(req.method === 'HEAD' ? undefined : denied);
    }, closers);
    for (const overWire of [true, false]) {
      const store = fakeS3(server.url, { overWire });
      await expect(store.head('k')).rejects.toMatchObject({ kind: 'unavailable' });
      await expect(store.get('k')).rejects.toMatchObject({ kind: 'unavailable' });
    }
  });
});
