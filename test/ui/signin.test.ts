import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { createNodeServer } from '../../lib/http/node-server.js';
import { loadConfig } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { captureLogs } from '../support/logs.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, signIn } from './browser.js';

// Sign-in in Chromium against a real server on the local store: after a 401, with a token the browser
// cannot send, and on a server that has no tokens (the Worker and Lambda mode, where open mode is off).
const TOKEN = 'tok_ui_signin_0123456789';
const NEXT = 'tok_ui_signin_NEXT_secret_987654';

let browser: Browser;
let server: RunningServer;

/** A real app with no SATCHEL_TOKENS and open mode not allowed, as a Worker runs it: every call is 401. */
async function startClosedServer() {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-ui-closed-'));
  const config = await loadConfig({}, 'local');
  const { app, background } = createApp({
    config,
    objects: new LocalStore(dir),
    allowOpen: false,
    log: captureLogs(),
  });
  const srv = createNodeServer(app.fetch, '127.0.0.1');
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: async () => {
      srv.closeAllConnections();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
      await background.drain();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `alice/laptop=${TOKEN},alice/phone=${NEXT}` },
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('session browser: signing in again and sign-in errors', () => {
  it('after a 401 the form signs in again: the token never reaches the URL, the stale one is forgotten', async () => {
    const created = await apiClient(server.url, TOKEN)('POST', '/v1/sessions', {
      task: 'token rotated',
      messages: [{ role: 'user', content: 'hello before the rotation' }],
    });
    const id = created.json.id as string;
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, TOKEN);
    await page.waitForSelector('#messages li', { visible: true });
    // The token stops being accepted (rotated on the server): the next call is 401.
    await page.evaluate(() => sessionStorage.setItem('satchel.token', 'tok_rotated_away'));
    await page.click('#reload');
    await page.waitForSelector('#signin', { visible: true });
    expect(await page.$eval('#signin-error', (e) => e.textContent)).toContain('no longer accepted');
    expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBeNull();
    await page.evaluate(() => ((window as unknown as { same: boolean }).same = true));
    await page.type('#token', NEXT);
    await page.keyboard.press('Enter');
    // A native submit would navigate (to ?token=… for a GET form): no wait for a hidden form then.
    await page.waitForSelector('#signin', { hidden: true, timeout: 5_000 }).catch(() => undefined);
    expect(page.url()).not.toContain(NEXT);
    expect(page.url()).toBe(`${server.url}/ui/sessions/${id}`);
    await page.waitForSelector('#messages li', { visible: true });
    expect(await page.evaluate(() => (window as unknown as { same?: boolean }).same)).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBe(NEXT);
    expect(await page.$eval('#who', (e) => e.textContent)).toContain('Signed in');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a token the browser cannot send (a pasted curly quote) is not kept, and the form says why', async () => {
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await page.waitForSelector('#signin', { visible: true });
    await page.type('#token', `${TOKEN}’`); // copied from a document, with a typographic quote
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        document.getElementById('signin-error')!.textContent ||
        document.getElementById('who')!.textContent !== 'Not signed in',
      { timeout: 5_000 },
    );
    const state = await page.evaluate(() => ({
      signinShown: !document.getElementById('signin')!.hidden,
      stored: sessionStorage.getItem('satchel.token'),
      who: document.getElementById('who')!.textContent,
      signinError: document.getElementById('signin-error')!.textContent,
    }));
    expect(state.stored).toBeNull();
    expect(state.signinShown).toBe(true);
    expect(state.who).toBe('Not signed in');
    expect(state.signinError).toContain('cannot be sent');
    // The same token as plain text signs in.
    await page.$eval('#token', (el) => ((el as HTMLInputElement).value = ''));
    await signIn(page, TOKEN);
    expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBe(TOKEN);
    await page.close();
  });

  it('a server with no tokens configured says so on the sign-in form', async () => {
    const closed = await startClosedServer();
    const { page } = await openPage(browser);
    try {
      await page.goto(`${closed.url}/ui`);
      await page.waitForSelector('#signin', { visible: true });
      await page.type('#token', 'any-token-at-all');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.getElementById('signin-error')!.textContent);
      const text = await page.$eval('#signin-error', (e) => (e as HTMLElement).innerText);
      expect(text).toContain('not accepted');
      expect(text).toContain('no SATCHEL_TOKENS is configured on this server');
      expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBeNull();
    } finally {
      await page.close();
      await closed.close();
    }
  });
});
