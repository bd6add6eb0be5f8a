import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { putOwn } from '../../lib/storage/create-only.js';
import { PreconditionFailedError, StorageUnavailableError, utf8 } from '../../lib/storage/port.js';
import { S3Store, type S3StoreOptions } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { openTestS3 } from '../support/s3.js';
import { describeConformance } from './conformance.js';

describeConformance('s3 (Ceph radosgw)', () => openTestS3('conformance'));
describeConformance('s3 (Ceph radosgw), SDK only', () =>
  openTestS3('conformance-sdk', { sdk: true }),
);

/** The object requests over the Node entries' wire, and everything through the SDK (as on Workers). */
const transports: [string, Partial<S3StoreOptions>][] = [
  ['Node wire', { wire: nodeWire }],
  ['SDK only', {}],
];

describe('s3 adapter specifics', () => {
  it.each(transports)(
    'keys with spaces, reserved, XML and non-ASCII characters round-trip, list, page and delete (%s)',
    async (_, via) => {
      const store = openTestS3('odd', { sdk: via.wire === undefined });
      const key = "ns/a b+c%d~é!'()*&=?#;,$@[].json";
      const { etag } = await store.put(key, utf8('odd'), { ifNoneMatch: '*' });
      expect(await store.get(key)).toMatchObject({ body: utf8('odd'), etag });
      await store.put(key, utf8('odder'), { ifMatch: etag });
      // XML-special characters, and text that looks like an XML entity, come back as they were.
      const other = 'ns/<b> "q" &amp; &#65; tab\tend.json';
      await store.put(other, utf8('x'));
      expect((await store.list('ns/')).objects.map((o) => o.key)).toEqual([other, key].sort());
      const first = await store.list('ns/', { limit: 1 });
      expect(first.objects.map((o) => o.key)).toEqual([[other, key].sort()[0]]);
      expect(
        (await store.list('ns/', { cursor: first.cursor! })).objects.map((o) => o.key),
      ).toEqual([[other, key].sort()[1]]);
      await store.delete([key, other]);
      expect(await store.get(key)).toBeNull();
    },
  );

  it.each(transports)(
    'a compare-and-swap PUT of 3 MiB (sent after 100 Continue) lands, and a stale one is refused (%s)',
    async (_, via) => {
      const store = openTestS3('big', { sdk: via.wire === undefined });
      const body = new Uint8Array(3 * 1024 * 1024).fill(3);
      const first = await store.put('k', utf8('small'));
      const { etag } = await store.put('k', body, { ifMatch: first.etag });
      await expect(store.put('k', body, { ifMatch: first.etag })).rejects.toSatisfy(
        PreconditionFailedError.is,
      );
      const got = await store.get('k');
      expect(got?.etag).toBe(etag);
      expect(got?.body).toEqual(body);
    },
    // Four calls of up to about 10 s each (S3Store's deadline, with a 3 MiB body's allowance) when the
    // machine is busy: the test's time must outlast their bounds, or a slow run fails as a test timeout.
    120_000,
  );

  it('the Node wire signs with the configured secret: a wrong one is refused, not retried', async () => {
    const s3 = inject('s3');
    const store = new S3Store({ ...s3, secretAccessKey: 'not-the-secret', wire: nodeWire });
    // A 503 naming the refusal (review s62g), the S3 error its cause.
    await expect(store.get('k')).rejects.toMatchObject({
      kind: 'unavailable',
      cause: { name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } },
    });
  });

  it('unconditional bodies over the threshold go through a multipart upload and still report an etag', async () => {
    const s3 = inject('s3');
    const store = new S3Store({
      ...s3,
      prefix: `mp-${Date.now()}/`,
      multipartThreshold: 5 * 1024 * 1024,
    });
    const body = new Uint8Array(6 * 1024 * 1024).fill(7);
    const { etag } = await store.put('big', body);
    expect(etag).toBeTruthy();
    const got = await store.get('big');
    expect(got?.etag).toBe(etag);
    expect(got?.body.byteLength).toBe(body.byteLength);
    // The etag from a multipart upload works as an If-Match precondition.
    await store.put('big', utf8('small'), { ifMatch: etag });
  });

  it('keys live under S3_PREFIX and nothing outside it is listed', async () => {
    const s3 = inject('s3');
    const store = new S3Store({ ...s3, prefix: `pfx-${Date.now()}` });
    await store.put('a/b', utf8('1'));
    const raw = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: s3,
    });
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'elsewhere/a/b', Body: 'x' }));
    expect((await store.list('a/')).objects.map((o) => o.key)).toEqual(['a/b']);
  });

  it('S3_PREFIX "/" is the bucket root, and empty segments in a prefix are dropped', async () => {
    const s3 = inject('s3');
    const tag = `pfx-${Date.now().toString(36)}`;
    const root = new S3Store({ ...s3, wire: nodeWire });
    const slash = new S3Store({ ...s3, prefix: '/', wire: nodeWire });
    expect(slash.name).toBe(`s3:${s3.bucket}`);
    await slash.put(`${tag}-root.json`, utf8('1'));
    expect(await root.get(`${tag}-root.json`)).not.toBeNull();
    const messy = new S3Store({ ...s3, prefix: `//${tag}//inner/`, wire: nodeWire });
    await messy.put('a.json', utf8('2'));
    expect(await root.get(`${tag}/inner/a.json`)).not.toBeNull();
    await root.delete([`${tag}-root.json`, `${tag}/inner/a.json`]);
  });

  it.each(transports)(
    'a missing bucket is storage unavailable, never a missing key or a precondition failure (%s)',
    async (_, via) => {
      const s3 = inject('s3');
      const missing = new S3Store({
        ...s3,
        bucket: `no-such-bucket-${via.wire ? 'wire' : 'sdk'}`,
        retry: { attempts: 1, baseMs: 1, maxMs: 1 },
        ...via,
      });
      const unavailable = (err: unknown) =>
        StorageUnavailableError.is(err) && !PreconditionFailedError.is(err);
      await expect(missing.get('k.json')).rejects.toSatisfy(unavailable);
      await expect(missing.put('k.json', utf8('{}'), { ifNoneMatch: '*' })).rejects.toSatisfy(
        unavailable,
      );
      await expect(missing.put('k.json', utf8('{}'), { ifMatch: 'abc' })).rejects.toSatisfy(
        unavailable,
      );
      // putOwn takes a precondition failure as its own earlier attempt having landed: the write was lost.
      await expect(putOwn(missing, 'k.json', utf8('{}'))).rejects.toSatisfy(unavailable);
      await expect(missing.delete('k.json')).rejects.toSatisfy(unavailable);
      await expect(missing.list('')).rejects.toSatisfy(unavailable);
      // A HEAD's 404 has no body to tell a missing bucket from a missing key: it reads as missing.
      expect(await missing.head('k.json')).toBe(null);
    },
  );

  it.each(transports)(
    'an unreachable endpoint becomes StorageUnavailableError after bounded retries (%s)',
    async (_, via) => {
      const store = new S3Store({
        endpoint: 'http://127.0.0.1:9',
        region: 'us-east-1',
        bucket: 'x',
        forcePathStyle: true,
        accessKeyId: 'a',
        secretAccessKey: 'b',
        retry: { attempts: 3, baseMs: 1, maxMs: 5 },
        ...via,
      });
      await expect(store.get('k')).rejects.toMatchObject({ name: 'StorageUnavailableError' });
    },
  );

  it.each(transports)(
    "an attempt's timeout aborts its request (%s): its connection closes then, not at the socket's idle timeout",
    async (_, via) => {
      // A server that takes each request and never answers. The socket's idle timeout (3 s by default) is
      // far above the attempt's (150 ms): each attempt's connection must close at its own timeout.
      const closed: number[] = [];
      const opened: number[] = [];
      const server = createServer((socket) => {
        opened.push(Date.now());
        socket.on('close', () => closed.push(Date.now()));
        socket.resume(); // read what comes, so that the client's close ends the stream
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        const store = new S3Store({
          endpoint: `http://127.0.0.1:${port}`,
          region: 'us-east-1',
          bucket: 'x',
          forcePathStyle: true,
          accessKeyId: 'a',
          secretAccessKey: 'b',
          retry: { attempts: 2, baseMs: 1, maxMs: 5, attemptTimeoutMs: 150, deadlineMs: 2000 },
          ...via,
        });
        const started = Date.now();
        for (const call of [
          () => store.get('k'),
          () => store.put('k', utf8('v'), { ifMatch: 'e' }),
        ])
          await expect(call()).rejects.toMatchObject({ name: 'StorageUnavailableError' });
        expect(Date.now() - started).toBeLessThan(1500);
        // Every connection closed within a second of opening, long before the socket's idle timeout.
        await new Promise((r) => setTimeout(r, 200));
        expect(opened.length).toBeGreaterThanOrEqual(4);
        expect(closed).toHaveLength(opened.length);
        closed.forEach((at, i) => expect(at - opened[i]!).toBeLessThan(1000));
      } finally {
        server.close();
      }
    },
  );
});
