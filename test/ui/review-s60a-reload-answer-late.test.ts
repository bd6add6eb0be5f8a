// Review s60a, finding 4: a load showed whichever answer arrived last, not the one asked for last. A
// Reload answered late (a large session, a slow link), overtaken by an Append and its own load, put
// revision 1 back on screen after "Appended: now at revision 2": the appended message vanished, and the
// page's If-Match went back to "1", so the next write was refused as stale. The list's pager did the same
// (Older, then Newer: the slower answer won). A slow link is simulated by request interception.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, delayOnce, openPage, signIn } from './browser.js';

const TOK = 'tok_s60a_late_0123456789';
const LIST = 'tok_s60a_latelist_0123456789';
const ui = browserAndServer(`ns=${TOK},list=${LIST}`);

describe('a load answered after a later one (review s60a)', () => {
  it('a late Reload does not replace the newer revision on screen', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const made = await api('POST', '/v1/sessions', {
      id: 'late',
      task: 'late answers',
      messages: [{ role: 'user', content: 'first' }],
    });
    expect(made.status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui/sessions/late`);
      await signIn(page, TOK);
      await page.waitForSelector('#actions', { visible: true });
      await delayOnce(page, (r) => r.method() === 'GET' && r.url().endsWith('/v1/sessions/late'));
      await page.click('#reload');
      await new Promise((r) => setTimeout(r, 100));
      await page.type('#append-text', 'second, appended while the Reload was on its way');
      await page.click('#append-btn');
      await page.waitForFunction(() =>
        document.getElementById('action-msg')!.textContent!.startsWith('Appended'),
      );
      await new Promise((r) => setTimeout(r, 2500)); // the Reload's answer has landed
      const state = await page.evaluate(() => ({
        revision: Array.from(document.querySelectorAll('#facts dt')).find(
          (d) => d.textContent === 'Revision',
        )?.nextElementSibling?.textContent,
        transcript: document.getElementById('messages')!.textContent,
      }));
      // Before its fix: revision 1, the appended message gone.
      expect(state.revision).toBe('2');
      expect(state.transcript).toContain('second, appended');
      // The next append carries the If-Match of revision 2: not refused as stale.
      await page.type('#append-text', 'third');
      await page.click('#append-btn');
      await page.waitForFunction(() =>
        document.getElementById('action-msg')!.textContent!.includes('revision 3'),
      );
      expect((await api('GET', '/v1/sessions/late')).json.revision).toBe(3);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Older answered late, after Newer: the list shows the page asked for last', async () => {
    const api = apiClient(ui.srv.url, LIST);
    for (const id of ['s1', 's2', 's3']) {
      expect((await api('POST', '/v1/sessions', { id, task: id })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 15));
    }
    const { page, errors } = await openPage(ui.browser);
    const label = () => page.$eval('#page-label', (e) => e.textContent);
    const rowIds = () =>
      page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
    try {
      await page.goto(`${ui.srv.url}/ui?limit=1&poll=60000`);
      await signIn(page, LIST);
      await page.waitForSelector('#rows tr');
      await page.click('#next');
      await page.waitForFunction(
        () => document.getElementById('page-label')!.textContent === 'Page 2',
      );
      // Older again (page 3) on a slow link, then Newer (page 1) at once.
      await delayOnce(page, (r) => r.method() === 'GET' && r.url().includes('cursor='));
      await page.click('#next');
      await new Promise((r) => setTimeout(r, 100));
      await page.click('#prev');
      await page.waitForFunction(
        () => document.getElementById('page-label')!.textContent === 'Page 1',
      );
      await new Promise((r) => setTimeout(r, 2000)); // page 3's answer has landed
      // Before its fix: "Page 3", showing s1.
      expect(await label()).toBe('Page 1');
      expect(await rowIds()).toEqual(['s3']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
