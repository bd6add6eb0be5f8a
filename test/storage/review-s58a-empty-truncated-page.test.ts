// Review s58a, suspected item: a listing page that came back empty but marked truncated had no cursor, so
// listAll (and deletePrefix, and every reader of a prefix) took it for the end of the listing and missed
// every key after it. R2 now goes on with the binding's own cursor; S3 (whose cursor is the last key) goes
// on with the page's continuation token (stop 59: it failed the LIST as storage unavailable before), and
// fails the LIST as storage unavailable, never ends it, when the empty pages do not stop.
import { Miniflare } from 'miniflare';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError, utf8 } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

const mf = new Miniflare({
  modules: true,
  script: 'export default { fetch() { return new Response("") } }',
  r2Buckets: ['BUCKET'],
});
afterAll(() => mf.dispose());

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('an empty listing page marked truncated', () => {
  it('r2: the listing goes on with the binding cursor and finds every key', async () => {
    const real = (await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike;
    for (const k of ['ns/e/1.json', 'ns/e/2.json']) await real.put(k, utf8('v'));
    // The first page R2 answers is empty but truncated; its cursor leads on to the keys.
    const bucket = {
      list: (o: Parameters<R2BucketLike['list']>[0]) =>
        o.cursor === 'after-empty'
          ? real.list({ prefix: o.prefix!, limit: o.limit! })
          : o.startAfter
            ? real.list(o)
            : Promise.resolve({ objects: [], truncated: true, cursor: 'after-empty' }),
    } as unknown as R2BucketLike;
    expect(await listAll(new R2Store(bucket), 'ns/e/')).toEqual(['ns/e/1.json', 'ns/e/2.json']);
  });

  const page = (keys: string[], next?: string) =>
    '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><Prefix>ns/</Prefix>' +
    `<KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${next ? 'true' : 'false'}</IsTruncated>` +
    keys.map((k) => `<Contents><Key>${k}</Key><Size>1</Size></Contents>`).join('') +
    (next ? `<NextContinuationToken>${next}</NextContinuationToken>` : '') +
    '</ListBucketResult>';

  it.each([
    ['Node wire', true],
    ['SDK only', false],
  ])(
    's3 (%s): the listing goes on with the continuation token and finds every key',
    async (_, wire) => {
      const asked: string[] = [];
      const { url } = await misbehavingServer((req, res) => {
        req.resume();
        const token = new URL(req.url!, 'http://x').searchParams.get('continuation-token');
        asked.push(token ?? '-');
        res.writeHead(200, { 'content-type': 'application/xml' });
        // Two empty pages marked truncated (a token with characters to escape), then the keys.
        res.end(
          token === null
            ? page([], 'a&amp;1')
            : token === 'a&1'
              ? page([], 't2')
              : page(['ns/1.json', 'ns/2.json']),
        );
      }, closers);
      const store = fakeS3(url, { overWire: wire });
      expect(await listAll(store, 'ns/')).toEqual(['ns/1.json', 'ns/2.json']);
      expect(asked).toEqual(['-', 'a&1', 't2']);
    },
  );

  it.each([
    ['Node wire', true],
    ['SDK only', false],
  ])(
    's3 (%s): empty pages that never stop fail the LIST as storage unavailable, never read as the end',
    async (_, wire) => {
      let asked = 0;
      const { url } = await misbehavingServer((req, res) => {
        req.resume();
        asked++;
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(page([], `t${asked}`));
      }, closers);
      const store = fakeS3(url, { overWire: wire });
      await expect(listAll(store, 'ns/')).rejects.toSatisfy(StorageUnavailableError.is);
      expect(asked).toBe(10); // bounded: ten pages, each answered (no retry of an answered page)
    },
  );

  it.each([
    ['Node wire', true],
    ['SDK only', false],
  ])(
    's3 (%s): an empty truncated page without a token fails the LIST as storage unavailable',
    async (_, wire) => {
      const { url } = await misbehavingServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(page([], 'x').replace(/<NextContinuationToken>x<\/NextContinuationToken>/, ''));
      }, closers);
      const store = fakeS3(url, { overWire: wire });
      await expect(listAll(store, 'ns/')).rejects.toSatisfy(StorageUnavailableError.is);
    },
  );
});
