// Review s58d (session browser): the live list's account of what changed must be true. Before the fixes:
// two sessions updated within one millisecond were announced as "changed just now" on every poll
// forever; a session created long before, written to while off page 1, came in badged "new"; and after a
// 503 on the first page, every session already there came in as "new". Chromium against a real Satchel
// server on a local folder, one namespace (token) per test so that each list holds its own sessions.
import type { Browser, HTTPRequest } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fmtBytes } from '../../lib/ui/client.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, signIn } from './browser.js';

const T = {
  micro: 'tok_s58d_micro_0123456789',
  badge: 'tok_s58d_badge_0123456789',
  list503: 'tok_s58d_list503_0123456789',
};
let browser: Browser;
let srv: RunningServer;
beforeAll(async () => {
  browser = await launchBrowser();
  srv = await startSatchelServer({
    env: { SATCHEL_TOKENS: `micro=${T.micro},badge=${T.badge},list503=${T.list503}` },
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

/**
 * Answers the first authorised GET whose URL passes `matches` with a 503, as the server does when storage
 * is unreachable.
 */
function refuseOnce(matches: (url: string) => boolean): (r: HTTPRequest) => void {
  let refused = false;
  return (r) => {
    const authorised = Boolean(r.headers()['authorization']);
    if (refused || !authorised || r.method() !== 'GET' || !matches(r.url()))
      return void r.continue();
    refused = true;
    void r.respond({
      status: 503,
      headers: { 'retry-after': '1' },
      contentType: 'application/problem+json',
      body: JSON.stringify({
        type: 'https://satchel.dev/problems/503',
        title: 'Service Unavailable',
        status: 503,
        detail: 'storage is unreachable',
      }),
    });
  };
}

describe('the live list (review s58d)', () => {
  it('moves past two sessions updated within one millisecond: shown once, then no more changes', async () => {
    const api = apiClient(srv.url, T.micro);
    const { page } = await openPage(browser);
    // The answers to the live loop's updated_after polls, in order.
    const polls: number[] = [];
    page.on('response', async (res) => {
      if (!res.url().includes('updated_after=') || res.request().method() !== 'GET') return;
      const body = (await res.json().catch(() => ({}))) as { sessions?: unknown[] };
      polls.push(body.sessions?.length ?? 0);
    });
    await page.goto(`${srv.url}/ui?poll=250`);
    await signIn(page, T.micro);
    await page.waitForSelector('#empty', { visible: true });
    // Imported (odek) sessions whose times are 500 µs apart, within one millisecond; the API keeps and
    // orders by the microseconds.
    for (const [id, at] of [
      ['odek-a', '2026-12-01T10:00:00.123400Z'],
      ['odek-b', '2026-12-01T10:00:00.123900Z'],
    ] as const) {
      const r = await api('POST', '/v1/sessions', {
        id,
        task: `imported ${id}`,
        created_at: at,
        updated_at: at,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.status).toBe(201);
      expect(r.json.updated_at).toBe(at);
    }
    await page.waitForFunction(() => document.querySelectorAll('#rows tr').length === 2, {
      timeout: 10_000,
    });
    // Both came in one poll (the first with updated_after, or the one before it); from there on nothing
    // changes. Before: updated_after stayed at .123400 (Date.parse's millisecond), so every poll brought
    // odek-b back and the page said "1 session changed just now." every 250 ms.
    await page.evaluate(() => void (document.getElementById('status')!.textContent = ''));
    const from = polls.length;
    await vi.waitFor(() => expect(polls.length).toBeGreaterThanOrEqual(from + 5), {
      timeout: 15_000,
      interval: 50,
    });
    // The first poll after the rows showed may have been sent before they did: the rest find nothing.
    expect(polls.slice(from + 1)).toEqual(polls.slice(from + 1).map(() => 0));
    expect(await page.$eval('#status', (e) => e.textContent)).toBe('');
    expect(await page.$$eval('#rows tr', (r) => r.map((e) => e.getAttribute('data-id')))).toEqual([
      'odek-b',
      'odek-a',
    ]);
    await page.close();
  });

  it('badges a session created before the page, written to while off page 1, "updated"', async () => {
    const api = apiClient(srv.url, T.badge);
    const old = await api('POST', '/v1/sessions', {
      id: 'old-one',
      task: 'created a month ago',
      created_at: '2026-11-01T09:00:00.000Z',
      updated_at: '2026-11-01T09:00:00.000Z',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(old.status).toBe(201);
    expect((await api('POST', '/v1/sessions', { id: 'newer-one', task: 'newer' })).status).toBe(
      201,
    );
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui?poll=300&limit=1`); // page 1 holds newer-one only
    await signIn(page, T.badge);
    await page.waitForSelector('#rows tr[data-id="newer-one"]', { visible: true });
    const appended = await api('POST', '/v1/sessions/old-one/messages', {
      messages: [{ role: 'user', content: 'more' }],
    });
    expect(appended.status).toBe(200);
    const badge = (id: string) =>
      page
        .waitForSelector(`#rows tr[data-id="${id}"] .badge.fresh`, { timeout: 10_000 })
        .then((b) => b!.evaluate((e) => e.textContent));
    // Before: "new" (no row of it was on screen), for a session created a month before.
    expect(await badge('old-one')).toBe('updated');
    // A session created now is new.
    expect((await api('POST', '/v1/sessions', { id: 'brand-new', task: 'new' })).status).toBe(201);
    expect(await badge('brand-new')).toBe('new');
    await page.close();
  });

  it('after a 503 on the first page, shows the sessions there as the list, not as new ones', async () => {
    const api = apiClient(srv.url, T.list503);
    for (const id of ['s1', 's2', 's3'])
      expect((await api('POST', '/v1/sessions', { id, task: `old ${id}` })).status).toBe(201);
    const { page } = await openPage(browser);
    await page.setRequestInterception(true);
    // The sign-in's own read of the first page gets the 503.
    page.on(
      'request',
      refuseOnce((url) => url.includes('/v1/sessions?')),
    );
    await page.goto(`${srv.url}/ui?poll=300`);
    await signIn(page, T.list503);
    await page.waitForFunction(() =>
      document.querySelector('#error')?.textContent?.includes('503'),
    );
    // Storage is back: the live loop reads the first page.
    await page.waitForFunction(() => document.querySelectorAll('#rows tr').length === 3, {
      timeout: 10_000,
    });
    const seen = await page.evaluate(() => ({
      badges: Array.from(document.querySelectorAll('#rows .badge.fresh')).map((b) => b.textContent),
      status: document.getElementById('status')!.textContent,
      error: document.getElementById('error')!.textContent,
    }));
    // Before: { badges: ['new', 'new', 'new'], status: '3 sessions changed just now.' }.
    expect(seen).toEqual({ badges: [], status: '', error: '' });
    // The list reads on from there: a session created now comes in new.
    expect((await api('POST', '/v1/sessions', { id: 's4', task: 'new s4' })).status).toBe(201);
    await page.waitForSelector('#rows tr[data-id="s4"] .badge.fresh', { timeout: 10_000 });
    expect(await page.$eval('#status', (e) => e.textContent)).toBe('1 session changed just now.');
    await page.close();
  });
});

describe('fmtBytes (review s58d nit)', () => {
  it('says 1.0 MB, not "1000.0 KB", for sizes that round to 1,000 KB', () => {
    expect([999_949, 999_950, 999_999, 1_000_000].map(fmtBytes)).toEqual([
      '999.9 KB',
      '1.0 MB',
      '1.0 MB',
      '1.0 MB',
    ]);
  });
});
