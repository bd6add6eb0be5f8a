// Review s64a, the sessions list, driven in Chromium: Back after signing out and in again with the same
// token rendered into the content the sign-out cleared (a blank page, "page is missing #empty"); a page
// kept while its token was refused came back as a sign-in form in a signed-in tab; a session from page 2
// written while the live loop re-read page 1 came in unbadged and was never announced; the note of an
// emptied older page stayed on page 1 after Newer; one poll that never answered stopped live updates for
// good, and the status line never said so.
import type { HTTPRequest, Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const T = {
  back: 'tok_s64a_back_0123456789',
  refused: 'tok_s64a_refused_0123456789',
  badge: 'tok_s64a_badge_0123456789',
  older: 'tok_s64a_older_0123456789',
  hang: 'tok_s64a_hang_0123456789',
};
const ui = browserAndServer(
  Object.entries(T)
    .map(([ns, tok]) => `${ns}=${tok}`)
    .join(','),
);

/** Records in the tab's session storage when a page comes back from the browser's cache (bfcache). */
async function noteRestores(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluateOnNewDocument(() => {
    window.addEventListener('pageshow', (ev) => {
      if (ev.persisted) sessionStorage.setItem('test.restored', '1');
    });
  });
  return () => page.evaluate(() => sessionStorage.getItem('test.restored') === '1');
}

/** The rows on screen as `id:badge` (`-` for none). */
function rowsOf(page: Page) {
  return page.$$eval('#rows tr', (trs) =>
    trs.map(
      (tr) =>
        `${tr.getAttribute('data-id')}:${tr.querySelector('.badge.fresh')?.textContent ?? '-'}`,
    ),
  );
}

describe('Back into a list page (review s64a)', () => {
  it('after signing out and in again with the same token shows the list', async () => {
    const api = apiClient(ui.srv.url, T.back);
    expect((await api('POST', '/v1/sessions', { id: 'keep-a', task: 'row a' })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      const restored = await noteRestores(page);
      await page.goto(`${ui.srv.url}/ui?poll=300`);
      await signIn(page, T.back);
      await page.waitForSelector('#rows tr[data-id="keep-a"]');
      await Promise.all([page.waitForNavigation(), page.click('#signout')]);
      await signIn(page, T.back); // the same token again
      await page.waitForSelector('#rows tr[data-id="keep-a"]');
      await page.goBack(); // the first list, from the browser's cache
      // Before the fix: no rows, no error text, and the page error "page is missing #empty".
      await page.waitForSelector('#rows tr[data-id="keep-a"]', { visible: true, timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 1000)); // a few polls
      expect(await restored()).toBe(true);
      expect(await page.$eval('#signin', (e) => (e as HTMLElement).hidden)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('kept while its token was refused, after signing in elsewhere with it, shows the list', async () => {
    const api = apiClient(ui.srv.url, T.refused);
    expect((await api('POST', '/v1/sessions', { id: 'keep-r', task: 'row r' })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      const restored = await noteRestores(page);
      await page.goto(`${ui.srv.url}/ui?poll=300`);
      await signIn(page, T.refused);
      await page.waitForSelector('#rows tr[data-id="keep-r"]');
      // The token stops being accepted for a while (a rotation undone): the next poll asks for a token.
      await page.evaluate(() =>
        sessionStorage.setItem('satchel.token', 'tok_s64a_not_accepted_01'),
      );
      await page.waitForSelector('#signin', { visible: true, timeout: 10_000 });
      await page.goto(`${ui.srv.url}/ui`);
      await signIn(page, T.refused);
      await page.waitForSelector('#rows tr[data-id="keep-r"]');
      await page.goBack();
      await new Promise((r) => setTimeout(r, 1500));
      expect(await restored()).toBe(true);
      // Before the fix: the sign-in form, in a tab signed in with an accepted token.
      const state = await page.evaluate(() => ({
        signin: !document.getElementById('signin')!.hidden,
        rows: Array.from(document.querySelectorAll('#rows tr')).map((r) =>
          r.getAttribute('data-id'),
        ),
      }));
      expect(state).toEqual({ signin: false, rows: ['keep-r'] });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('live list (review s64a)', () => {
  it('a session written (from page 2) while the page re-reads page 1 is badged updated', async () => {
    const api = apiClient(ui.srv.url, T.badge);
    for (const id of ['old', 'a', 'b']) {
      expect((await api('POST', '/v1/sessions', { id, task: id.toUpperCase() })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 20));
    }
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?poll=400&limit=2`);
      await signIn(page, T.badge);
      await page.waitForSelector('#rows tr[data-id="b"]'); // page 1: b, a (old is on page 2)
      let armed = false;
      await page.setRequestInterception(true);
      page.on('request', (req: HTTPRequest) => {
        if (armed && /\/v1\/sessions\?limit=2$/.test(req.url())) {
          armed = false;
          // Another agent appends to `old` just as the page re-reads page 1.
          void api('POST', '/v1/sessions/old/messages', {
            messages: [{ role: 'user', content: 'written while the page re-read page 1' }],
          }).then(() => req.continue());
        } else void req.continue();
      });
      armed = true;
      expect((await api('POST', '/v1/sessions', { id: 'c', task: 'C' })).status).toBe(201);
      await page.waitForSelector('#rows tr[data-id="old"]', { timeout: 10_000 });
      const status = await page.$eval('#status', (e) => e.textContent);
      await new Promise((r) => setTimeout(r, 2000)); // a few more polls
      // Before the fix: ['old:-', 'c:new'], the status counting no change, and no later poll said more.
      expect(await rowsOf(page)).toEqual(['old:updated', 'c:new']);
      expect(status).toBe(
        'The list was refreshed: 2 sessions changed, 1 session no longer on this page.',
      );
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a poll that never answers: the page says updates are paused, then goes on', async () => {
    const api = apiClient(ui.srv.url, T.hang);
    expect((await api('POST', '/v1/sessions', { id: 'first', task: 'first' })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?poll=300`);
      await signIn(page, T.hang);
      await page.waitForSelector('#rows tr[data-id="first"]');
      let polls = 0;
      await page.setRequestInterception(true);
      page.on('request', (req: HTTPRequest) => {
        // The first poll from here on is held for good: no answer, no error (a hung connection).
        if (/updated_after=/.test(req.url()) && polls++ === 0) return;
        void req.continue();
      });
      await new Promise((r) => setTimeout(r, 600)); // the held poll is sent
      expect((await api('POST', '/v1/sessions', { id: 'second', task: 'second' })).status).toBe(
        201,
      );
      // Before the fix: no other poll was ever sent, and the status line stayed empty.
      await page.waitForFunction(
        () => document.getElementById('status')!.textContent!.includes('Live updates paused'),
        { polling: 'mutation', timeout: 40_000 },
      );
      await page.waitForSelector('#rows tr[data-id="second"]', { timeout: 10_000 });
      expect(await rowsOf(page)).toEqual(['second:new', 'first:-']);
      expect(polls).toBeGreaterThan(1);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);
});

describe('paging (review s64a)', () => {
  it('Newer after Older onto an emptied page drops the note about it', async () => {
    const api = apiClient(ui.srv.url, T.older);
    for (const id of ['older', 'newer']) {
      expect((await api('POST', '/v1/sessions', { id, task: id })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 20));
    }
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?limit=1&poll=3600000`);
      await signIn(page, T.older);
      await page.waitForSelector('#rows tr[data-id="newer"]');
      expect((await api('DELETE', '/v1/sessions/older')).status).toBe(204);
      const label = (text: string) =>
        page.waitForFunction(
          (t) => document.getElementById('page-label')!.textContent === t,
          {},
          text,
        );
      await page.click('#next');
      await label('Page 2');
      expect(await page.$eval('#status', (e) => e.textContent)).toBe(
        'No older sessions: they were deleted since this list was read.',
      );
      await page.click('#prev');
      await label('Page 1');
      // Before the fix: page 1 listed `newer` under "No older sessions: they were deleted …".
      expect(await page.$eval('#status', (e) => e.textContent)).toBe('');
      expect(await rowsOf(page)).toEqual(['newer:-']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
