// Review s55c (session browser), the Continue form: what the page says after a continue that did not
// succeed must be true, and the request it sends again must be the one it owes. Chromium against a real
// Satchel server on a local folder, with the test chat server as its model.
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, nearCapMessages, openPage, openSessionPage } from './browser.js';

const TOKEN = 'tok_s55c_continue_0123456789';
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function serve(env: Record<string, string> = {}, chat?: ChatServer): Promise<RunningServer> {
  return startSatchelServer({
    env: {
      SATCHEL_TOKENS: `s55c=${TOKEN}`,
      ...(chat ? { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'chat-test' } : {}),
      ...env,
    },
  });
}

const openSession = (page: Page, srv: RunningServer, id: string) =>
  openSessionPage(page, srv.url, id, TOKEN);

/** The action message once it differs from `before` and is not the running note. */
async function nextMessage(page: Page, before: string): Promise<string> {
  await page.waitForFunction(
    (b) => {
      const t = document.querySelector('#action-msg')?.textContent ?? '';
      return t !== b && t !== 'Running the turn…' && t !== '';
    },
    { timeout: 20_000 },
    before,
  );
  return page.$eval('#action-msg', (e) => (e as HTMLElement).innerText);
}

/** The Idempotency-Key of every continue the page sends. */
function continueKeys(page: Page): string[] {
  const keys: string[] = [];
  page.on('request', (r: HTTPRequest) => {
    if (r.method() === 'POST' && r.url().endsWith('/continue'))
      keys.push(r.headers()['idempotency-key'] ?? '');
  });
  return keys;
}

