// Review s58d (session browser): the transcript page after a 503, session strings with bidi controls,
// and long unbroken strings. Before the fixes: a 503 on the first load left a writable token without its
// write controls for good; a U+202E in a tool name or model reversed the call id or provider shown after
// it; long model, provider, message name, tool_call_id and ref creator strings scrolled the page sideways
// at 1280 px. Chromium against a real Satchel server on a local folder.
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { apiClient, launchBrowser, openPage, signIn } from './browser.js';
import { sideways } from './review-s50/common.js';

const T = {
  blip: 'tok_s58d_blip_0123456789',
  bidi: 'tok_s58d_bidi_0123456789',
  long: 'tok_s58d_long_0123456789',
};
let browser: Browser;
let srv: RunningServer;
beforeAll(async () => {
  browser = await launchBrowser();
  srv = await startSatchelServer({
    env: { SATCHEL_TOKENS: `blip=${T.blip},bidi=${T.bidi},long=${T.long}` },
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('a transcript whose first load answered 503 (review s58d)', () => {
  it('offers a writable token its write controls once Reload finds the session', async () => {
    const api = apiClient(srv.url, T.blip);
    expect(
      (await api('POST', '/v1/sessions', { id: 'blip', task: 'storage blipped' })).status,
    ).toBe(201);
    const { page } = await openPage(browser);
    // Storage unreachable for the first authorised read of the session, as the server answers it then.
    await page.setRequestInterception(true);
    let refused = false;
    page.on('request', (r) => {
      const authorised = Boolean(r.headers()['authorization']);
      if (refused || !authorised || r.method() !== 'GET' || !r.url().endsWith('/v1/sessions/blip'))
        return void r.continue();
      refused = true;
      void r.respond({
        status: 503,
        headers: { 'retry-after': '1' },
        contentType: 'application/problem+json',
        body: JSON.stringify({
          title: 'Service Unavailable',
          status: 503,
          detail: 'storage is unreachable',
        }),
      });
    });
    await page.goto(`${srv.url}/ui/sessions/blip`);
    await signIn(page, T.blip);
    await page.waitForFunction(() =>
      document.querySelector('#error')?.textContent?.includes('503'),
    );
    expect(refused).toBe(true);
    await page.click('#reload');
    await page.waitForFunction(
      () => document.querySelector('#task')?.textContent === 'storage blipped',
    );
    // The token can write: the probe the page makes answers 428 (a read-only token's, 403).
    expect((await api('PUT', '/v1/sessions/ui-write-probe', {})).status).toBe(428);
    // Before: the probe never ran after the 503, so no Append, Continue, Trim or Delete, and no note.
    await page.waitForFunction(
      () =>
        !document.getElementById('actions')!.hidden ||
        document.getElementById('ro-note')!.textContent,
    );
    const state = await page.evaluate(() => ({
      actions: !document.getElementById('actions')!.hidden,
      note: document.getElementById('ro-note')!.textContent,
    }));
    expect(state).toEqual({ actions: true, note: '' });
    await page.close();
  });
});

/** Whether the text node holding `needle` is laid out left to right on screen (its first letter leftmost). */
function readsLeftToRight(page: Page, selector: string, needle: string): Promise<boolean> {
  return page.evaluate(
    (sel, n) => {
      const walker = document.createTreeWalker(document.querySelector(sel)!, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode() as Text | null; t; t = walker.nextNode() as Text | null) {
        const at = t.data.indexOf(n);
        if (at < 0) continue;
        const x = (i: number) => {
          const r = document.createRange();
          r.setStart(t!, i);
          r.setEnd(t!, i + 1);
          return r.getBoundingClientRect().left;
        };
        return x(at) < x(at + n.length - 1);
      }
      throw new Error(`no text ${n} in ${sel}`);
    },
    selector,
    needle,
  );
}

describe('bidi controls in session strings (review s58d)', () => {
  it("a tool name's U+202E does not reverse the call id after it, nor a model's the provider", async () => {
    const api = apiClient(srv.url, T.bidi);
    const created = await api('POST', '/v1/sessions', {
      id: 'bidi',
      task: 'bidi probe',
      model: 'gpt-x\u202E',
      provider: 'openai',
      messages: [
        { role: 'user', content: 'run it' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'call_0042',
              type: 'function',
              function: { name: 'read_file\u202E', arguments: 'not json' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0042', content: 'ok' },
      ],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/bidi`);
    await signIn(page, T.bidi);
    await page.waitForSelector('.tool-call summary code', { visible: true });
    // The measure: text before the override reads left to right.
    expect(await readsLeftToRight(page, '.tool-call summary', 'Tool call')).toBe(true);
    expect(await readsLeftToRight(page, '#facts', 'Revision')).toBe(true);
    // Before: the id read "2400_llac", the note "(NOSJ ton era stnemugra)", the provider "ianepo".
    const seen = {
      id: await readsLeftToRight(page, '.tool-call summary', 'call_0042'),
      note: await readsLeftToRight(page, '.tool-call summary', 'arguments are not JSON'),
      provider: await readsLeftToRight(page, '#facts', 'openai'),
    };
    expect(seen).toEqual({ id: true, note: true, provider: true });
    // The fact's text is as before: model · provider.
    expect(await page.$eval('#facts dd:nth-of-type(2)', (e) => e.textContent)).toBe(
      'gpt-x\u202E · openai',
    );
    await page.close();
  });
});

const LONG = 'x'.repeat(240);

describe('long unbroken strings at 1280 px (review s58d)', () => {
  it('the list fits a session whose model and provider are one long word', async () => {
    const api = apiClient(srv.url, T.long);
    const created = await api('POST', '/v1/sessions', {
      id: 'long-model',
      task: 'short task',
      model: `model-${LONG}`,
      provider: `provider-${LONG}`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser, 1280, 900);
    await page.goto(`${srv.url}/ui`);
    await signIn(page, T.long);
    await page.waitForSelector('#rows tr[data-id="long-model"]', { visible: true });
    // Before: the Model and Provider cells ran to 4,600 px.
    expect(await sideways(page)).toEqual({ overflow: 0, widest: [] });
    await page.close();
  });

  it('a transcript fits a long message name, tool_call_id and ref creator', async () => {
    const api = apiClient(srv.url, T.long);
    const created = await api('POST', '/v1/sessions', {
      id: 'long-fields',
      task: 'short task',
      messages: [
        { role: 'user', content: 'hi', name: `name-${LONG}` },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: `call-${LONG}`, type: 'function', function: { name: 'f', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: `orphan-${LONG}`, content: 'an orphaned result' },
      ],
      external_refs: [{ kind: 'k', uri: 'https://example.com/', created_by: 'c'.repeat(128) }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser, 1280, 900);
    await page.goto(`${srv.url}/ui/sessions/long-fields`);
    await signIn(page, T.long);
    await page.waitForSelector('#audit li time', { visible: true });
    // Before: the message heads ran to 2,000 px, the refs table to 1,363 px.
    expect(await sideways(page)).toEqual({ overflow: 0, widest: [] });
    await page.close();
  });
});
