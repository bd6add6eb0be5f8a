// S3's DeleteObjects answers 200 with an <Error> per key it did not delete. Before 2026-12-05 every code but
// NoSuchKey became a plain Error: a transient one (InternalError, SlowDown) was never retried, and the HTTP
// layer answered 500 instead of 503. Now the keys that failed with a transient code are sent again through
// the store's retries (only those keys), and a code that will not change (AccessDenied) fails the call with
// StorageUnavailableError, on the SDK path and with the Node wire (batch deletes go through the SDK on both).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { misbehavingServer } from '../support/misbehaving-server.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A DeleteObjects answer naming `errors` as [key, code] pairs. */
function deleteResult(errors: [string, string][]): string {
  const entries = errors
    .map(([k, code]) => `<Error><Key>${k}</Key><Code>${code}</Code><Message>m</Message></Error>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${entries}</DeleteResult>`
  );
}

/**
 * A bucket whose n-th DeleteObjects (from 0) fails the keys `answer(n, keys)` names; `batches` records the
 * keys each one asked to delete.
 */
async function bucket(answer: (n: number, keys: string[]) => [string, string][], wired: boolean) {
  const batches: string[][] = [];
  const server = await misbehavingServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.includes('delete')) {
        res.writeHead(500);
        return void res.end();
      }
      const keys = [...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
      batches.push(keys);
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(deleteResult(answer(batches.length - 1, keys)));
    });
  }, closers);
  const store = new S3Store({
    bucket: 'b',
    endpoint: server.url,
    forcePathStyle: true,
    region: 'us-east-1',
    accessKeyId: 'AK',
    secretAccessKey: 'SK',
    prefix: 'p/',
    retry: { attempts: 4, baseMs: 1, maxMs: 5, deadlineMs: 5000 },
    ...(wired ? { wire: nodeWire } : {}),
  });
  return { store, batches };
}

describe.each([
  ['SDK', false],
  ['Node wire', true],
])('S3 batch delete with per-key errors (%s)', (_, wired) => {
  it('keys failed with a transient code are sent again, alone, until deleted', async () => {
    const { store, batches } = await bucket(
      (n) =>
        n === 0
          ? [
              ['p/a', 'InternalError'],
              ['p/c', 'SlowDown'],
            ]
          : n === 1
            ? [['p/c', 'ServiceUnavailable']]
            : [],
      wired,
    );
    await store.delete(['a', 'b', 'c', 'd']);
    expect(batches).toEqual([['p/a', 'p/b', 'p/c', 'p/d'], ['p/a', 'p/c'], ['p/c']]);
  });

  it('a missing key is no error', async () => {
    const { store, batches } = await bucket(() => [['p/a', 'NoSuchKey']], wired);
    await store.delete(['a', 'b']);
    expect(batches).toHaveLength(1);
  });

  it('a transient code on every attempt ends in StorageUnavailableError', async () => {
    const { store, batches } = await bucket(() => [['p/b', 'SlowDown']], wired);
    const err = await store.delete(['a', 'b']).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(err), String(err)).toBe(true);
    expect(String(err)).toContain('SlowDown');
    expect(batches).toEqual([['p/a', 'p/b'], ['p/b'], ['p/b'], ['p/b']]);
  });

  it('a code that will not change (AccessDenied) is StorageUnavailableError at once', async () => {
    const { store, batches } = await bucket(
      () => [
        ['p/a', 'AccessDenied'],
        ['p/b', 'InternalError'],
      ],
      wired,
    );
    const err = await store.delete(['a', 'b', 'c']).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(err), String(err)).toBe(true);
    expect(String(err)).toContain('AccessDenied');
    expect(batches).toHaveLength(1);
  });
});