describe('Continue answers that say the message was not stored', () => {
  it('a 413 "the new message cannot be stored …: nothing was written" is not "Your message was stored"', async () => {
    const chat = await startChatServer();
    const srv = await serve({ SATCHEL_MAX_SESSION_BYTES: '5000' }, chat);
    const api = apiClient(srv.url, TOKEN);
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u' },
    ];
    await api('POST', '/v1/sessions', { id: 'too-big', task: 'cap', messages });
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'too-big');
      await page.$eval(
        '#continue-text',
        (e) => ((e as HTMLTextAreaElement).value = 'z'.repeat(6000)),
      );
      await page.click('#continue-btn');
      const said = await nextMessage(page, '');
      expect((await api('GET', '/v1/sessions/too-big')).json.messages).toHaveLength(2);
      expect(chat.requests).toHaveLength(0);
      // Before the fix the page tested the detail for /stored/, which "cannot be stored" matches: "Your
      // message was stored; the model turn did not finish. … Press Continue again to run the turn".
      expect(said).toContain('cannot be stored');
      expect(said).not.toContain('Your message was stored');
      expect(said).not.toContain('Continue again');
    } finally {
      await page.close();
      await srv.close();
      await chat.close();
    }
  });

  it('a 409 "the reply was not stored" (the message was popped while the model ran) offers no repeat', async () => {
    const chat = await startChatServer();
    const srv = await serve({}, chat);
    const api = apiClient(srv.url, TOKEN);
    await api('POST', '/v1/sessions', {
      id: 'removed-mid-turn',
      task: 'continue raced by a pop',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
      ],
    });
    // While the model runs, another device takes the newest message (the one just stored) back.
    chat.script(async () => {
      expect((await api('POST', '/v1/sessions/removed-mid-turn/pop', { count: 1 })).status).toBe(
        200,
      );
      return { reply: 'an answer to a message the session no longer holds' };
    });
    const { page } = await openPage(browser);
    const keys = continueKeys(page);
    try {
      await openSession(page, srv, 'removed-mid-turn');
      await page.type('#continue-text', 'question the pop removes');
      await page.click('#continue-btn');
      const said = await nextMessage(page, '');
      // Before the fix: "Your message was stored; the model turn did not finish. … Press Continue again"
      // (the 409's "the reply was not stored" holds the word "stored"), and the repeat was sent under
      // the same key, as if the message were still in the session.
      expect(said).toContain('409');
      expect(said).not.toContain('Your message was stored');
      expect(said).not.toContain('Continue again');
      // The page shows the session as it is now: the popped message is not in its transcript.
      expect(await page.$eval('#messages', (e) => (e as HTMLElement).innerText)).not.toContain(
        'question the pop removes',
      );
      // Pressing Continue again is a new request (a new key), not the repeat of a turn owed.
      chat.script({ reply: 'an answer' });
      await page.click('#continue-btn');
      await nextMessage(page, said);
      expect(keys).toHaveLength(2);
      expect(keys[1]).not.toBe(keys[0]);
    } finally {
      await page.close();
      await srv.close();
      await chat.close();
    }
  });

  it('a 503 "storage did not confirm this write: it may have been stored" is not "was stored"', async () => {
    const srv = await serve();
    const api = apiClient(srv.url, TOKEN);
    await api('POST', '/v1/sessions', { id: 'unconfirmed', task: 'lost answer' });
    const { page } = await openPage(browser);
    const keys = continueKeys(page);
    // The answer lib/sessions/write-loop.ts gives when storage did not confirm the message's write (made
    // here by intercepting the first continue: a lost storage answer cannot be caused from a browser).
    const detail =
      'storage did not confirm this write: it may have been stored; read the session before sending it again';
    await page.setRequestInterception(true);
    let answered = false;
    page.on('request', (r) => {
      if (answered || r.method() !== 'POST' || !r.url().endsWith('/continue'))
        return void r.continue();
      answered = true;
      void r.respond({
        status: 503,
        headers: { 'retry-after': '2' },
        contentType: 'application/problem+json',
        body: JSON.stringify({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail,
        }),
      });
    });
    try {
      await openSession(page, srv, 'unconfirmed');
      await page.type('#continue-text', 'maybe stored');
      await page.click('#continue-btn');
      const said = await nextMessage(page, '');
      // Before the fix: "Your message was stored; …" (/stored/ matched "may have been stored").
      expect(said).toContain('may have been stored');
      expect(said).not.toContain('Your message was stored');
      expect(said).toContain('Reload the session to see whether the change was made');
      // Sent again, it is the same request (its key), so a message that did land is not stored twice.
      await page.click('#continue-btn');
      await nextMessage(page, said);
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      const stored = (await api('GET', '/v1/sessions/unconfirmed')).json.messages;
      expect(stored.filter((m: { content: string }) => m.content === 'maybe stored')).toHaveLength(
        1,
      );
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('a session deleted and created again under its id', () => {
  it('after Reload shows the new session, Continue acts on it, not on a failed turn’s revision', async () => {
    const chat = await startChatServer();
    const srv = await serve({}, chat);
    const api = apiClient(srv.url, TOKEN);
    await api('POST', '/v1/sessions', {
      id: 'reborn',
      task: 'old task',
      messages: [{ role: 'user', content: 'old life' }],
    });
    chat.script({ status: 500 });
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'reborn');
      await page.type('#continue-text', 'please summarise');
      await page.click('#continue-btn');
      const said = await nextMessage(page, '');
      // The 502 says "your message was stored (": true, and the page offers the turn again.
      expect(said).toContain('Your message was stored');
      expect(said).toContain('Press Continue again');
      // Meanwhile another tab deletes it, and another client creates a session under the same id.
      expect((await api('DELETE', '/v1/sessions/reborn')).status).toBe(204);
      const again = await api('POST', '/v1/sessions', {
        id: 'reborn',
        task: 'new task',
        messages: [{ role: 'user', content: 'new life' }],
      });
      expect(again.status).toBe(201);
      await page.click('#reload');
      await page.waitForFunction(() => document.getElementById('task')?.textContent === 'new task');
      chat.script({ reply: 'summary of the new life' });
      const before = await page.$eval('#action-msg', (e) => (e as HTMLElement).innerText);
      await page.click('#continue-btn'); // the text is still in the box
      const after = await nextMessage(page, before);
      // Before the fix the page sent the owed request again, with If-Match of the deleted session's
      // revision: 412 "This session changed since you loaded it", after every Reload.
      expect(after).not.toContain('changed since you loaded it');
      expect(after).toContain('The model replied');
      const now = (await api('GET', '/v1/sessions/reborn')).json;
      expect(now.messages.map((m: { content: string }) => m.content)).toEqual([
        'new life',
        'please summarise',
        'summary of the new life',
      ]);
    } finally {
      await page.close();
      await srv.close();
      await chat.close();
    }
  });
});

describe('a continue near the size cap', () => {
  it('says what the size cap removed to store the message (the answer’s dropped_groups)', async () => {
    const srv = await serve({ SATCHEL_MAX_SESSION_BYTES: '5000' }); // no model: the message alone
    const api = apiClient(srv.url, TOKEN);
    const messages = nearCapMessages();
    expect(
      (await api('POST', '/v1/sessions', { id: 'near-cap', task: 'cap', messages })).status,
    ).toBe(201);
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'near-cap');
      await page.$eval(
        '#continue-text',
        (e) => ((e as HTMLTextAreaElement).value = 'y'.repeat(1800)),
      );
      await page.click('#continue-btn');
      const said = await nextMessage(page, '');
      const dropped = (await api('GET', '/v1/sessions/near-cap/audit')).json.records.at(
        -1,
      ).dropped_groups;
      expect(dropped).toBeGreaterThan(0);
      // Before the fix: "Your message was stored. No model is configured …", the drop unsaid.
      expect(said).toContain(
        `Your message was stored (the size cap removed ${dropped} older message group${dropped > 1 ? 's' : ''}).`,
      );
    } finally {
      await page.close();
      await srv.close();
    }
  });
});
