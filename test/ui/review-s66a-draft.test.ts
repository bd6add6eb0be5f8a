// Review s66a, finding 1, driven in Chromium: a message typed while an earlier Continue or Append was on
// its way was lost. The answer cleared the whole box, not the text it sent, and a second press while the
// first ran was dropped without a word (the status line still said "Running the turn…").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, openSessionPage } from './browser.js';

const TOK = 'tok_s66a_draft_0123456789';
let browser: Browser;
let srv: RunningServer;
let chat: ChatServer;
beforeAll(async () => {
  browser = await launchBrowser();
  chat = await startChatServer();
  srv = await startSatchelServer({
    env: { SATCHEL_TOKENS: `ns=${TOK}`, SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'chat-test' },
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
  await chat?.close();
});

const api = () => apiClient(srv.url, TOK);
const created = async (id: string) => {
  const r = await api()('POST', '/v1/sessions', {
    id,
    task: 'draft',
    messages: [{ role: 'user', content: 'hi' }],
  });
  expect(r.status).toBe(201);
};
const userMessages = async (id: string): Promise<string[]> =>
  (await api()('GET', `/v1/sessions/${id}`)).json.messages
    .filter((m: { role: string }) => m.role === 'user')
    .map((m: { content: string }) => m.content);
/** Empties a box and types into it, as a person starting on the next message. */
const retype = async (page: Page, box: string, text: string) => {
  await page.$eval(box, (e) => ((e as HTMLTextAreaElement).value = ''));
  await page.type(box, text);
};
const value = (page: Page, box: string) => page.$eval(box, (e) => (e as HTMLTextAreaElement).value);
const msgMatches = (page: Page, re: RegExp) =>
  page.waitForFunction(
    (src) => new RegExp(src).test(document.getElementById('action-msg')!.textContent ?? ''),
    { timeout: 20_000 },
    re.source,
  );
/** The session's appends reach the server 2 s after they were sent (a slow uplink). */
const slowAppends = async (page: Page) => {
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/messages'))
      setTimeout(() => void r.continue(), 2000);
    else void r.continue();
  });
};

describe('text typed while a write is on its way (review s66a)', () => {
  it('Continue: the next message typed during the model turn stays in the box', async () => {
    await created('draft-c1');
    chat.script({ reply: 'The first answer.', delayMs: 2500 });
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'draft-c1', TOK);
      await page.type('#continue-text', 'first question');
      await page.click('#continue-btn');
      await msgMatches(page, /^Running the turn…$/);
      await retype(page, '#continue-text', 'my next question, half written');
      await msgMatches(page, /The model replied/);
      // Before the fix: "" (the answer cleared the box).
      expect(await value(page, '#continue-text')).toBe('my next question, half written');
      expect(await userMessages('draft-c1')).toEqual(['hi', 'first question']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Continue pressed again during a turn says nothing was sent, and keeps the message', async () => {
    await created('draft-c2');
    chat.script({ reply: 'The first answer.', delayMs: 2500 }, { reply: 'The second answer.' });
    const before = chat.requests.length;
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'draft-c2', TOK);
      await page.type('#continue-text', 'question A');
      await page.click('#continue-btn');
      await retype(page, '#continue-text', 'question B');
      await page.click('#continue-btn'); // while A's turn runs
      // Before the fix: still "Running the turn…", and B was then neither sent nor kept.
      expect(await page.$eval('#action-msg', (e) => e.textContent)).toBe(
        'The previous turn is still running; this press sent nothing.',
      );
      await msgMatches(page, /The model replied/);
      expect(await value(page, '#continue-text')).toBe('question B');
      expect(chat.requests.length - before).toBe(1);
      // Pressed again once A is done, B is sent and the box emptied.
      await page.click('#continue-btn');
      await page.waitForFunction(
        () => (document.getElementById('continue-text') as HTMLTextAreaElement).value === '',
        { timeout: 20_000 },
      );
      await msgMatches(page, /The model replied/);
      expect(await userMessages('draft-c2')).toEqual(['hi', 'question A', 'question B']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Append: a message typed on after pressing Append stays in the box', async () => {
    await created('draft-a1');
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'draft-a1', TOK);
      await slowAppends(page);
      await page.type('#append-text', 'first note');
      await page.click('#append-btn');
      await retype(page, '#append-text', 'second note, being typed');
      await msgMatches(page, /Appended/);
      // Before the fix: "".
      expect(await value(page, '#append-text')).toBe('second note, being typed');
      expect(await userMessages('draft-a1')).toEqual(['hi', 'first note']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Append pressed again while the first is on its way says nothing was sent', async () => {
    await created('draft-a2');
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'draft-a2', TOK);
      await slowAppends(page);
      await page.type('#append-text', 'first note');
      await page.click('#append-btn');
      await retype(page, '#append-text', 'second note');
      await page.click('#append-btn');
      // Before the fix: nothing said (an empty status line), and the box was emptied later.
      expect(await page.$eval('#action-msg', (e) => e.textContent)).toBe(
        'The previous Append is still on its way; this press sent nothing.',
      );
      await msgMatches(page, /Appended/);
      expect(await value(page, '#append-text')).toBe('second note');
      expect(await userMessages('draft-a2')).toEqual(['hi', 'first note']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('typing on at the end of the sent text (review s66h)', () => {
  it('Continue: a new message typed during the turn that starts like the sent one keeps its start', async () => {
    // Review s66q: the sent text was cut off the front of any box that started with it.
    await created('pfx-c');
    chat.script({ reply: 'Done.', delayMs: 2500 });
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'pfx-c', TOK);
      await page.type('#continue-text', 'Summarise');
      await page.click('#continue-btn');
      await msgMatches(page, /^Running the turn…$/);
      await retype(page, '#continue-text', 'Summarise the second file as well');
      await msgMatches(page, /The model replied/);
      expect(await value(page, '#continue-text')).toBe('Summarise the second file as well');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('Append: the sent words leave the box, what was typed after them stays', async () => {
    await created('draft-h1');
    const { page, errors } = await openPage(browser);
    try {
      await openSessionPage(page, srv.url, 'draft-h1', TOK);
      await slowAppends(page);
      await page.type('#append-text', 'first note');
      await page.click('#append-btn');
      await page.focus('#append-text');
      await page.keyboard.press('End');
      await page.type('#append-text', ' and a second thought');
      await msgMatches(page, /Appended/);
      // Before the fix: "first note and a second thought", and a second press stored "first note" twice.
      expect(await value(page, '#append-text')).toBe('and a second thought');
      expect(await userMessages('draft-h1')).toEqual(['hi', 'first note']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
