// Review s68d F3: a LIST answer was buffered whole, with no ceiling (only a GET's had one): 100 MiB of a
// padded listing was taken, and past 512 MiB the decode threw a string-length error, answered 500. Now an
// answer past 16 MiB (a page of 1,000 keys is about 1.4 MB) fails the attempt as storage unavailable (503).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';

it('a LIST answer larger than any listing is storage unavailable, not read whole', async () => {
  const padding = Buffer.alloc(1024 * 1024, 0x20);
  let sent = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.write('<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated>');
    let mine = 0;
    const pump = () => {
      while (mine < 40 * padding.length) {
        mine += padding.length;
        sent += padding.length;
        if (!res.write(padding)) return void res.once('drain', pump);
      }
      res.end('</ListBucketResult>');
    };
    res.on('close', () => (mine = Infinity));
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const store = new S3Store({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'us-east-1',
      bucket: 'b',
      forcePathStyle: true,
      accessKeyId: 'a',
      secretAccessKey: 'b',
      wire: nodeWire,
    });
    const err = await store.list('ns/').then(
      (page) => page,
      (e: unknown) => e,
    );
    expect(StorageUnavailableError.is(err), String(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/LIST ns\/: an answer of \d+ bytes/);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
