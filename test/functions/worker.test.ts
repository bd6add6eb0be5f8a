import { createServer } from 'node:net';
import type { Miniflare } from 'miniflare';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { build } from 'esbuild';
import { buildWorker, bundleSize, edgeReference } from '../../scripts/build.js';
import { captureLines } from '../support/logs.js';
import { startWorkerd } from '../support/workerd.js';
import { startChatServer } from '../support/chat-server.js';
import { docsPage } from '../../lib/http/docs.js';
import { apiDocument } from '../../lib/http/routes/index.js';
import { renderPage } from '../../lib/ui/page.js';
import { STYLE } from '../../lib/ui/style.js';

// Both Workers bundles, built as for deployment, answering inside miniflare's workerd: dist/worker/worker.js
// (R2 and S3) and dist/worker/worker-r2.js (R2 only).
let withS3: string;
let r2Only: string;
const instances: Miniflare[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-worker-'));
  [withS3, r2Only] = await Promise.all([
    buildWorker(join(dir, 's3', 'worker.js')),
    buildWorker(join(dir, 'r2', 'worker-r2.js'), { s3: false }),
  ]);
});
afterAll(async () => {
  await Promise.all(instances.map((mf) => mf.dispose()));
});

/** What the Workers write (their log lines): kept, printed only when a test fails. */
const workerd = captureLines();

function start(script: string, bindings: Record<string, unknown>, r2 = true, assets = true) {
  // The browser's script and stylesheet: Workers static assets, served before the Worker runs.
  const mf = startWorkerd(script, bindings, { r2, assets, output: (text) => workerd.add(text) });
  instances.push(mf);
  return mf;
}

function s3Bindings() {
  const s3 = inject('s3');
  return {
    SATCHEL_TOKENS: 'edge/worker=tok_worker',
    SATCHEL_STORAGE: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: s3.bucket,
    S3_PREFIX: `worker-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}

async function exercise(mf: Miniflare, backend: RegExp) {
  const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
  const health = await mf.dispatchFetch('http://w/v1/health');
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({
    status: 'ok',
    storage: { backend: expect.stringMatching(backend), ok: true },
  });
  const created = await mf.dispatchFetch('http://w/v1/sessions', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ task: 'from the edge' }),
  });
  expect(created.status).toBe(201);
  const session = (await created.json()) as { id: string };
  const appended = await mf.dispatchFetch(`http://w/v1/sessions/${session.id}/messages`, {
    method: 'POST',
    headers: { ...auth, 'if-match': '"1"' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(appended.status).toBe(200);
  expect(appended.headers.get('etag')).toBe('"2"');
  const listed = (await (
    await mf.dispatchFetch('http://w/v1/sessions', { headers: auth })
  ).json()) as { sessions: { id: string; turns: number }[] };
  expect(listed.sessions).toEqual([expect.objectContaining({ id: session.id, turns: 1 })]);
  const bad = await mf.dispatchFetch('http://w/v1/sessions', {
    method: 'POST',
    headers: auth,
    body: '{nope',
  });
  expect(bad.status).toBe(400);
  expect(bad.headers.get('content-type')).toBe('application/problem+json');
  // Half an emoji's surrogate pair (workerd's String.prototype.isWellFormed finds it); the pair is text.
  for (const [task, status] of [
    ['cut \\ud83d', 400],
    ['whole \\ud83d\\ude00', 201],
  ] as const) {
    const sent = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: `{"task":"${task}"}`,
    });
    expect(sent.status).toBe(status);
  }
  const wrong = await mf.dispatchFetch('http://w/v1/sessions', {
    headers: { authorization: 'Bearer wrong' },
  });
  expect(wrong.status).toBe(401);
  expect(wrong.headers.get('www-authenticate')).toBe(
    'Bearer realm="satchel", error="invalid_token"',
  );
  // The API description, without a token: the document the build made, the same as the Node server's.
  const doc = await mf.dispatchFetch('http://w/openapi.json');
  expect(doc.status).toBe(200);
  expect(await doc.json()).toEqual(apiDocument());
  const page = await mf.dispatchFetch('http://w/docs');
  expect(page.status).toBe(200);
  expect(await page.text()).toBe(docsPage(apiDocument()));
  return session.id;
}

