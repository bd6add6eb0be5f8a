// Review s58d: the session browser's script, stylesheet and icon carry the same security headers from
// every build. The Node server (and Lambda) send CSP, nosniff, no-referrer and DENY with them
// (test/ui/browser.test.ts "serves a strict CSP on every UI response"); the Worker serves them as Workers
// static assets, before the Worker runs, and until the build wrote the assets' `_headers` (which
// miniflare reads as Cloudflare does) they came with none of the four. The R2-only bundle, built as for
// deployment, in miniflare's workerd with its assets.
import { Miniflare } from 'miniflare';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_HEADERS } from '../../lib/http/docs.js';
import { UI_CSP } from '../../lib/ui/shell.js';
import { buildWorker } from '../../scripts/build.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

const TOKEN = 'tok_s58d_worker_0123456789';
let assets: string;
let mf: Miniflare;
let url: string;
let node: RunningServer;

beforeAll(async () => {
  const script = await buildWorker(
    join(mkdtempSync(join(tmpdir(), 'satchel-s58d-worker-')), 'worker-r2.js'),
    { s3: false },
  );
  assets = join(dirname(script), 'assets');
  mf = new Miniflare({
    scriptPath: script,
    modules: true,
    modulesRoot: dirname(script),
    compatibilityDate: '2026-04-01',
    assets: { directory: assets, binding: 'ASSETS', routerConfig: { has_user_worker: true } },
    r2Buckets: ['BUCKET'],
    bindings: { SATCHEL_TOKENS: `edge=${TOKEN}` },
    host: '127.0.0.1',
    port: 0,
  });
  url = (await mf.ready).origin;
  node = await startSatchelServer({ env: { SATCHEL_TOKENS: `edge=${TOKEN}` } });
}, 240_000);

afterAll(async () => {
  await mf?.dispose();
  await node?.close();
});

const HEADERS = [
  'content-security-policy',
  'x-content-type-options',
  'referrer-policy',
  'x-frame-options',
] as const;

/** The security headers of an asset, at the URL the list page names it by (with its version). */
async function headersOf(base: string, asset: string) {
  const html = await (await fetch(`${base}/ui`)).text();
  const named = html.match(
    new RegExp(`(?:href|src)="\\./(ui/${asset.replace('.', '\\.')}[^"]*)"`),
  )?.[1];
  expect(named, `the page names ${asset}`).toBeTruthy();
  const res = await fetch(`${base}/${named}`);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h)]));
}

describe('the Worker build serves the browser assets with the security headers (review s58d)', () => {
  for (const asset of ['app.js', 'app.css', 'app.svg']) {
    it(`/ui/${asset}: the same security headers as the Node server`, async () => {
      const fromNode = await headersOf(node.url, asset);
      expect(fromNode).toEqual({
        'content-security-policy': UI_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
      });
      // Before: all four null.
      expect(await headersOf(url, asset)).toEqual(fromNode);
    });
  }

  it('does not serve the _headers file itself, and the pages keep the headers the Worker sets', async () => {
    expect(readFileSync(join(assets, '_headers'), 'utf8')).toContain('/ui/*');
    const file = await fetch(`${url}/_headers`);
    await file.arrayBuffer();
    expect(file.status).not.toBe(200);
    const page = await fetch(`${url}/ui/sessions/x`);
    await page.arrayBuffer();
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP);
  });

  it('/docs: its own security headers, the same from the Node server and the Worker', async () => {
    // Before: none on either build (the page is static HTML with one inline stylesheet).
    const expected = Object.fromEntries(
      Object.entries(DOCS_HEADERS).map(([name, value]) => [name.toLowerCase(), value]),
    );
    for (const base of [node.url, url]) {
      const res = await fetch(`${base}/docs`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<style>');
      expect(Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h)])), base).toEqual(
        expected,
      );
    }
  });
});
