// Review s67g, driven in Chromium against a real server on a local folder. F1: signing in again on a page
// opened as /ui/sessions/latest checked the token with `latest` and showed that answer, another session once
// a newer one existed, and the draft typed for the first was appended to it. F2: a new Continue with the text
// of an earlier one whose answer was lost went under the old Idempotency-Key, was answered by the old turn's
// replay (nothing stored, no model run), and the page said "The model replied". Review s67k: the first fix
// kept the text in the box for a second press, which stored a plain retry of the lost answer twice; a
// replay now says that nothing new was stored, clears the box, and a message written again is new.
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, signIn } from './browser.js';

const TOKEN = 'tok_s67g_session_0123456789';
let browser: Browser;
let srv: RunningServer;
let chat: ChatServer;
beforeAll(async () => {
  browser = await launchBrowser();
  chat = await startChatServer();
  srv = await startSatchelServer({
    env: {
      SATCHEL_TOKENS: `s67g=${TOKEN}`,
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'chat-test',
    },
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
  await chat?.close();
});

const api = () => apiClient(srv.url, TOKEN);
const created = async (id: string, task: string, content: string) => {
  const r = await api()('POST', '/v1/sessions', {
    id,
    task,
    messages: [{ role: 'user', content }],
  });
  expect(r.status).toBe(201);
};
const userMessages = async (id: string): Promise<string[]> =>
  (await api()('GET', `/v1/sessions/${id}`)).json.messages
    .filter((m: { role: string }) => m.role === 'user')
    .map((m: { content: string }) => m.content);
const msg = (page: Page) => page.$eval('#action-msg', (e) => e.textContent ?? '');
/** The next word of the action line after `before` (not the "Running the turn…" placeholder). */
async function nextMessage(page: Page, before: string): Promise<string> {
  await page.waitForFunction(
    (b) => {
      const t = document.querySelector('#action-msg')?.textContent ?? '';
      return t !== b && t !== 'Running the turn…' && t !== '';
    },
    { timeout: 20_000 },
    before,
  );
  return msg(page);
}
const value = (page: Page, box: string) => page.$eval(box, (e) => (e as HTMLTextAreaElement).value);

describe('review s67g: the session page', () => {
  it('F1: signing in again on a page opened as /ui/sessions/latest stays on the session shown', async () => {
    await created('s67g-x', 'session X', 'x0');
    const { page, errors } = await openPage(browser);
    try {
      await page.goto(`${srv.url}/ui/sessions/latest`);
      await signIn(page, TOKEN);
      await page.waitForSelector('#actions', { visible: true });
      expect(await page.$eval('#task', (e) => e.textContent)).toBe('session X');
      expect(page.url()).toBe(`${srv.url}/ui/sessions/s67g-x`);
      // Another device creates a newer session; the user types for X while the token stops being accepted.
      await created('s67g-y', 'session Y', 'y0');
      await page.type('#append-text', 'note for X only');
      await page.evaluate(() => sessionStorage.setItem('satchel.token', 'tok_rotated_away'));
      await page.click('#append-btn');
      await page.waitForSelector('#signin', { visible: true });
      // The sign-in's answer is shown in the same task as the form hides, so it is on screen now.
      await signIn(page, TOKEN);
      expect(await page.$eval('#task', (e) => e.textContent)).toBe('session X');
      expect(page.url()).toBe(`${srv.url}/ui/sessions/s67g-x`);
      expect(await value(page, '#append-text')).toBe('note for X only');
      await page.click('#append-btn');
      expect(await nextMessage(page, await msg(page))).toMatch(/^Appended: now at revision 2/);
      expect(await userMessages('s67g-x')).toEqual(['x0', 'note for X only']);
      expect(await userMessages('s67g-y')).toEqual(['y0']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  /** A page on `id` whose first Continue is done on the server but its answer is lost on the way back. */
  async function losingFirstContinue(id: string) {
    const { page, errors } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/${id}`);
    await signIn(page, TOKEN);
    await page.waitForSelector('#actions', { visible: true });
    await page.setRequestInterception(true);
    const keys: string[] = [];
    page.on('request', (r) => {
      if (r.method() !== 'POST' || !r.url().endsWith('/continue')) return void r.continue();
      keys.push(r.headers()['idempotency-key'] ?? '');
      if (keys.length > 1) return void r.continue();
      void fetch(r.url(), { method: 'POST', headers: r.headers(), body: r.postData() }).then(
        async (res) => {
          await res.text();
          void r.abort('connectionreset');
        },
      );
    });
    chat.script({ reply: 'Built. Shall I also run the migrations?' });
    await page.type('#continue-text', 'yes');
    await page.click('#continue-btn');
    expect(await nextMessage(page, '')).toMatch(/could not be reached/);
    return { page, errors, keys };
  }

  it('F2: a Continue answered by the replay of an earlier identical one says nothing new was stored; a message written again is new', async () => {
    await created('s67g-c', 'deploy', 'deploy the app');
    const { page, errors, keys } = await losingFirstContinue('s67g-c');
    try {
      // Reload shows the "yes" and the reply; the user answers the new question "yes" again.
      await page.click('#reload');
      await page.waitForFunction(
        () => /run the migrations/.test(document.getElementById('messages')?.textContent ?? ''),
        { timeout: 10_000 },
      );
      await page.$eval('#continue-text', (e) => ((e as HTMLTextAreaElement).value = ''));
      chat.script({ reply: 'Migrations ran.' });
      await page.type('#continue-text', 'yes');
      await page.click('#continue-btn');
      const said = await nextMessage(page, await msg(page));
      expect(said).not.toMatch(/model replied/);
      expect(said).toMatch(/earlier Continue of this text/);
      expect(said).toMatch(/nothing new was stored/);
      expect(await value(page, '#continue-text')).toBe('');
      expect(await userMessages('s67g-c')).toEqual(['deploy the app', 'yes']);
      // Written again, it is a new message under a new key: stored, and the model runs.
      await page.type('#continue-text', 'yes');
      await page.click('#continue-btn');
      expect(await nextMessage(page, said)).toMatch(/model replied/);
      expect(await userMessages('s67g-c')).toEqual(['deploy the app', 'yes', 'yes']);
      expect(await page.$eval('#messages', (e) => e.textContent ?? '')).toContain(
        'Migrations ran.',
      );
      expect(keys).toHaveLength(3);
      expect(keys[1]).toBe(keys[0]);
      expect(keys[2]).not.toBe(keys[0]);
      expect(await value(page, '#continue-text')).toBe('');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('F2 (review s67k): a plain retry of a lost Continue stores it once and leaves nothing to send again', async () => {
    await created('s67g-r', 'deploy', 'deploy the app');
    const { page, errors, keys } = await losingFirstContinue('s67g-r');
    try {
      expect(await value(page, '#continue-text')).toBe('yes');
      await page.click('#continue-btn');
      const said = await nextMessage(page, await msg(page));
      expect(said).toMatch(/nothing new was stored/);
      expect(await value(page, '#continue-text')).toBe('');
      expect(await page.$eval('#messages', (e) => e.textContent ?? '')).toContain(
        'run the migrations',
      );
      expect(await userMessages('s67g-r')).toEqual(['deploy the app', 'yes']);
      expect(keys).toEqual([keys[0], keys[0]]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
