// Review s58a, finding 1. A create-only PUT (If-None-Match: *) answered 404 without an S3 error code (a
// body-less 404 from a gateway or a misrouted endpoint) used to read as PreconditionFailedError, which
// putOwn takes for its own earlier attempt having landed: the write was acknowledged though nothing was
// stored. If-None-Match: * fails only when the key exists, so a 404 there is never its precondition
// failure: it is storage that is not there (StorageUnavailableError, 503). If-Match on a missing key
// (AWS answers 404 NoSuchKey) still is a precondition failure.
import { afterEach, describe, expect, it } from 'vitest';
import { putOwn } from '../../lib/storage/create-only.js';
import { PreconditionFailedError, StorageUnavailableError, utf8 } from '../../lib/storage/port.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A store on a server that answers every request 404, with no body or with S3's NoSuchKey. */
async function answering404(wire: boolean, code?: string): Promise<ReturnType<typeof fakeS3>> {
  const { url } = await misbehavingServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(404, code ? { 'content-type': 'application/xml' } : {});
      res.end(code ? `<?xml version="1.0"?><Error><Code>${code}</Code></Error>` : undefined);
    });
  }, closers);
  return fakeS3(url, { overWire: wire });
}

describe.each([
  ['Node wire', true],
  ['SDK only', false],
])('a conditional PUT answered 404 (%s)', (_, wire) => {
  it('without a code, to a create-only PUT: storage unavailable, and putOwn does not report it stored', async () => {
    const store = await answering404(wire);
    const direct = await store.put('k', utf8('v'), { ifNoneMatch: '*' }).catch((e: unknown) => e);
    expect(PreconditionFailedError.is(direct)).toBe(false);
    expect(StorageUnavailableError.is(direct)).toBe(true);
    await expect(putOwn(store, 'ns/x/audit/s/1.json', utf8('record'))).rejects.toSatisfy(
      StorageUnavailableError.is,
    );
  });

  it('NoSuchKey to an If-Match PUT is still a precondition failure', async () => {
    const store = await answering404(wire, 'NoSuchKey');
    await expect(store.put('k', utf8('v'), { ifMatch: 'e1' })).rejects.toSatisfy(
      PreconditionFailedError.is,
    );
  });
});
