// Review s60a, finding 1: after "Delete permanently" the page goes to the list; Back brought the deleted
// session's page back from the back/forward cache as it was: transcript, write controls, the open "Delete
// permanently" confirmation and Download (of the deleted content). A second Back showed the list from
// before the delete, the deleted row in it. Chromium against a real Satchel server on a local folder.
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s60a_back_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

const rowIds = (page: Page) =>
  page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
const mark = (page: Page, name: string) =>
  page.evaluate((n) => ((window as unknown as Record<string, number>)[n] = 1), name);
const marked = (page: Page, name: string) =>
  page.evaluate((n) => (window as unknown as Record<string, number>)[n] === 1, name);

describe('Back after deleting a session in the page (review s60a)', () => {
  it('shows "Session not found" and nothing of it, then the list without its row', async () => {
    const api = apiClient(ui.srv.url, TOK);
    for (const [id, task] of [
      ['kept', 'stays'],
      ['gone', 'to be deleted'],
    ])
      expect(
        (
          await api('POST', '/v1/sessions', {
            id,
            task,
            messages: [{ role: 'user', content: `private words of ${task}` }],
          })
        ).status,
      ).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?limit=1&poll=60000`);
      await signIn(page, TOK);
      await page.waitForSelector('#rows tr a');
      expect(await rowIds(page)).toEqual(['gone']);
      await mark(page, 'listPage');
      await Promise.all([page.waitForNavigation(), page.click('#rows tr a')]);
      await page.waitForSelector('#actions', { visible: true });
      await mark(page, 'sessionPage');
      await page.click('#delete-ask');
      await Promise.all([page.waitForNavigation(), page.click('#delete-yes')]);
      await page.waitForFunction(() =>
        document.getElementById('status')!.textContent!.includes('Deleted session gone'),
      );
      expect((await api('GET', '/v1/sessions/gone')).status).toBe(404);

      await page.goBack();
      await page.waitForFunction(
        () => document.getElementById('task')!.textContent === 'Session not found',
        { timeout: 5000 },
      );
      const session = await page.evaluate(() => ({
        transcript: document.getElementById('messages')!.textContent,
        actions: !document.getElementById('actions')!.hidden,
        confirmOpen: !document.getElementById('delete-confirm')!.hidden,
        download: !document.getElementById('download')!.hidden,
      }));
      // The page came from the cache (refreshed in place, not reloaded).
      expect(await marked(page, 'sessionPage')).toBe(true);
      expect(session).toEqual({
        transcript: '',
        actions: false,
        confirmOpen: false,
        download: false,
      });

      await page.goBack();
      await page.waitForFunction(() => !document.querySelector('#rows tr[data-id="gone"]'), {
        timeout: 5000,
      });
      expect(await marked(page, 'listPage')).toBe(true);
      expect(await rowIds(page)).toEqual(['kept']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Back to the list from a session keeps the page it was on', async () => {
    const api = apiClient(ui.srv.url, TOK);
    for (const id of ['p1', 'p2'])
      expect((await api('POST', '/v1/sessions', { id, task: id })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?limit=1&poll=60000`);
      await signIn(page, TOK);
      await page.waitForSelector('#rows tr a');
      await page.click('#next');
      await page.waitForFunction(
        () => document.getElementById('page-label')!.textContent === 'Page 2',
      );
      const onPage2 = await rowIds(page);
      await Promise.all([page.waitForNavigation(), page.click('#rows tr a')]);
      await page.waitForSelector('#actions', { visible: true });
      await page.goBack();
      await new Promise((r) => setTimeout(r, 800));
      expect(await page.$eval('#page-label', (e) => e.textContent)).toBe('Page 2');
      expect(await rowIds(page)).toEqual(onPage2);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