describe('the R2 + S3 Workers bundle under miniflare', () => {
  it('answers against the R2 binding', async () => {
    const mf = start(withS3, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const id = await exercise(mf, /^r2:/);
    const bucket = await mf.getR2Bucket('BUCKET');
    expect(await bucket.head(`ns/edge/sessions/${id}.json`)).not.toBeNull();
  });

  it('answers against radosgw through the S3 adapter', async () => {
    await exercise(start(withS3, s3Bindings(), false), /^s3:/);
  });

  it('without SATCHEL_TOKENS (wrangler dev without .dev.vars) every /v1 route but health is 401 saying so', async () => {
    const mf = start(withS3, {});
    for (const init of [{}, { headers: { authorization: 'Bearer tok_anything' } }]) {
      const res = await mf.dispatchFetch('http://w/v1/sessions', init);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /^no SATCHEL_TOKENS is configured .*\.dev\.vars.*SATCHEL_TOKENS="alice\/laptop=tok_1"/,
      );
    }
    expect((await mf.dispatchFetch('http://w/v1/health')).status).toBe(200);
  });

  it('logs one access line per request, with the route pattern and the device, never the token', async () => {
    workerd.clear();
    const mf = start(withS3, {
      SATCHEL_TOKENS: 'edge/worker=tok_worker_logged',
      SATCHEL_LOG: 'json',
    });
    const res = await mf.dispatchFetch(
      'http://w/v1/sessions/20260101-00000000000000000000000000000000',
      {
        headers: { authorization: 'Bearer tok_worker_logged' },
      },
    );
    expect(res.status).toBe(404);
    await expect.poll(() => workerd.find('request').length).toBeGreaterThan(0);
    expect(workerd.find('request')[0]).toMatchObject({
      method: 'GET',
      route: '/v1/sessions/:id',
      status: 404,
      namespace: 'edge',
      device: 'worker',
    });
    expect(JSON.stringify(workerd.records)).not.toMatch(/tok_worker_logged|20260101-0000/);
  });

  it('is under 250 KB gzip', () => {
    expect(bundleSize(withS3).gzip).toBeLessThan(250_000);
    expect(readFileSync(withS3, 'utf8')).toContain('x-amz-content-sha256');
  });
});

describe('the R2 + S3 Workers bundle, storage unreachable', () => {
  it('answers 503 problem+json with Retry-After, not 500 (review: workerd throws "Network connection lost.")', async () => {
    // A port nothing listens on: workerd's fetch fails with a plain Error, no status, no code.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const mf = start(withS3, { ...s3Bindings(), S3_ENDPOINT: `http://127.0.0.1:${closed}` }, false);
    const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
    for (const [path, init] of [
      ['http://w/v1/sessions/abc', { headers: auth }],
      [
        'http://w/v1/sessions',
        { method: 'POST', headers: auth, body: JSON.stringify({ task: 't' }) },
      ],
      ['http://w/v1/sessions', { headers: auth }],
    ] as const) {
      const res = await mf.dispatchFetch(path, init);
      const text = await res.text();
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({
        path,
        status: 503,
        type: 'application/problem+json',
      });
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(text).not.toContain(s3Bindings().AWS_SECRET_ACCESS_KEY);
    }
  });
});

