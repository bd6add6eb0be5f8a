import { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';
import { apiClient, launchBrowser, openPage, richSession, signIn, visibleText } from './browser.js';

// The session browser served by the R2-only Workers bundle, built as for deployment and run in miniflare's
// workerd with its static assets (the page's script, stylesheet and icon, which the build writes to
// `assets/` beside the bundle: a minified bundle's function text), in Chromium: a build step that broke
// them would show here and nowhere else (test/ui/browser.test.ts runs the sources).
const TOKEN = 'tok_ui_worker_0123456789';
let browser: Browser;
let mf: Miniflare;
let url: string;

beforeAll(async () => {
  const script = await buildWorker(
    join(mkdtempSync(join(tmpdir(), 'satchel-ui-worker-')), 'worker-r2.js'),
    { s3: false },
  );
  mf = new Miniflare({
    scriptPath: script,
    modules: true,
    modulesRoot: dirname(script),
    compatibilityDate: '2026-04-01',
    // The page's script, stylesheet and icon: Workers static assets, as wrangler.toml deploys them.
    assets: {
      directory: join(dirname(script), 'assets'),
      binding: 'ASSETS',
      routerConfig: { has_user_worker: true },
    },
    r2Buckets: ['BUCKET'],
    bindings: { SATCHEL_TOKENS: `edge=${TOKEN}` },
    host: '127.0.0.1',
    port: 0,
  });
  url = (await mf.ready).origin;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await mf?.dispose();
});

describe('the session browser from the Workers bundle', () => {
  it('signs in, lists a session and shows its transcript, without a script error', async () => {
    const api = apiClient(url, TOKEN);
    const created = await api('POST', '/v1/sessions', richSession('Served from the edge'));
    expect(created.status).toBe(201);
    const { page, errors, violations } = await openPage(browser);
    await page.goto(`${url}/ui`);
    await signIn(page, TOKEN);
    await page.waitForSelector('#rows tr', { visible: true });
    const ids = await page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(ids).toEqual([created.json.id]);
    expect(await visibleText(page, '#rows')).toContain('Served from the edge');
    await page.click(`#rows tr[data-id="${created.json.id}"] a`);
    await page.waitForSelector('.tool-call', { visible: true });
    expect(await visibleText(page, '#m2')).toContain('[REDACTED]');
    await page.waitForSelector('#audit li time');
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
  });
});
