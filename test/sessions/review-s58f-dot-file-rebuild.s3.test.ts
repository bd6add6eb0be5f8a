// Review s58f, finding 1 (a regression of ae4f2f0, fixed the same day: listings leave out keys no call could take). assertSafeKey now refuses any key segment starting
// with '.', but S3 and R2 listings still return such keys when something other than Satchel put them
// (a bucket filled from odek's folder copied off a Mac holds `._<id>.json` AppleDouble files). The
// manifest's rebuild lists ns/<ns>/sessions/ and reads every `.json` key: the read of `._x.json` throws
// the plain `unsafe storage key` Error, which is not `corrupt`, so the rebuild fails and GET /v1/sessions
// answers 500 for the whole namespace. Before ae4f2f0 the object was read, found corrupt and left out.
import { inject } from 'vitest';
import { describe, expect, it } from 'vitest';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3Store } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { makeApp, twoSessionsManifestGone } from '../http/helpers.js';
import { Miniflare } from 'miniflare';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { utf8 } from '../../lib/storage/port.js';

describe('a dot-file among the session objects (S3)', () => {
  it('the first list (a rebuild) still answers 200 with the sessions', async () => {
    const s3 = inject('s3');
    const prefix = `s58f-dot-${Math.random().toString(36).slice(2, 10)}/`;
    const config = {
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: s3.bucket,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      prefix,
    };
    const store = new S3Store({ ...config, wire: nodeWire });
    const raw = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    // Two sessions, then the manifest gone (docs/design.md: "the whole m/ prefix deleted": the first
    // list rebuilds), and a Mac's AppleDouble file copied in beside the session objects.
    const ids = await twoSessionsManifestGone(store);
    await raw.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: `${prefix}ns/alice/sessions/._${ids[0]}.json`,
        Body: '\u0000\u0005\u0016\u0007Mac OS X',
        ContentType: 'application/json',
      }),
    );
    const app = await makeApp({ objects: store });
    // Sanity: a GET of a real session works.
    expect((await app.call('GET', `/v1/sessions/${ids[0]}`)).status).toBe(200);
    const res = await app.call('GET', '/v1/sessions?limit=20');
    expect(res.status).toBe(200);
    expect(res.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(ids.slice().sort());
  }, 60_000);
});

describe('a dot-file among the session objects (R2, miniflare)', () => {
  it('the first list (a rebuild) still answers 200 with the sessions', async () => {
    const mf = new Miniflare({
      modules: true,
      script: 'export default { fetch() { return new Response("") } }',
      r2Buckets: ['BUCKET'],
    });
    try {
      const bucket = (await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike;
      const store = new R2Store(bucket);
      const ids = await twoSessionsManifestGone(store);
      await bucket.put(`ns/alice/sessions/._${ids[0]}.json`, utf8('Mac OS X'));
      const app = await makeApp({ objects: store });
      const res = await app.call('GET', '/v1/sessions?limit=20');
      expect(res.status).toBe(200);
      expect(res.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(ids.slice().sort());
    } finally {
      await mf.dispose();
    }
  }, 60_000);
});
