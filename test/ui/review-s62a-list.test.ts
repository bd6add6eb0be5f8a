// Review s62a, the sessions list in a real Chromium (each case failed before its fix): Back to search
// results after a delete, sign-in again after a search answered 401, a huge ?poll=, a session created
// during the page-1 re-read, and Older onto a page emptied meanwhile.
import type { HTTPRequest, Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';
import { startSatchelServer } from '../support/satchel-server.js';

const T = {
  search: 'tok_s62a_search_0123456789',
  poll: 'tok_s62a_poll_0123456789',
  badge: 'tok_s62a_badge_0123456789',
  blank: 'tok_s62a_blank_0123456789',
};
const ui = browserAndServer(
  Object.entries(T)
    .map(([ns, tok]) => `${ns}=${tok}`)
    .join(','),
);
const hitIds = (page: Page) =>
  page.$$eval('#result-list li', (lis) => lis.map((li) => li.getAttribute('data-id')));
const heading = (page: Page) => page.$eval('#result-h', (e) => e.textContent);

describe('search results', () => {
  it('Back to them after deleting a session opened from them does not list it again', async () => {
    const api = apiClient(ui.srv.url, T.search);
    for (const id of ['keep1', 'gone1']) {
      const r = await api('POST', '/v1/sessions', {
        id,
        task: `zebra migration ${id}`,
        messages: [{ role: 'user', content: `zebra migration notes for ${id}` }],
      });
      expect(r.status).toBe(201);
    }
    await ui.srv.drain();
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?poll=60000`);
      await signIn(page, T.search);
      await page.waitForSelector('#rows tr a');
      await page.type('#q', 'zebra migration');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#result-list li[data-id="gone1"] a');
      await page.evaluate(() => ((window as any).listPage = 1));
      await Promise.all([
        page.waitForNavigation(),
        page.click('#result-list li[data-id="gone1"] a'),
      ]);
      await page.waitForSelector('#actions', { visible: true });
      await page.click('#delete-ask');
      await Promise.all([page.waitForNavigation(), page.click('#delete-yes')]);
      await page.waitForFunction(() =>
        document.getElementById('status')!.textContent!.includes('Deleted'),
      );
      await page.goBack(); // the session page: "Session not found"
      await page.waitForFunction(
        () => document.getElementById('task')!.textContent === 'Session not found',
      );
      await page.goBack(); // the list page with its search results, from the browser's cache
      await page
        .waitForFunction(
          () => /^1 result/.test(document.getElementById('result-h')!.textContent!),
          {
            timeout: 5_000,
          },
        )
        .catch(() => {});
      expect(await page.evaluate(() => (window as any).listPage)).toBe(1);
      // Before the fix: '2 results for “zebra migration”', ['gone1', 'keep1'].
      expect({ heading: await heading(page), results: await hitIds(page) }).toEqual({
        heading: '1 result for “zebra migration”',
        results: ['keep1'],
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('signing in again after a search answered 401 runs the search with the new token', async () => {
    const [OLD, NEW] = ['tok_s62a_old_0123456789', 'tok_s62a_new_0123456789'];
    let srv = await startSatchelServer({ env: { SATCHEL_TOKENS: `ns=${OLD}` } });
    const { port, dir } = srv;
    const { page, errors } = await openPage(ui.browser);
    try {
      const api = apiClient(srv.url, OLD);
      const body = {
        id: 'd1',
        task: 'deploy rollback notes',
        messages: [{ role: 'user', content: 'deploy' }],
      };
      expect((await api('POST', '/v1/sessions', body)).status).toBe(201);
      await srv.drain();
      await page.goto(`${srv.url}/ui?poll=60000`);
      await signIn(page, OLD);
      await page.waitForSelector('#rows tr', { visible: true });
      // The operator rotates the token (a restart with a new SATCHEL_TOKENS).
      await srv.close(true);
      srv = await startSatchelServer({ env: { SATCHEL_TOKENS: `ns=${NEW}` }, port, dir });
      await page.type('#q', 'deploy');
      await page.keyboard.press('Enter');
      await signIn(page, NEW);
      await page
        .waitForFunction(
          () => /^1 result/.test(document.getElementById('result-h')!.textContent!),
          {
            timeout: 5_000,
          },
        )
        .catch(() => {});
      // Before the fix: 'Sign in to search', no results, the list loaded into the hidden #list-wrap.
      expect({ heading: await heading(page), results: await hitIds(page) }).toEqual({
        heading: '1 result for “deploy”',
        results: ['d1'],
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('the live list', () => {
  it('?poll= past what setInterval takes (3e9, Infinity) does not poll continuously', async () => {
    for (const poll of ['3000000000', 'Infinity']) {
      const { page, errors } = await openPage(ui.browser);
      try {
        let polls = 0;
        page.on('request', (r) => void (r.url().includes('/v1/sessions?') && polls++));
        await page.goto(`${ui.srv.url}/ui?poll=${poll}`);
        await signIn(page, T.poll);
        await page.waitForSelector('#empty', { visible: true });
        const start = polls;
        await new Promise((r) => setTimeout(r, 1500));
        // Before the fix: about 300 GET /v1/sessions in 1.5 s (the delay wrapped to 0).
        expect(polls - start, `poll=${poll}`).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    }
  });

  it('badges a session created while the page re-reads page 1 "new"', async () => {
    const api = apiClient(ui.srv.url, T.badge);
    expect((await api('POST', '/v1/sessions', { id: 'a', task: 'A' })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?poll=400`);
      await signIn(page, T.badge);
      await page.waitForSelector('#rows tr[data-id="a"]');
      let armed = false;
      await page.setRequestInterception(true);
      page.on('request', (req: HTTPRequest) => {
        if (armed && /\/v1\/sessions\?limit=50$/.test(req.url())) {
          armed = false;
          // Another agent creates c between the poll's answer and its re-read of page 1.
          void api('POST', '/v1/sessions', { id: 'c', task: 'C' }).then(() => req.continue());
        } else void req.continue();
      });
      armed = true;
      expect((await api('POST', '/v1/sessions', { id: 'b', task: 'B' })).status).toBe(201);
      await page.waitForSelector('#rows tr[data-id="c"]', { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 1500)); // a few more polls
      const rows = await page.$$eval('#rows tr', (trs) =>
        trs.map(
          (tr) =>
            `${tr.getAttribute('data-id')}:${tr.querySelector('.badge.fresh')?.textContent ?? '-'}`,
        ),
      );
      // Before the fix: ['c:updated', 'b:new', 'a:-'] (the next poll announced c again, its row on screen).
      expect(rows).toEqual(['c:new', 'b:new', 'a:-']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('paging', () => {
  it('Older onto a page whose sessions were deleted meanwhile says so', async () => {
    const api = apiClient(ui.srv.url, T.blank);
    for (const id of ['older', 'newer'])
      expect((await api('POST', '/v1/sessions', { id, task: id })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?limit=1&poll=60000`);
      await signIn(page, T.blank);
      await page.waitForSelector('#rows tr[data-id="newer"]');
      expect((await api('DELETE', '/v1/sessions/older')).status).toBe(204);
      await page.click('#next');
      await page.waitForFunction(
        () => document.getElementById('page-label')!.textContent === 'Page 2',
      );
      const state = await page.evaluate(() => ({
        rows: document.querySelectorAll('#rows tr').length,
        status: document.getElementById('status')!.textContent,
        newer: !(document.getElementById('prev') as HTMLButtonElement).disabled,
        older: !(document.getElementById('next') as HTMLButtonElement).disabled,
      }));
      // Before the fix: status '' (a blank page with only the pager).
      expect(state).toEqual({
        rows: 0,
        status: 'No older sessions: they were deleted since this list was read.',
        newer: true,
        older: false,
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
