import type { Browser, HTTPRequest } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, signIn, visibleText } from './browser.js';

// Review s52c, the sessions list in Chromium against a real server on the local store:
// - two quick searches: the older one's answer, arriving last, was shown under the newer one's heading;
// - the live list's updated_after polling never dropped a session deleted elsewhere.
const T = { search: 'tok_ui_race_search_0123', gone: 'tok_ui_race_gone_0123' };
let browser: Browser;
let server: RunningServer;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: `search=${T.search},gone=${T.gone}` },
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session browser: answers that come late', () => {
  it('an older search answering after a newer one is not shown', async () => {
    const api = apiClient(server.url, T.search);
    const alpha = await api('POST', '/v1/sessions', {
      task: 'Alpha task',
      messages: [{ role: 'user', content: 'The glacier melted over the summer.' }],
    });
    const beta = await api('POST', '/v1/sessions', {
      task: 'Beta task',
      messages: [{ role: 'user', content: 'The volcano erupted in the night.' }],
    });
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await signIn(page, T.search);
    await page.waitForSelector('#rows tr', { visible: true });
    // The first search is held on its way for 1.5 s: its answer comes after the second's.
    let slowDone: Promise<void> | undefined;
    await page.setRequestInterception(true);
    page.on('request', (req: HTTPRequest) => {
      if (req.isInterceptResolutionHandled()) return;
      if (req.url().endsWith('/v1/session_search') && req.postData()?.includes('glacier')) {
        slowDone = sleep(1500).then(() => req.continue());
      } else void req.continue();
    });
    await page.type('#q', 'glacier');
    await page.keyboard.press('Enter');
    await page.$eval('#q', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#q', 'volcano');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      /for “volcano”/.test(document.querySelector('#result-h')?.textContent ?? ''),
    );
    await slowDone;
    await sleep(500); // the glacier answer has come by now
    expect(await visibleText(page, '#result-h')).toContain('1 result for “volcano”');
    const shown = await page.$$eval('#result-list li', (lis) =>
      lis.map((li) => li.getAttribute('data-id')),
    );
    expect(shown).toEqual([beta.json.id]);
    expect(shown).not.toContain(alpha.json.id);

    // Cleared while a search is on its way: the list stays, the late answer is dropped.
    await page.$eval('#q', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#q', 'glacier');
    await page.keyboard.press('Enter');
    await page.click('#clear-search');
    await slowDone;
    await sleep(500);
    expect(await page.$eval('#results', (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(await page.$eval('#result-h', (el) => el.textContent)).not.toMatch(/glacier/);
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);
});

describe('session browser: sessions deleted elsewhere', () => {
  it('leave the live list without a reload', async () => {
    const api = apiClient(server.url, T.gone);
    const ids: string[] = [];
    for (const task of ['kept older', 'deleted elsewhere', 'kept newer'])
      ids.push((await api('POST', '/v1/sessions', { task })).json.id as string);
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/ui?poll=250&limit=2`);
    await signIn(page, T.gone);
    const rowIds = () =>
      page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
    await page.waitForSelector('#rows tr', { visible: true });
    expect(await rowIds()).toEqual([ids[2], ids[1]]);
    await page.evaluate(() => ((window as unknown as { same: boolean }).same = true));
    expect((await api('DELETE', `/v1/sessions/${ids[1]}`)).status).toBe(204);
    // Every 12th poll reads page 1 again: 3 s at ?poll=250.
    await page.waitForFunction(
      (id) => !document.querySelector(`#rows tr[data-id="${id}"]`),
      { timeout: 10_000 },
      ids[1],
    );
    expect(await rowIds()).toEqual([ids[2], ids[0]]); // the next one moved up: the page keeps its size
    expect(await visibleText(page, '#status')).toContain('1 session no longer on this page');
    expect(await page.evaluate(() => (window as unknown as { same?: boolean }).same)).toBe(true);
    // The last ones go too: the list says it is empty.
    for (const id of [ids[0], ids[2]]) await api('DELETE', `/v1/sessions/${id}`);
    await page.waitForSelector('#empty', { visible: true, timeout: 10_000 });
    expect(await rowIds()).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);
});
