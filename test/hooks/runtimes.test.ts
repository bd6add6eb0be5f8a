import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Miniflare } from 'miniflare';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { buildLambda, buildWorker } from '../../scripts/build.js';
import { captureConsole, captureLines } from '../support/logs.js';

// The work after a webhook's 202, in the deployed bundles: Lambda drains it before the handler returns;
// Workers keep it alive with waitUntil after the response.
const SECRET = 'runtime-hook-secret';
const HOOKS = JSON.stringify({
  ci: { secret: SECRET, namespace: 'edge', session: 'fixed-target' },
});
const body = JSON.stringify({ type: 'deploy', ok: false });
const signed = (t = Math.floor(Date.now() / 1000)) =>
  `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
const instances: Miniflare[] = [];
afterAll(async () => {
  await Promise.all(instances.map((mf) => mf.dispose()));
});

describe('webhooks in the runtimes', () => {
  it('Lambda: the message is stored by the time the handler returns the 202', async () => {
    const s3 = inject('s3');
    Object.assign(process.env, {
      SATCHEL_TOKENS: 'edge/fn=tok_lambda',
      SATCHEL_HOOKS: HOOKS,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_BUCKET: s3.bucket,
      S3_PREFIX: `lambda-hooks-${Date.now()}`,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    const file = await buildLambda(
      join(mkdtempSync(join(tmpdir(), 'satchel-lambda-hooks-')), 'index.mjs'),
    );
    const logged = captureConsole(); // the function's log lines: asserted below, printed only on failure
    afterAll(() => logged.restore());
    type Result = { statusCode: number; body: string };
    const handler = (await import(pathToFileURL(file).href)).handler as (
      event: unknown,
      context: unknown,
    ) => Promise<Result>;
    const event = (
      method: string,
      path: string,
      headers: Record<string, string>,
      payload?: string,
    ) => ({
      version: '2.0',
      routeKey: '$default',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'api.example.com', ...headers },
      requestContext: {
        http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
        requestId: 'req',
        stage: '$default',
        timeEpoch: Date.now(),
      },
      body: payload,
      isBase64Encoded: false,
    });
    const hooked = await handler(
      event(
        'POST',
        '/v1/hooks/ci',
        {
          'content-type': 'application/json',
          'x-satchel-signature': signed(),
          'x-satchel-delivery': 'lam-1',
        },
        body,
      ),
      {},
    );
    expect(hooked.statusCode).toBe(202);
    const read = await handler(
      event('GET', '/v1/sessions/fixed-target', { authorization: 'Bearer tok_lambda' }),
      {},
    );
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body)).toMatchObject({ turns: 1, untrusted_ingested: true });
    const stale = await handler(
      event(
        'POST',
        '/v1/hooks/ci',
        { 'x-satchel-signature': signed(Math.floor(Date.now() / 1000) - 400) },
        body,
      ),
      {},
    );
    expect(stale.statusCode).toBe(401);
    expect(logged.find('webhook delivered')).toEqual([
      expect.objectContaining({ hook: 'ci', session: 'fixed-target', duplicate: false }),
    ]);
  });

  it('Workers: 202, then the message is stored through waitUntil', async () => {
    const script = await buildWorker(
      join(mkdtempSync(join(tmpdir(), 'satchel-worker-hooks-')), 'worker.js'),
    );
    const workerd = captureLines();
    const mf = new Miniflare({
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        stdout.on('data', (d: Buffer) => workerd.add(d.toString()));
        stderr.on('data', (d: Buffer) => workerd.add(d.toString()));
      },
      scriptPath: script,
      modules: true,
      modulesRoot: dirname(script),
      compatibilityDate: '2026-04-01',
      r2Buckets: ['BUCKET'],
      bindings: { SATCHEL_TOKENS: 'edge/worker=tok_worker', SATCHEL_HOOKS: HOOKS },
    });
    instances.push(mf);
    const res = await mf.dispatchFetch('http://w/v1/hooks/ci', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-satchel-signature': signed(),
        'x-satchel-delivery': 'w-1',
      },
      body,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, delivery: 'w-1', session: 'fixed-target' });
    // The work outlives the response; poll (generously: the machine may be busy) until it lands.
    let turns = 0;
    for (const deadline = Date.now() + 20_000; turns === 0 && Date.now() < deadline;) {
      const got = await mf.dispatchFetch('http://w/v1/sessions/fixed-target', {
        headers: { authorization: 'Bearer tok_worker' },
      });
      turns = got.status === 200 ? ((await got.json()) as { turns: number }).turns : 0;
      if (turns === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(turns).toBe(1);
    await expect.poll(() => workerd.find('webhook delivered').length).toBe(1);
    // It builds the Worker first: on a loaded 2-core machine that alone passed 60 s (CI beside helpers).
  }, 180_000);
});