describe('the R2-only Workers bundle under miniflare', () => {
  it('answers against the R2 binding', async () => {
    const mf = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const id = await exercise(mf, /^r2:/);
    expect(
      await (await mf.getR2Bucket('BUCKET')).head(`ns/edge/sessions/${id}.json`),
    ).not.toBeNull();
  });

  it('reads vars wrangler passes as numbers or JSON; the R2 binding is not one (review)', async () => {
    // `SATCHEL_MAX_BODY_BYTES = 2048` and `SATCHEL_HOOKS = { ... }` in [vars] reach the Worker as a number
    // and an object: they were dropped, and the defaults used (a 64 MiB body limit, no hooks).
    const mf = start(r2Only, {
      SATCHEL_TOKENS: 'edge/worker=tok_worker',
      SATCHEL_MAX_BODY_BYTES: 2048,
      SATCHEL_HOOKS: { gh: { secret: 's3cret-hook-value', namespace: 'edge', session: 'new' } },
      SATCHEL_REDACT_VALUES: ['edge-secret-4815162342'],
      S3_FORCE_PATH_STYLE: true, // read only with SATCHEL_STORAGE=s3; a boolean var is text too
    });
    const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
    const big = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: 'x'.repeat(4000) }),
    });
    expect(big.status).toBe(413);
    const hook = await mf.dispatchFetch('http://w/v1/hooks/gh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(hook.status).toBe(401); // the hook exists: an unsigned delivery
    const created = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: 'key edge-secret-4815162342 here' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const stored = await mf.dispatchFetch(`http://w/v1/sessions/${id}`, { headers: auth });
    expect(await stored.text()).not.toContain('edge-secret-4815162342');
    expect(
      await (await mf.getR2Bucket('BUCKET')).head(`ns/edge/sessions/${id}.json`),
    ).not.toBeNull();
  });

  it('keeps a large session as base and delta in R2: appends, GET whole, delete leaves nothing', async () => {
    const mf = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
    const text = (i: number) => `m${i} ${'z'.repeat(1000)}`;
    const messages = Array.from({ length: 300 }, (_, i) => ({ role: 'user', content: text(i) }));
    const created = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ task: 'large at the edge', messages }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    for (let i = 0; i < 3; i++) {
      const res = await mf.dispatchFetch(`http://w/v1/sessions/${id}/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ messages: [{ role: 'user', content: `a${i}` }] }),
      });
      expect(res.status).toBe(200);
    }
    const bucket = await mf.getR2Bucket('BUCKET');
    const stored = await (await bucket.get(`ns/edge/sessions/${id}.json`))!.text();
    expect(stored.startsWith('{"satchel_parts":{"dir":')).toBe(true); // a delta on a base, not the whole session
    expect((await bucket.list({ prefix: `ns/edge/b/${id}/` })).objects).toHaveLength(1);
    const got = await mf.dispatchFetch(`http://w/v1/sessions/${id}`, { headers: auth });
    expect(got.status).toBe(200);
    const body = (await got.json()) as { messages: { content: string }[]; revision: number };
    expect(body.revision).toBe(4);
    expect(body.messages.map((m) => m.content)).toEqual([
      ...messages.map((m) => m.content),
      'a0',
      'a1',
      'a2',
    ]);
    const deleted = await mf.dispatchFetch(`http://w/v1/sessions/${id}`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(deleted.status).toBe(204);
    expect((await bucket.list({ prefix: `ns/edge/b/${id}/` })).objects).toEqual([]);
    expect(await bucket.get(`ns/edge/sessions/${id}.json`)).toBeNull();
  });

  it("continues with a model: a repeat is answered from the turn's record, without the reply once it is popped", async () => {
    const chat = await startChatServer({ reply: 'the edge reply' });
    try {
      const mf = start(r2Only, {
        SATCHEL_TOKENS: 'edge/worker=tok_worker',
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
      });
      const auth = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
      const created = await mf.dispatchFetch('http://w/v1/sessions', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ task: 't', messages: [{ role: 'system', content: 'sys' }] }),
      });
      const { id } = (await created.json()) as { id: string };
      const ask = async () => {
        const res = await mf.dispatchFetch(`http://w/v1/sessions/${id}/continue`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': 'edge-1' },
          body: JSON.stringify({ message: 'hello' }),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const first = await ask();
      expect(first).toMatchObject({
        status: 200,
        body: { model_turn: true, reply: 'the edge reply', revision: 3 },
      });
      expect(await ask()).toEqual(first);
      const pop = await mf.dispatchFetch(`http://w/v1/sessions/${id}/pop`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ count: 1 }),
      });
      expect(pop.status).toBe(200);
      const { reply: _, ...receipt } = first.body;
      expect(await ask()).toEqual({ status: 200, body: receipt });
      expect(chat.requests).toHaveLength(1);
      const bucket = await mf.getR2Bucket('BUCKET');
      const stored = await (await bucket.get(`ns/edge/sessions/${id}.json`))!.text();
      expect(stored).not.toContain('the edge reply');
    } finally {
      await chat.close();
    }
  });

  it('serves the session browser as the source renders it (the build compacts its templates)', async () => {
    const mf = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const versions = (html: string) => html.replace(/\?v=[^"]+/g, '?v=');
    const assets = { script: '/ui/app.js?v=', style: '/ui/app.css?v=' };
    for (const [path, view] of [
      ['/ui', 'list'],
      ['/ui/sessions/x', 'session'],
    ] as const) {
      const res = await mf.dispatchFetch(`http://w${path}`);
      expect(res.status).toBe(200);
      expect(versions(await res.text())).toBe(renderPage(view, assets));
    }
    // The stylesheet on one line: the same rules, only the line breaks and indentation gone.
    const css = await (await mf.dispatchFetch('http://w/ui/app.css')).text();
    expect(css).not.toContain('\n');
    const rules = (s: string) =>
      s
        .replace(/\s+/g, ' ')
        .replace(/\s*([;{}])\s*/g, '$1')
        .trim();
    expect(css).toBe(rules(STYLE));
    // The script and stylesheet are Workers static assets the build writes beside the bundle, not in its
    // code: the page script's text is not in the bundle (it was about 9 KB of its gzip size).
    const assetsDir = join(dirname(r2Only), 'assets', 'ui');
    const js = await (await mf.dispatchFetch('http://w/ui/app.js')).text();
    expect(js).toBe(readFileSync(join(assetsDir, 'app.js'), 'utf8'));
    expect(css).toBe(readFileSync(join(assetsDir, 'app.css'), 'utf8'));
    expect(js).toContain('Live updates paused');
    expect(readFileSync(r2Only, 'utf8')).not.toContain('Live updates paused');
    // The pages name the assets' current versions.
    const page = await (await mf.dispatchFetch('http://w/ui')).text();
    expect(page).toMatch(/src="\.\/ui\/app\.js\?v=[0-9a-f]{8}"/);
  });

  it('serves the OpenAPI document and /docs as static assets, without their generators in its code', async () => {
    // The build writes them beside the bundle (checked against the Node server's in `exercise` above).
    const dir = join(dirname(r2Only), 'assets');
    expect(JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'))).toEqual(apiDocument());
    expect(readFileSync(join(dir, 'docs.html'), 'utf8')).toBe(docsPage(apiDocument()));
    const code = readFileSync(r2Only, 'utf8');
    // The document's description and the page's markup are in the assets only.
    expect(code).not.toContain(apiDocument().info.description.slice(0, 40));
    expect(code).not.toContain('<nav><h2>Operations');
    expect(docsPage(apiDocument())).toContain('<nav><h2>Operations');
    // A Worker deployed without its assets says so, and still answers the methods these paths refuse.
    const bare = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' }, true, false);
    for (const path of ['/openapi.json', '/docs', '/ui', '/ui/sessions/x']) {
      const res = await bare.dispatchFetch(`http://w${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(((await res.json()) as { detail: string }).detail).toMatch(/static assets/);
      const post = await bare.dispatchFetch(`http://w${path}`, { method: 'POST' });
      expect(post.status).toBe(405);
    }
    const withAssets = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    expect(
      (await withAssets.dispatchFetch('http://w/openapi.json', { method: 'POST' })).status,
    ).toBe(405);
    const docs = await withAssets.dispatchFetch('http://w/docs');
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('leaves out only Hono helpers the app never calls (app.mount, c.req.parseBody)', () => {
    // scripts/build.ts replaces them with stubs that throw; a use of either must bring them back.
    const sources = ['lib', 'functions'].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.tsx?$/.test(f))
        .map((f) => join(dir, f)),
    );
    expect(sources.length).toBeGreaterThan(50);
    for (const file of sources)
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/\.mount\(|parseBody\b/);
    expect(readFileSync(r2Only, 'utf8')).toContain('parseBody is not in this bundle');
  });

  it("leaves out zod's JSON Schema converter, which only the OpenAPI document's schemas (made by the build) need", () => {
    // scripts/build.ts replaces it with stubs that throw; a call elsewhere must bring it back.
    expect(readFileSync(r2Only, 'utf8')).toContain('JSON Schema is not in this bundle');
    expect(readFileSync(r2Only, 'utf8')).not.toContain('cannot be represented in JSON Schema');
    const sources = ['lib', 'functions'].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('openapi-json.ts'))
        .map((f) => readFileSync(join(dir, f), 'utf8')),
    );
    expect(sources.length).toBeGreaterThan(50);
    for (const source of sources) expect(source).not.toMatch(/JSONSchema|jsonSchema|~standard/);
    expect(readFileSync('lib/http/openapi-json.ts', 'utf8')).toMatch(/z\.toJSONSchema\(/);
  });

  it("makes zod's getters of a schema's bounds throw there, not answer null (review)", async () => {
    // They read the checks through the converter's module; a stub that answered would mislead.
    const out = await build({
      stdin: {
        contents:
          "import * as z from 'zod'; const s = z.string().min(2); const n = z.number().max(9);" +
          'const tries = [() => s.minLength, () => n.maxValue, () => z.toJSONSchema(s)];' +
          'export default tries.map((f) => { try { return f(); } catch (e) { return e.message; } });',
        resolveDir: process.cwd(),
        loader: 'js',
      },
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      write: false,
      plugins: [edgeReference],
    });
    const code = Buffer.from(out.outputFiles[0]!.text).toString('base64');
    const mod = (await import(`data:text/javascript;base64,${code}`)) as { default: unknown[] };
    expect(mod.default).toEqual(Array(3).fill('JSON Schema is not in this bundle'));
  });

  it("leaves out zod's object compiler, its memoizer for cyclic input and uncalled methods; zod validates without them", async () => {
    // scripts/build.ts replaces the compiler with a stub that throws: a Worker that reached it would
    // answer 500.
    expect(readFileSync(r2Only, 'utf8')).toContain('zod JIT is not in this bundle');
    // The memoizer follows cycles in parsed input: JSON has none, and no schema of lib/ is recursive.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('ZodCyclicError');
    const sources = readdirSync('lib', { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join('lib', f), 'utf8'));
    for (const source of sources) expect(source).not.toMatch(/\bz\.lazy\(/);
    // Uncalled schema methods are left out, and the classes only they make: `.and()`'s intersection.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('ZodIntersection');
    for (const source of sources) expect(source).not.toMatch(/\.and\(/);
    const mf = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const headers = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
    const bad = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'zod-jit', messages: [{ role: 'nobody', content: 1 }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors?: unknown[] }).errors?.length).toBeGreaterThan(0);
    const good = await mf.dispatchFetch('http://w/v1/sessions', {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: 'zod-jit',
        task: 'jit',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(good.status).toBe(201);
  });

  it('redacts inline text files (UTF-8, UTF-16, Latin-1, base64url, wrapped) and checks dates in workerd', async () => {
    // The Worker bundles leave out zod's patterns for formats lib/ does not name (scripts/build.ts): the
    // one it names, `z.iso.datetime` (a ref's created_at), still validates.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('25[0-5]'); // zod's IPv4 pattern
    const mf = start(r2Only, { SATCHEL_TOKENS: 'edge/worker=tok_worker' });
    const headers = { authorization: 'Bearer tok_worker', 'content-type': 'application/json' };
    const token = 'ghp_' + 'Zq8xW3vN5'.repeat(4);
    const env = `# Paramètres\nGITHUB_TOKEN=${token}\n`;
    const files = [
      Buffer.from(env).toString('base64url'),
      'data:text/plain;base64,' + Buffer.from('\ufeff' + env, 'utf16le').toString('base64'),
      'DATA:text/plain; charset=latin1;base64,' + Buffer.from(env, 'latin1').toString('base64'),
      'data:text/plain;base64,' + Buffer.from(env).toString('base64').replace(/.{8}/g, '$&\r\n'),
    ];
    const ref = (created_at: string) => [{ kind: 'file', uri: 'file:///a', created_at }];
    const post = (external_refs: unknown) =>
      mf.dispatchFetch('http://w/v1/sessions', {
        method: 'POST',
        headers,
        body: JSON.stringify({
          task: 'env',
          external_refs,
          messages: [
            {
              role: 'user',
              content: files.map((file_data) => ({ type: 'file', file: { file_data } })),
            },
          ],
        }),
      });
    expect((await post(ref('yesterday'))).status).toBe(400);
    const made = await post(ref('2026-12-04T10:00:00Z'));
    expect(made.status).toBe(201);
    expect(made.headers.get('satchel-redactions')).toBe('4');
    const { id } = (await made.json()) as { id: string };
    const stored = await (await mf.getR2Bucket('BUCKET')).get(`ns/edge/sessions/${id}.json`);
    const session = JSON.parse(await stored!.text()) as {
      messages: { content_parts: { file: { file_data: string } }[] }[];
    };
    const [web, wide, latin, wrapped] = session.messages[0]!.content_parts.map(
      (p) => p.file.file_data,
    );
    const body = (url: string) => Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
    expect(Buffer.from(web!, 'base64url').toString()).toBe(
      '# Paramètres\nGITHUB_TOKEN=[REDACTED]\n',
    );
    expect(body(wide!).toString('utf16le')).toBe('\ufeff# Paramètres\nGITHUB_TOKEN=[REDACTED]\n');
    expect(body(latin!).toString('latin1')).toBe('# Paramètres\nGITHUB_TOKEN=[REDACTED]\n');
    expect(body(wrapped!).toString()).toBe('# Paramètres\nGITHUB_TOKEN=[REDACTED]\n');
  });

  it('holds no S3 client, is under 120 KB gzip, and refuses SATCHEL_STORAGE=s3', async () => {
    // A SigV4 signing constant: only the AWS SDK carries it.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('x-amz-content-sha256');
    // Nor the reading of the S3 settings (lib/server/config.ts, s3Config), which only the S3 store needs.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('S3_ENDPOINT must be an http(s) URL');
    expect(readFileSync(withS3, 'utf8')).toContain('S3_ENDPOINT must be an http(s) URL');
    // Nor the routes' OpenAPI prose (scripts/build.ts, edgeSpecProse): the document is a static asset.
    expect(readFileSync(r2Only, 'utf8')).not.toContain('List session metadata, newest first');
    expect(readFileSync(r2Only, 'utf8')).not.toContain('No webhook with this name.'); // problem(…)'s text
    expect(bundleSize(r2Only).gzip).toBeLessThan(120_000);
    const mf = start(r2Only, s3Bindings(), false);
    const res = await mf.dispatchFetch('http://w/v1/health');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /not configured: SATCHEL_STORAGE=s3 needs the R2\+S3 bundle/,
    );
  });
});
