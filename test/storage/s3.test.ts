import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { utf8 } from '../../lib/storage/port.js';
import { S3Store } from '../../lib/storage/s3.js';
import { openTestS3 } from '../support/s3.js';
import { describeConformance } from './conformance.js';

describeConformance('s3 (Ceph radosgw)', () => openTestS3('conformance'));

describe('s3 adapter specifics', () => {
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

  it('an unreachable endpoint becomes StorageUnavailableError after bounded retries', async () => {
    const store = new S3Store({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      bucket: 'x',
      forcePathStyle: true,
      accessKeyId: 'a',
      secretAccessKey: 'b',
      retry: { attempts: 3, baseMs: 1, maxMs: 5 },
    });
    await expect(store.get('k')).rejects.toMatchObject({ name: 'StorageUnavailableError' });
  });
});
