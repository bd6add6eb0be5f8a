// Review s55c (session browser): what the transcript page and the live list show must be true: the size
// cap's drops after a write, tool arguments as stored, a session deleted (or created again under its id)
// elsewhere, and keyboard focus after a trim. Chromium against a real Satchel server on a local folder.
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import {
  apiClient,
  launchBrowser,
  nearCapMessages,
  openPage,
  openSessionPage,
  signIn,
} from './browser.js';

const TOKEN = 'tok_s55c_page_0123456789';
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const serve = (env: Record<string, string> = {}) =>
  startSatchelServer({ env: { SATCHEL_TOKENS: `s55c=${TOKEN}`, ...env } });

const openSession = (page: Page, srv: RunningServer, id: string) =>
  openSessionPage(page, srv.url, id, TOKEN);

const text = (page: Page, selector: string) =>
  page.$eval(selector, (e) => (e as HTMLElement).innerText);

/** Waits for the action message to start with `start`, and answers it. */
async function actionSaid(page: Page, start: string): Promise<string> {
  await page.waitForFunction(
    (s) => document.querySelector('#action-msg')?.textContent?.startsWith(s),
    { timeout: 20_000 },
    start,
  );
  return text(page, '#action-msg');
}

describe('tool-call arguments', () => {
  it('are shown as stored when indenting them would rewrite them, and indented when it would not', async () => {
    const srv = await serve();
    const api = apiClient(srv.url, TOKEN);
    // What a model really sent (stored byte for byte): a repeated key, an integer past 2^53, 1e999.
    const odd =
      '{"cmd":"ls /tmp","cmd":"rm -rf /srv/data","id":12345678901234567890,"limit":1e999}';
    const plain = '{"path": "/tmp", "flags": [1, 2.5, true, null], "opts": {"deep": "a\\"b"}}';
    const call = (id: string, args: string) => ({
      id,
      type: 'function',
      function: { name: 'shell', arguments: args },
    });
    const created = await api('POST', '/v1/sessions', {
      id: 'odd-args',
      task: 'review what the agent ran',
      messages: [
        { role: 'user', content: 'clean up tmp' },
        { role: 'assistant', content: '', tool_calls: [call('c1', odd), call('c2', plain)] },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
        { role: 'tool', tool_call_id: 'c2', content: 'done' },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.json.messages[1].tool_calls[0].function.arguments).toBe(odd);
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'odd-args');
      const shown = await page.$$eval('.tool-call pre', (es) =>
        es.map((e) => (e as HTMLElement).innerText),
      );
      // Before the fix JSON.parse + JSON.stringify showed {"cmd": "rm -rf /srv/data", "id":
      // 12345678901234567000, "limit": null}: not the first command stored, another id, null for 1e999.
      expect(shown[0]).toBe(odd);
      // Arguments that read back the same are still indented.
      expect(shown[1]).toBe(JSON.stringify(JSON.parse(plain), null, 2));
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('writes near the size cap', () => {
  it('an append whose write made the size cap drop older groups says so', async () => {
    const srv = await serve({ SATCHEL_MAX_SESSION_BYTES: '5000' });
    const api = apiClient(srv.url, TOKEN);
    const messages = nearCapMessages();
    expect(
      (await api('POST', '/v1/sessions', { id: 'near-cap', task: 'cap', messages })).status,
    ).toBe(201);
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'near-cap');
      await page.$eval(
        '#append-text',
        (e) => ((e as HTMLTextAreaElement).value = 'y'.repeat(1800)),
      );
      await page.click('#append-btn');
      const said = await actionSaid(page, 'Appended');
      const record = (await api('GET', '/v1/sessions/near-cap/audit')).json.records.at(-1);
      expect(record.dropped_groups).toBeGreaterThan(0);
      // Before the fix: "Appended: now at revision 2." (redactions were reported, dropped_groups never).
      const n = record.dropped_groups;
      expect(said).toBe(
        `Appended: now at revision ${record.revision}, the size cap removed ${n} older message ` +
          `group${n > 1 ? 's' : ''}.`,
      );
    } finally {
      await page.close();
      await srv.close();
    }
  });

  it('a trim whose write made the size cap drop more says so, not before − after as its cut', async () => {
    // Stored under a larger cap (another server, or before SATCHEL_MAX_SESSION_BYTES was lowered); the
    // page's server has 5,000 bytes.
    const big = await serve();
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u0' },
      ...Array.from({ length: 12 }, (_, i) => ({
        role: i % 2 ? 'user' : 'assistant',
        content: `m${i} ${'x'.repeat(700)}`,
      })),
    ];
    const made = await apiClient(big.url, TOKEN)('POST', '/v1/sessions', {
      id: 'trim-cap',
      task: 't',
      messages,
    });
    expect(made.status).toBe(201);
    await big.close(true);
    const srv = await startSatchelServer({
      dir: big.dir,
      env: { SATCHEL_TOKENS: `s55c=${TOKEN}`, SATCHEL_MAX_SESSION_BYTES: '5000' },
    });
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'trim-cap');
      await page.type('#trim-keep', '13');
      await page.click('#trim-preview');
      expect(await text(page, '#trim-out')).toContain('drop 1 message and keep 13');
      await page.click('#trim-btn');
      const said = await actionSaid(page, 'Trimmed');
      // Before the fix: "Trimmed: 7 messages dropped, 7 kept.": the preview's one message and 7 groups
      // the size cap dropped (its marker message in their place) went, and nothing said the cap took part.
      expect(said).toBe(
        'Trimmed: the session went from 14 messages to 7, and the size cap removed 7 older message ' +
          'groups the preview kept.',
      );
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('a session deleted elsewhere', () => {
  it('Reload says "not found" and shows nothing of it; Reload once created again shows it', async () => {
    const srv = await serve();
    const api = apiClient(srv.url, TOKEN);
    await api('POST', '/v1/sessions', {
      id: 'gone-elsewhere',
      task: 'private task of a deleted session',
      messages: [{ role: 'user', content: 'private text of a deleted session' }],
      metadata: { owner: 'private-owner' },
    });
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'gone-elsewhere');
      await page.waitForSelector('#audit li');
      expect((await api('DELETE', '/v1/sessions/gone-elsewhere')).status).toBe(204);
      await page.click('#reload');
      await page.waitForFunction(
        () => document.getElementById('task')?.textContent === 'Session not found',
      );
      // Before the fix only the heading and the error box changed: the transcript, facts, metadata, audit
      // log, the write controls and Download JSON (which downloaded the deleted session) stayed.
      const shown = await text(page, '#content');
      expect(shown).not.toContain('private text of a deleted session');
      expect(shown).not.toContain('private-owner');
      expect(shown).not.toContain('Revision');
      expect(await page.$$eval('#audit li', (es) => es.length)).toBe(0);
      for (const id of ['#actions', '#download'])
        expect(await page.$eval(id, (e) => (e as HTMLElement).hidden)).toBe(true);
      // Created again under the id: Reload shows it, with its controls back.
      await api('POST', '/v1/sessions', { id: 'gone-elsewhere', task: 'a new session' });
      await page.click('#reload');
      await page.waitForSelector('#actions', { visible: true });
      expect(await text(page, '#task')).toBe('a new session');
      expect(await page.$eval('#download', (e) => (e as HTMLElement).hidden)).toBe(false);
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('the live list', () => {
  it('a session deleted and created again under its id comes in as new; a written one as updated', async () => {
    const srv = await serve();
    const api = apiClient(srv.url, TOKEN);
    await api('POST', '/v1/sessions', { id: 'reused-id', task: 'first life of the id' });
    await api('POST', '/v1/sessions', { id: 'written', task: 'one that is written to' });
    const { page } = await openPage(browser);
    try {
      await page.goto(`${srv.url}/ui?poll=300`);
      await signIn(page, TOKEN);
      await page.waitForSelector('#rows tr[data-id="reused-id"]', { visible: true });
      expect((await api('DELETE', '/v1/sessions/reused-id')).status).toBe(204);
      const again = await api('POST', '/v1/sessions', { id: 'reused-id', task: 'another session' });
      expect(again.status).toBe(201);
      const put = await api('POST', '/v1/sessions/written/messages', {
        messages: [{ role: 'user', content: 'more' }],
      });
      expect(put.status).toBe(200);
      await page.waitForFunction(
        () =>
          document
            .querySelector('#rows tr[data-id="reused-id"]')
            ?.textContent?.includes('another session') &&
          document.querySelector('#rows tr[data-id="written"] .badge.fresh'),
        { timeout: 10_000 },
      );
      const badge = (id: string) => text(page, `#rows tr[data-id="${id}"] .badge.fresh`);
      // Before the fix: "updated" for both (the row's id was on screen).
      expect(await badge('reused-id')).toBe('new');
      expect(await badge('written')).toBe('updated');
      expect(await page.$$eval('#rows tr[data-id="reused-id"]', (es) => es.length)).toBe(1);
    } finally {
      await page.close();
      await srv.close();
    }
  });
});

describe('keyboard only', () => {
  it('after Trim by the keyboard, focus stays in the trim form (the button is disabled under it)', async () => {
    const srv = await serve();
    const api = apiClient(srv.url, TOKEN);
    const messages = [
      { role: 'system', content: 'sys' },
      ...Array.from({ length: 6 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: `m${i}`,
      })),
    ];
    await api('POST', '/v1/sessions', { id: 'keys-trim', task: 'trim by keys', messages });
    const { page } = await openPage(browser);
    try {
      await openSession(page, srv, 'keys-trim');
      await page.focus('#trim-keep');
      await page.keyboard.type('3');
      await page.keyboard.press('Tab'); // Preview
      await page.keyboard.press('Enter');
      await page.waitForSelector('#trim-out li');
      await page.keyboard.press('Tab'); // Trim
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('trim-btn');
      await page.keyboard.press('Enter');
      await actionSaid(page, 'Trimmed');
      // Before the fix loading the trimmed session disabled the focused Trim button, and focus fell to
      // <body>: the next Tab started from the top of the page.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('trim-keep');
    } finally {
      await page.close();
      await srv.close();
    }
  });
});
