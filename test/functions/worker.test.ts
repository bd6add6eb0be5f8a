import { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';

// The Workers entry, bundled as for deployment, answering inside miniflare's workerd.
let script: string;
const instances: Miniflare[] = [];

beforeAll(async () => {
  script = await buildWorker(join(mkdtempSync(join(tmpdir(), 'satchel-worker-')), 'worker.js'));
});
afterAll(async () => {
  await Promise.all(instances.map((mf) => mf.dispose()));
});

function start(bindings: Record<string, string>, r2 = true) {
  const mf = new Miniflare({
    scriptPath: script,
    modules: true,
    modulesRoot: dirname(script),
    compatibilityDate: '2026-04-01',
    ...(r2 ? { r2Buckets: ['BUCKET'] } : {}),
    bindings,
  });
  instances.push(mf);
  return mf;
}

async function exercise(mf: Miniflare) {
  const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
  const health = await mf.dispatchFetch('http://w/v1/health');
  expect(health.status).toBe(200);
  const created = await mf.dispatchFetch('http://w/v1/sessions', { method: 'POST', headers: auth, body: JSON.stringify({ task: 'from the edge' }) });
  expect(created.status).toBe(201);
  const session = (await created.json()) as { id: string };
  const appended = await mf.dispatchFetch(`http://w/v1/sessions/${session.id}/messages`, {
    method: 'POST',
    headers: { ...auth, 'if-match': '"1"' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(appended.status).toBe(200);
  expect(appended.headers.get('etag')).toBe('"2"');
  const listed = (await (await mf.dispatchFetch('http://w/v1/sessions', { headers: auth })).json()) as { sessions: { id: string; turns: number }[] };
  expect(listed.sessions).toEqual([expect.objectContaining({ id: session.id, turns: 1 })]);
  const bad = await mf.dispatchFetch('http://w/v1/sessions', { method: 'POST', headers: auth, body: '{nope' });
  expect(bad.status).toBe(400);
  expect(bad.headers.get('content-type')).toBe('application/problem+json');
  expect((await mf.dispatchFetch('http://w/v1/sessions', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
  return session.id;
}

describe('Workers entry under miniflare', () => {
  it('answers against the R2 binding', async () => {
    const mf = start({ SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const id = await exercise(mf);
    const bucket = await mf.getR2Bucket('BUCKET');
    expect(await bucket.head(`ns/edge/sessions/${id}.json`)).not.toBeNull();
  });

  it('answers against radosgw through the S3 adapter', async () => {
    const s3 = inject('s3');
    const mf = start(
      {
        SATCHEL_TOKENS: 'edge/worker=tok_worker',
        SATCHEL_STORAGE: 's3',
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: s3.region,
        S3_BUCKET: s3.bucket,
        S3_PREFIX: `worker-${Date.now()}`,
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      },
      false,
    );
    await exercise(mf);
  });

  it('without SATCHEL_TOKENS a deployment refuses every /v1 route but health', async () => {
    const mf = start({});
    expect((await mf.dispatchFetch('http://w/v1/sessions')).status).toBe(401);
    expect((await mf.dispatchFetch('http://w/v1/health')).status).toBe(200);
  });
});
