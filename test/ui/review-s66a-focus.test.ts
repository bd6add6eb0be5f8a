// Review s66a, finding 3, driven in Chromium: a write refused 403 (the token was made read-only since the
// page probed it) hid the write controls while the pressed button had keyboard focus, so focus fell to
// <body> and a keyboard user was sent back to the top of the page. The 404 branch moves it to the heading.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, openSessionPage } from './browser.js';

const TOK = 'tok_s66a_focus_0123456789';
let browser: Browser;
let srv: RunningServer;
beforeAll(async () => {
  browser = await launchBrowser();
  srv = await startSatchelServer({ env: { SATCHEL_TOKENS: `ns=${TOK}` } });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

/** The same server folder and port, started again with the token given as `scope`. */
const restart = async (scope: 'ro' | 'rw') => {
  const { port, dir } = srv;
  await srv.close(true);
  srv = await startSatchelServer({ port, dir, env: { SATCHEL_TOKENS: `ns=${TOK}:${scope}` } });
};

/** Where the page is after the refusal. */
const state = (page: Page) =>
  page.evaluate(() => ({
    msg: document.getElementById('action-msg')!.textContent,
    roNote: document.getElementById('ro-note')!.textContent,
    actionsHidden: document.getElementById('actions')!.hidden,
    focused: document.activeElement?.id || document.activeElement?.tagName,
  }));

const refused = {
  msg: 'This token is read-only: it cannot change sessions.',
  roNote: 'Read-only token: viewing only.',
  actionsHidden: true,
  focused: 'task', // before the fix: 'BODY'
};

describe('keyboard focus after a write refused 403 (review s66a)', () => {
  it('Append, pressed with the keyboard', async () => {
    await restart('rw');
    const api = apiClient(srv.url, TOK);
    await api('POST', '/v1/sessions', {
      id: 'f1',
      task: 'focus',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'f1', TOK);
      await restart('ro'); // the operator makes this token read-only
      await page.focus('#append-text');
      await page.keyboard.type('a note');
      await page.keyboard.press('Tab'); // to the Append button
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.getElementById('actions')!.hidden);
      expect(await state(page)).toEqual(refused);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Delete, confirmed with the keyboard', async () => {
    await restart('rw');
    const api = apiClient(srv.url, TOK);
    await api('POST', '/v1/sessions', {
      id: 'f2',
      task: 'focus',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'f2', TOK);
      await restart('ro');
      await page.focus('#delete-ask');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#delete-yes', { visible: true });
      await page.focus('#delete-yes');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.getElementById('actions')!.hidden);
      expect(await state(page)).toEqual(refused);
      expect((await api('GET', '/v1/sessions/f2')).status).toBe(200);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
