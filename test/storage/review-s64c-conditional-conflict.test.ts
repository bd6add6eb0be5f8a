// Review s64c (suspected, AWS only). AWS answers a conditional PUT 409 ConditionalRequestConflict when
// another write or delete of the key is under way, and asks for the PUT again. It was read as a
// precondition failure: a create racing a DELETE of its id answered "the id exists" with nothing stored.
// Now the PUT is sent again, and that answer tells: stored, or a precondition failure. radosgw never
// sends the 409, so a small server speaking S3's protocol stands in.
import { afterEach, describe, expect, it } from 'vitest';
import { PreconditionFailedError, StorageUnavailableError, utf8 } from '../../lib/storage/port.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const CONFLICT =
  '<?xml version="1.0"?><Error><Code>ConditionalRequestConflict</Code>' +
  '<Message>A conflicting operation occurred. Please retry.</Message></Error>';

/** A server answering each PUT in turn from `answers` (409 the conflict, 412, or 200 with an etag). */
async function answering(answers: number[], wire: boolean) {
  const puts: (string | undefined)[] = [];
  const { url } = await misbehavingServer((req, res) => {
    req.resume();
    req.on('end', () => {
      puts.push(req.headers['if-none-match'] as string | undefined);
      const status = answers[puts.length - 1] ?? 500;
      if (status === 200) res.writeHead(200, { etag: '"e2"' }).end();
      else if (status === 409)
        res.writeHead(409, { 'content-type': 'application/xml' }).end(CONFLICT);
      else
        res
          .writeHead(status, { 'content-type': 'application/xml' })
          .end('<?xml version="1.0"?><Error><Code>PreconditionFailed</Code></Error>');
    });
  }, closers);
  return {
    store: fakeS3(url, { overWire: wire, retry: { attempts: 3, baseMs: 1, maxMs: 2 } }),
    puts,
  };
}

describe.each([
  ['Node wire', true],
  ['SDK only', false],
])('a conditional PUT answered 409 ConditionalRequestConflict (%s)', (_, wire) => {
  it('is sent again, and stores when the key is free then', async () => {
    const { store, puts } = await answering([409, 200], wire);
    await expect(store.put('k', utf8('v'), { ifNoneMatch: '*' })).resolves.toEqual({ etag: 'e2' });
    expect(puts).toEqual(['*', '*']);
  });

  it('is a precondition failure only when the PUT sent again says so', async () => {
    const { store, puts } = await answering([409, 412], wire);
    await expect(store.put('k', utf8('v'), { ifNoneMatch: '*' })).rejects.toSatisfy(
      PreconditionFailedError.is,
    );
    expect(puts).toHaveLength(2);
  });

  it('answers storage unavailable (not "exists") when every attempt meets a conflict', async () => {
    const { store, puts } = await answering([409, 409, 409], wire);
    const err = await store.put('k', utf8('v'), { ifNoneMatch: '*' }).catch((e: unknown) => e);
    expect(PreconditionFailedError.is(err)).toBe(false);
    expect(StorageUnavailableError.is(err)).toBe(true);
    expect(puts).toHaveLength(3);
  });
});
