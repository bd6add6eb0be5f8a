import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PreconditionFailedError, utf8 } from '../../lib/storage/port.js';
import { parseListing, S3Store, wireLocation, type S3WireTarget } from '../../lib/storage/s3.js';
import { nodeWire, objectUrl } from '../../lib/storage/s3-node.js';

// The Node wire's own behaviour, against a local HTTP server speaking S3's error format. That it signs and
// stores for real is proven on radosgw (test/storage/s3.test.ts, faults.s3.test.ts run it).

const KEY = "ns/a b+c%d~é!'()*&=?#.json";

/** The URL the SDK itself would send a GetObject to, captured before it is sent. */
async function sdkUrl(cfg: {
  region: string;
  bucket: string;
  endpoint?: string;
  forcePathStyle?: boolean;
}): Promise<string> {
  const client = new S3Client({
    region: cfg.region,
    ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
    ...(cfg.forcePathStyle ? { forcePathStyle: true } : {}),
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  client.middlewareStack.add(
    () => async (args) => {
      const r = args.request as { protocol: string; hostname: string; port?: number; path: string };
      throw Object.assign(new Error('captured'), {
        url: `${r.protocol}//${r.hostname}${r.port ? `:${r.port}` : ''}${r.path}`,
      });
    },
    { step: 'finalizeRequest', name: 'capture' },
  );
  const err = (await client
    .send(new GetObjectCommand({ Bucket: cfg.bucket, Key: KEY }))
    .catch((e: unknown) => e)) as { url?: string };
  return err.url ?? 'not captured';
}

/** The URL the wire sends a GET of KEY to, for a store built with `options`. */
async function wireUrl(options: ConstructorParameters<typeof S3Store>[0]): Promise<string> {
  let target: S3WireTarget | undefined;
  new S3Store({
    ...options,
    wire: (t) => {
      target = t;
      return nodeWire(t);
    },
  });
  return objectUrl((await target!.locate()).url, KEY).href;
}

describe('the Node wire sends each object request where the SDK would', () => {
  it.each([
    { region: 'us-east-1', bucket: 'my-bucket' },
    { region: 'eu-west-1', bucket: 'my-bucket' },
    { region: 'eu-west-1', bucket: 'my.bucket' },
    { region: 'cn-north-1', bucket: 'my-bucket' },
    { region: 'auto', bucket: 'bucket-one', endpoint: 'https://acct.r2.cloudflarestorage.com' },
    { region: 'auto', bucket: 'b1', endpoint: 'https://acct.r2.cloudflarestorage.com' },
    { region: 'us-east-1', bucket: 'b1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
    { region: 'us-east-1', bucket: 'my-bucket', endpoint: 'http://127.0.0.1:9000' },
    { region: 'us-east-1', bucket: 'my-bucket', endpoint: 'http://[::1]:9000' },
    { region: 'us-east-1', bucket: 'my-bucket', endpoint: 'http://minio.local:9000/base' },
    {
      region: 'us-east-1',
      bucket: 'b1',
      endpoint: 'http://minio.local:9000/base',
      forcePathStyle: true,
    },
    { region: 'us-east-1', bucket: 'my.bucket', endpoint: 'https://minio.local:9000' },
    { region: 'us-east-1', bucket: 'B_1', endpoint: 'http://minio.local:9000' },
  ])('%o', async (cfg) => {
    const ours = await wireUrl({ ...cfg, accessKeyId: 'a', secretAccessKey: 'b' });
    expect(ours).toBe(await sdkUrl(cfg));
  });

  it('with the endpoint and FIPS settings of the environment', async () => {
    const saved = { ...process.env };
    try {
      process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:9000';
      const viaEnv = { region: 'us-east-1', bucket: 'my-bucket' };
      expect(await wireUrl({ ...viaEnv, accessKeyId: 'a', secretAccessKey: 'b' })).toBe(
        await sdkUrl(viaEnv),
      );
      delete process.env.AWS_ENDPOINT_URL_S3;
      process.env.AWS_USE_FIPS_ENDPOINT = 'true';
      const fips = await wireUrl({ ...viaEnv, accessKeyId: 'a', secretAccessKey: 'b' });
      expect(fips).toContain('s3-fips.us-east-1.amazonaws.com');
      expect(fips).toBe(await sdkUrl(viaEnv));
    } finally {
      process.env = saved;
    }
  });
});

describe('the Node wire signs only what plain SigV4 for s3 covers', () => {
  const client = (region: string) =>
    new S3Client({ region, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });

  it('a bucket: its endpoint and region', async () => {
    const at = await wireLocation(client('eu-west-1'), 'my-bucket');
    expect(at?.url.href).toBe('https://my-bucket.s3.eu-west-1.amazonaws.com/');
    expect(at?.signingRegion).toBe('eu-west-1');
  });

  it.each([
    ['a directory bucket (sigv4-s3express)', 'us-west-2', 'mybucket--usw2-az1--x-s3'],
    [
      'a multi-region access point (sigv4a)',
      'us-east-1',
      'arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap',
    ],
  ])('%s: none, so the store sends everything through the SDK', async (_, region, bucket) => {
    expect(await wireLocation(client(region), bucket)).toBeNull();
  });
});

describe('a listing over the wire', () => {
  it('reads keys (entities decoded once), sizes and truncation', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      '<Name>b</Name><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>' +
      '<Contents><Key>a &amp;amp; &lt;b&gt; &quot;&apos; &#x9;&#65;</Key><Size>12</Size></Contents>' +
      '<Contents><Key>é/z</Key><LastModified>x</LastModified><Size>0</Size></Contents></ListBucketResult>';
    expect(parseListing(xml)).toEqual({
      keys: [
        { key: 'a &amp; <b> "\' \tA', size: 12 },
        { key: 'é/z', size: 0 },
      ],
      truncated: true,
    });
    expect(
      parseListing('<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>'),
    ).toEqual({
      keys: [],
      truncated: false,
    });
  });

  it('refuses an answer that is not a listing, rather than read it as an empty page', () => {
    expect(() => parseListing('<html>proxy error</html>')).toThrow(/not a ListBucketResult/);
  });
});

interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

describe('the Node wire against a server', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /**
   * A server that records each request (and the body bytes it read) and answers with `answer(request,
   * index)`. `onExpect`: what it does with `Expect: 100-continue` ('continue' is Node's default).
   */
  async function serve(
    answer: (req: IncomingMessage, i: number) => Answer,
    {
      host = '127.0.0.1',
      onExpect = 'continue',
    }: { host?: string; onExpect?: 'continue' | 'ignore' | 'refuse' | 'refuse-first' } = {},
  ): Promise<{
    url: string;
    seen: IncomingMessage[];
    bodyBytes: number[];
    connections: () => number;
  }> {
    const seen: IncomingMessage[] = [];
    const bodyBytes: number[] = [];
    const handle = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      const i = seen.push(req) - 1;
      bodyBytes[i] = 0;
      req.on('data', (c: Buffer) => (bodyBytes[i]! += c.length));
      req.on('end', () => {
        const out = answer(req, i);
        res.writeHead(out.status, { 'content-type': 'application/xml', ...out.headers });
        res.end(out.body ?? '');
      });
    };
    server = createServer(handle);
    if (onExpect === 'ignore') server.on('checkContinue', handle);
    let refused = 0;
    if (onExpect === 'refuse' || onExpect === 'refuse-first')
      server.on('checkContinue', (req, res) => {
        if (onExpect === 'refuse-first' && refused > 0) {
          res.writeContinue();
          return handle(req, res);
        }
        refused++;
        const i = seen.push(req) - 1;
        bodyBytes[i] = 0;
        req.on('data', (c: Buffer) => (bodyBytes[i]! += c.length));
        const out = answer(req, i);
        res.writeHead(out.status, { 'content-type': 'application/xml', ...out.headers });
        res.end(out.body ?? '');
      });
    let connected = 0;
    server.on('connection', () => connected++);
    await new Promise<void>((r, fail) => {
      server!.once('error', fail);
      server!.listen(0, host, r);
    });
    const port = (server.address() as AddressInfo).port;
    return {
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      seen,
      bodyBytes,
      connections: () => connected,
    };
  }

  function storeAt(url: string, extra: Partial<ConstructorParameters<typeof S3Store>[0]> = {}) {
    return new S3Store({
      endpoint: url,
      region: 'us-east-1',
      bucket: 'b1',
      forcePathStyle: true,
      accessKeyId: 'AKID',
      secretAccessKey: 'secret',
      retry: { attempts: 3, baseMs: 1, maxMs: 2 },
      wire: nodeWire,
      ...extra,
    });
  }

  it('sends the session token of temporary credentials, signed', async () => {
    const { url, seen } = await serve(() => ({ status: 200, headers: { etag: '"e1"' } }));
    await storeAt(url, { sessionToken: 'token-1' }).put('k', utf8('v'));
    expect(seen[0]!.headers['x-amz-security-token']).toBe('token-1');
    expect(seen[0]!.headers.authorization).toMatch(
      /SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,/,
    );
    expect(seen[0]!.headers['content-type']).toBe('application/json');
  });

  it("names an error answer by S3's code, as the SDK does: a refusal is not retried, a 503 SlowDown is", async () => {
    const denied = await serve(() => ({
      status: 403,
      body: '<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
    }));
    // Kept as the cause of the 503 naming the refusal (review s62g).
    await expect(storeAt(denied.url).get('k')).rejects.toMatchObject({
      kind: 'unavailable',
      cause: { name: 'AccessDenied', message: 'Access Denied', $metadata: { httpStatusCode: 403 } },
    });
    expect(denied.seen).toHaveLength(1);
    server!.close();
    const slow = await serve((_, i): Answer =>
      i === 0
        ? { status: 503, body: '<Error><Code>SlowDown</Code></Error>' }
        : { status: 200, body: 'v', headers: { etag: '"e2"' } },
    );
    expect(await storeAt(slow.url).get('k')).toMatchObject({ etag: 'e2' });
    expect(slow.seen).toHaveLength(2);
  });

  it("takes the server's clock after a RequestTimeTooSkewed, for the next requests", async () => {
    const ahead = Date.now() + 3600_000;
    const { url, seen } = await serve((_, i): Answer =>
      i === 0
        ? {
            status: 403,
            body: '<Error><Code>RequestTimeTooSkewed</Code></Error>',
            headers: { date: new Date(ahead).toUTCString() },
          }
        : { status: 200, headers: { etag: '"e3"' } },
    );
    const store = storeAt(url);
    await expect(store.put('k', utf8('v'))).rejects.toMatchObject({
      cause: { name: 'RequestTimeTooSkewed' },
    });
    await store.put('k', utf8('v'));
    const sent = (req: IncomingMessage) => {
      const d = String(req.headers['x-amz-date']);
      return Date.parse(
        `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 11)}:${d.slice(11, 13)}:${d.slice(13, 15)}Z`,
      );
    };
    expect(Math.abs(sent(seen[0]!) - Date.now())).toBeLessThan(60_000);
    expect(Math.abs(sent(seen[1]!) - ahead)).toBeLessThan(60_000);
  });

  it("a 404 NoSuchKey is a missing key (AWS's answer to If-Match on one); a 404 NoSuchBucket is not", async () => {
    const noKey = await serve(() => ({
      status: 404,
      body: '<Error><Code>NoSuchKey</Code></Error>',
    }));
    expect(await storeAt(noKey.url).get('k')).toBeNull();
    await expect(storeAt(noKey.url).put('k', utf8('v'), { ifMatch: 'e1' })).rejects.toSatisfy(
      PreconditionFailedError.is,
    );
    server!.close();
    const noBucket = await serve(() => ({
      status: 404,
      body: '<Error><Code>NoSuchBucket</Code></Error>',
    }));
    const store = storeAt(noBucket.url);
    for (const call of [
      () => store.get('k'),
      () => store.put('k', utf8('v'), { ifMatch: 'e1' }),
      () => store.put('k', utf8('v'), { ifNoneMatch: '*' }),
    ])
      await expect(call()).rejects.toMatchObject({
        name: 'StorageUnavailableError',
        cause: { name: 'NoSuchBucket' },
      });
    expect(noBucket.seen).toHaveLength(3); // not retried
  });

  it('takes any 2xx as done, as the SDK does (a gateway that answers 204)', async () => {
    const { url } = await serve(() => ({ status: 204, headers: { etag: '"e4"' } }));
    const store = storeAt(url);
    expect(await store.put('k', utf8('v'), { ifMatch: 'e3' })).toEqual({ etag: 'e4' });
    await store.delete('k');
  });

  it('reaches an IPv6 literal endpoint', async (ctx) => {
    const started = await serve(() => ({ status: 200, body: 'v6', headers: { etag: '"e6"' } }), {
      host: '::1',
    }).catch(() => undefined);
    if (!started) return ctx.skip(); // no IPv6 loopback on this machine
    expect(await storeAt(started.url).get('k')).toMatchObject({ etag: 'e6' });
    expect(started.seen[0]!.headers.host).toBe(new URL(started.url).host);
  });

  const big = new Uint8Array(3 * 1024 * 1024).fill(1);

  it('a PUT from 2 MiB waits for 100 Continue: refused first, its body is never sent', async () => {
    const { url, seen, bodyBytes } = await serve(
      (req) =>
        req.headers.expect
          ? { status: 412, body: '<Error><Code>PreconditionFailed</Code></Error>' }
          : { status: 200, body: 'v', headers: { etag: '"e7"' } },
      { onExpect: 'refuse' },
    );
    const store = storeAt(url);
    const err = await store.put('k', big, { ifMatch: 'old' }).catch((e: unknown) => e);
    expect(PreconditionFailedError.is(err)).toBe(true);
    expect(seen[0]!.headers.expect).toBe('100-continue');
    expect(bodyBytes[0]).toBe(0);
    // The connection it left is not used again: the next request gets its answer.
    expect(await store.get('k')).toMatchObject({ etag: 'e7' });
  });

  it('a PUT from 2 MiB to a server that ignores Expect sends its body after a second', async () => {
    const { url, bodyBytes } = await serve(() => ({ status: 200, headers: { etag: '"e8"' } }), {
      onExpect: 'ignore',
    });
    const started = Date.now();
    expect(await storeAt(url).put('k', big)).toEqual({ etag: 'e8' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(bodyBytes[0]).toBe(big.byteLength);
  });
  it('a PUT from 2 MiB answered 500 before 100 Continue is sent again, its body once', async () => {
    const { url, bodyBytes } = await serve(
      (_, i) => (i === 0 ? { status: 500 } : { status: 200, headers: { etag: '"e9"' } }),
      { onExpect: 'refuse-first' },
    );
    expect(await storeAt(url).put('k', big)).toEqual({ etag: 'e9' });
    expect(bodyBytes).toEqual([0, big.byteLength]);
  });

  it('PUTs from 2 MiB that get 100 Continue keep their connection for the next request', async () => {
    const { url, connections } = await serve(() => ({ status: 200, headers: { etag: '"e10"' } }));
    const store = storeAt(url);
    await store.put('k', big);
    await store.put('k', big);
    await store.get('k');
    expect(connections()).toBe(1);
  });
});

/** An S3Store on the local test server, with short timeouts (a deadline of `deadlineMs`) and `attempts`. */
function trickleStore(server: Server, via: object, deadlineMs: number, attempts: number): S3Store {
  return new S3Store({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    bucket: 'b1',
    forcePathStyle: true,
    accessKeyId: 'AKID',
    secretAccessKey: 'secret',
    timeouts: { connectMs: 300, requestMs: 500, deadlineMs },
    retry: { attempts, baseMs: 1, maxMs: 2 },
    ...via,
  });
}

describe('a GET whose body trickles', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  it.each([
    ['Node wire', { wire: nodeWire }],
    ['SDK only', {}],
  ])(
    'is cut off by its slowness, not held by the length it claims (50 GiB, a byte per 100 ms) (%s)',
    async (_, via) => {
      server = createServer((_req, res) => {
        res.writeHead(200, { 'content-length': String(50 * 1024 ** 3), etag: '"e1"' });
        const timer = setInterval(() => res.write('x'), 100);
        res.on('close', () => clearInterval(timer));
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const store = trickleStore(server, via, 1500, 2);
      const out = await Promise.race([
        store.get('k').catch((e: unknown) => e),
        new Promise((r) => setTimeout(() => r('still reading after 8 s'), 8000)),
      ]);
      expect(out).toMatchObject({ name: 'StorageUnavailableError' });
    },
    20_000,
  );

  it.each([
    ['Node wire', { wire: nodeWire }],
    ['SDK only', {}],
  ])(
    'that keeps coming above the slowest rate tolerated is read whole, past its attempt time (%s)',
    async (_, via) => {
      const chunk = Buffer.alloc(64 * 1024, 1);
      // 16 MiB at up to 12 MiB/s (a loaded machine's timers may slow it several times, still well above
      // the 1 MiB/s tolerated): longer than an attempt (500 ms) and the deadline (1 s).
      const total = 256;
      server = createServer((_req, res) => {
        res.writeHead(200, { 'content-length': String(total * chunk.length), etag: '"e2"' });
        let sent = 0;
        const timer = setInterval(() => {
          res.write(chunk);
          if (++sent === total) (clearInterval(timer), res.end());
        }, 5);
        res.on('close', () => clearInterval(timer));
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const store = trickleStore(server, via, 1000, 1);
      const got = await store.get('k');
      expect(got?.body.byteLength).toBe(total * chunk.length);
    },
    20_000,
  );
});
