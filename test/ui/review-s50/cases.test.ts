// The session browser's defects found by review s50c, each checked in Chromium against a real server on a
// temp local folder (one server and one browser for them all; each case in a namespace of its own).
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiClient,
  oneSession,
  openPage,
  sideways,
  signIn,
  sleep,
  tabTo,
  launchBrowser,
  startSatchelServer,
  type RunningServer,
} from './common.js';

/** Each case's token; its namespace is the case's index. */
const T = {
  'focus-lost-after-append': 'tok_s50c_focus_0123456789',
  'focus-lost-after-sign-in': 'tok_s50c_signinfocus_0123456789',
  'latest-url-shows-session-whose-actions-fail': 'tok_s50c_latest_0123456789',
  'narrow-metadata-key-scrolls-sideways': 'tok_s50c_narrowmeta_0123456789',
  'narrow-search-result-task-scrolls-sideways': 'tok_s50c_narrowsearch_0123456789',
  'narrow-tool-call-name-scrolls-sideways': 'tok_s50c_narrowtool_0123456789',
  'pending-counts-changes-not-sessions': 'tok_s50c_pending_0123456789',
  'rtl-message-laid-out-left-to-right': 'tok_s50c_rtl_0123456789',
  'tool-result-parts-not-shown-under-call': 'tok_s50c_parts_0123456789',
  'tool-results-repeated-under-every-call-with-same-id': 'tok_s50c_callids_0123456789',
  'trim-enabled-after-trim-without-preview': 'tok_s50c_trimbtn_0123456789',
} as const;
let browser: Browser;
let srv: RunningServer;
beforeAll(async () => {
  browser = await launchBrowser();
  const tokens = Object.values(T).map((token, i) => `case${i}=${token}`);
  srv = await startSatchelServer({ env: { SATCHEL_TOKENS: tokens.join(',') } });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('focus-lost-after-append', () => {
  it('keeps keyboard focus on the Append action after appending', async () => {
    const api = apiClient(srv.url, T['focus-lost-after-append']);
    const created = await api('POST', '/v1/sessions', {
      id: 'focus-append',
      task: 'keyboard append',
      messages: [{ role: 'user', content: 'first' }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/focus-append`);
    await signIn(page, T['focus-lost-after-append']);
    await page.waitForSelector('#actions', { visible: true });
    await page.focus('#append-text');
    await page.keyboard.type('second, typed with the keyboard');
    await tabTo(page, '#append-btn');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      document.getElementById('action-msg')!.textContent!.includes('Appended'),
    );
    expect(await page.$eval('#messages', (e) => e.textContent)).toContain(
      'second, typed with the keyboard',
    );
    const focused = await page.evaluate(() => {
      const el = document.activeElement;
      return el === document.body || !el ? 'body' : `${el.tagName.toLowerCase()}#${el.id}`;
    });
    expect(focused).not.toBe('body');
    await page.close();
  });
});

describe('focus-lost-after-sign-in', () => {
  it('moves focus into the page after signing in with the keyboard', async () => {
    await oneSession(srv.url, T['focus-lost-after-sign-in']);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui`);
    await page.waitForSelector('#signin', { visible: true });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token');
    await page.keyboard.type(T['focus-lost-after-sign-in']);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signin', { hidden: true });
    await page.waitForSelector('#rows tr', { visible: true });
    const focused = await page.evaluate(() => {
      const el = document.activeElement;
      return {
        body: el === document.body,
        inContent: !!el && (document.getElementById('main')!.contains(el) || el.id === 'main'),
        visible: !!el && (el as HTMLElement).offsetParent !== null,
      };
    });
    expect(focused.body).toBe(false);
    expect(focused.inContent).toBe(true);
    await page.close();
  });
});

describe('latest-url-shows-session-whose-actions-fail', () => {
  it('opens /ui/sessions/latest as a session whose audit log and actions work', async () => {
    const api = apiClient(srv.url, T['latest-url-shows-session-whose-actions-fail']);
    const created = await api('POST', '/v1/sessions', {
      id: 'latest-demo',
      task: 'what my agent is doing now',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/latest`);
    await signIn(page, T['latest-url-shows-session-whose-actions-fail']);
    await page.waitForSelector('#messages li', { visible: true });
    expect(await page.$eval('#task', (e) => e.textContent)).toBe('what my agent is doing now');
    await page.waitForSelector('#audit li');
    expect(await page.$eval('#audit', (e) => e.textContent)).not.toContain('unavailable');
    await page.waitForSelector('#actions', { visible: true });
    await page.type('#append-text', 'appended from the latest page');
    await page.click('#append-btn');
    await page.waitForFunction(() => document.getElementById('action-msg')!.textContent !== '');
    expect(await page.$eval('#action-msg', (e) => e.textContent)).toContain('Appended');
    const stored = await api('GET', '/v1/sessions/latest-demo');
    expect(JSON.stringify(stored.json.messages)).toContain('appended from the latest page');
    await page.close();
  });
});

describe('narrow-metadata-key-scrolls-sideways', () => {
  it('fits a session with a long metadata key in 390 px', async () => {
    const api = apiClient(srv.url, T['narrow-metadata-key-scrolls-sideways']);
    const created = await api('POST', '/v1/sessions', {
      id: 'long-metadata-key',
      task: 'review the deploy PR',
      metadata: { 'github.com/acme/deploy#pull_request_review_comment': 'created' },
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser, 390, 844);
    await page.goto(`${srv.url}/ui/sessions/long-metadata-key`);
    await signIn(page, T['narrow-metadata-key-scrolls-sideways']);
    await page.waitForSelector('#metadata dt', { visible: true });
    const { overflow, widest } = await sideways(page);
    expect(widest).toEqual([]);
    expect(overflow).toBe(0);
    await page.close();
  });
});

describe('narrow-search-result-task-scrolls-sideways', () => {
  it('fits a search result whose task is a URL in 390 px', async () => {
    const api = apiClient(srv.url, T['narrow-search-result-task-scrolls-sideways']);
    const created = await api('POST', '/v1/sessions', {
      task: 'https://github.com/acme/deploy/actions/runs/1234567890123/job/98765432101234',
      messages: [{ role: 'user', content: 'Why did this deploy job fail?' }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser, 390, 844);
    await page.goto(`${srv.url}/ui`);
    await signIn(page, T['narrow-search-result-task-scrolls-sideways']);
    await page.waitForSelector('#rows tr', { visible: true });
    expect((await sideways(page)).overflow).toBe(0); // the list itself fits
    await page.type('#q', 'deploy');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#result-list li a.task', { visible: true });
    const { overflow, widest } = await sideways(page);
    expect(widest).toEqual([]);
    expect(overflow).toBe(0);
    await page.close();
  });
});

describe('narrow-tool-call-name-scrolls-sideways', () => {
  it('fits a transcript with an MCP tool call in 390 px', async () => {
    const api = apiClient(srv.url, T['narrow-tool-call-name-scrolls-sideways']);
    const created = await api('POST', '/v1/sessions', {
      id: 'mcp-tool-call',
      task: 'find the design doc',
      messages: [
        { role: 'user', content: 'Find the design doc in Drive.' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'toolu_01D7FLrfh4GYq7yT1ULFeyMV',
              type: 'function',
              function: {
                name: 'mcp__claude_ai_Google_Drive__google_drive_search',
                arguments: '{"query":"design doc"}',
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01D7FLrfh4GYq7yT1ULFeyMV', content: 'design.md' },
      ],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser, 390, 844);
    await page.goto(`${srv.url}/ui/sessions/mcp-tool-call`);
    await signIn(page, T['narrow-tool-call-name-scrolls-sideways']);
    await page.waitForSelector('#messages details.tool-call summary strong', { visible: true });
    const { overflow, widest } = await sideways(page);
    expect(widest).toEqual([]);
    expect(overflow).toBe(0);
    await page.close();
  });
});

describe('pending-counts-changes-not-sessions', () => {
  it('counts a session that changed three times as one changed session', async () => {
    const api = apiClient(srv.url, T['pending-counts-changes-not-sessions']);
    for (const id of ['busy-agent', 'other-a', 'other-b'])
      expect(
        (
          await api('POST', '/v1/sessions', {
            id,
            task: id,
            messages: [{ role: 'user', content: 'hi' }],
          })
        ).status,
      ).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui?limit=2&poll=300`);
    await signIn(page, T['pending-counts-changes-not-sessions']);
    await page.waitForSelector('#rows tr', { visible: true });
    await page.click('#next');
    await page.waitForFunction(
      () => document.getElementById('page-label')!.textContent === 'Page 2',
    );
    for (let i = 1; i <= 3; i++) {
      const a = await api('POST', '/v1/sessions/busy-agent/messages', {
        messages: [{ role: 'user', content: `step ${i}` }],
      });
      expect(a.status).toBe(200);
      await page.waitForFunction(() => !document.getElementById('pending')!.hidden);
      await sleep(900); // a few polls (every 300 ms): each append is seen by its own poll
    }
    const text = await page.$eval('#pending', (b) => b.textContent);
    expect(text).toBe('1 session changed: show the newest');
    await page.close();
  });
});

describe('rtl-message-laid-out-left-to-right', () => {
  it('lays out a Hebrew message right to left', async () => {
    const api = apiClient(srv.url, T['rtl-message-laid-out-left-to-right']);
    const hebrew = 'שלום, עולם!';
    const created = await api('POST', '/v1/sessions', {
      id: 'rtl-message',
      task: 'שאלה בעברית',
      messages: [{ role: 'user', content: hebrew }],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/rtl-message`);
    await signIn(page, T['rtl-message-laid-out-left-to-right']);
    await page.waitForSelector('#m1 .text', { visible: true });
    const layout = await page.$eval('#m1 .text', (el) => {
      const text = el.firstChild as Text;
      const s = text.data;
      const box = (from: number) => {
        const r = document.createRange();
        r.setStart(text, from);
        r.setEnd(text, from + 1);
        return r.getBoundingClientRect().left;
      };
      return {
        direction: getComputedStyle(el).direction,
        bang: box(s.indexOf('!')),
        firstLetter: box(0),
      };
    });
    // In a right-to-left paragraph the sentence's first letter is at the right and its "!" at the left.
    expect(layout.bang).toBeLessThan(layout.firstLetter);
    expect(layout.direction).toBe('rtl');
    await page.close();
  });
});

describe('tool-result-parts-not-shown-under-call', () => {
  it('says which parts of a tool result it does not show, as it does for other messages', async () => {
    const api = apiClient(srv.url, T['tool-result-parts-not-shown-under-call']);
    const parts = [
      { type: 'text', text: 'Screenshot of the login page' },
      { type: 'image_url', image_url: { url: 'https://example.com/shot.png' } },
    ];
    const created = await api('POST', '/v1/sessions', {
      id: 'tool-result-parts',
      task: 'a tool returned a screenshot',
      messages: [
        { role: 'user', content: parts },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'call_shot',
              type: 'function',
              function: { name: 'screenshot', arguments: '{}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_shot', content: parts },
      ],
    });
    expect(created.status).toBe(201);
    const { page, errors } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/tool-result-parts`);
    await signIn(page, T['tool-result-parts-not-shown-under-call']);
    await page.waitForSelector('#messages .tool-result');
    // The user message (for comparison) says so.
    const user = await page.$eval('#m1', (e) => (e as HTMLElement).innerText);
    expect(user).toContain('[image_url part, not shown]');
    const result = await page.$eval('#messages .tool-result', (e) => (e as HTMLElement).innerText);
    expect(result).toContain('Screenshot of the login page');
    expect(result).toContain('[image_url part, not shown]');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('tool-results-repeated-under-every-call-with-same-id', () => {
  it('shows each tool result only under the call it answers when call ids repeat across turns', async () => {
    const api = apiClient(srv.url, T['tool-results-repeated-under-every-call-with-same-id']);
    const call = (name: string) => [
      { id: 'call_0', type: 'function', function: { name, arguments: '{}' } },
    ];
    const created = await api('POST', '/v1/sessions', {
      id: 'repeated-call-ids',
      task: 'two turns, call ids numbered per turn',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'turn one' },
        { role: 'assistant', content: '', tool_calls: call('read_file') },
        { role: 'tool', tool_call_id: 'call_0', content: 'RESULT ONE' },
        { role: 'assistant', content: 'done one' },
        { role: 'user', content: 'turn two' },
        { role: 'assistant', content: '', tool_calls: call('list_dir') },
        { role: 'tool', tool_call_id: 'call_0', content: 'RESULT TWO' },
        { role: 'assistant', content: 'done two' },
      ],
    });
    expect(created.status).toBe(201);
    const { page, errors } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/repeated-call-ids`);
    await signIn(page, T['tool-results-repeated-under-every-call-with-same-id']);
    await page.waitForSelector('#messages details.tool-call');
    const calls = await page.$$eval('#messages details.tool-call', (ds) =>
      ds.map((d) => ({
        name: d.querySelector('summary strong')?.textContent,
        results: Array.from(d.querySelectorAll('.tool-result .text')).map((t) => t.textContent),
      })),
    );
    expect(calls).toEqual([
      { name: 'read_file', results: ['RESULT ONE'] },
      { name: 'list_dir', results: ['RESULT TWO'] },
    ]);
    const ids = await page.$$eval('[id]', (els) => els.map((e) => e.id));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('trim-enabled-after-trim-without-preview', () => {
  it('leaves Trim disabled after a trim, until a new preview', async () => {
    const api = apiClient(srv.url, T['trim-enabled-after-trim-without-preview']);
    const messages = [{ role: 'system', content: 'sys' }];
    for (let i = 1; i <= 6; i++)
      messages.push({ role: i % 2 ? 'user' : 'assistant', content: `m${i}` });
    const created = await api('POST', '/v1/sessions', { id: 'trim-twice', task: 'trim', messages });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${srv.url}/ui/sessions/trim-twice`);
    await signIn(page, T['trim-enabled-after-trim-without-preview']);
    await page.waitForSelector('#actions', { visible: true });
    expect(await page.$eval('#trim-btn', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await page.type('#trim-keep', '5');
    await page.click('#trim-preview');
    await page.waitForSelector('#trim-out .preview-list li');
    await page.click('#trim-btn');
    await page.waitForFunction(() =>
      document.getElementById('action-msg')!.textContent!.includes('Trimmed'),
    );
    expect(await page.$eval('#trim-out', (e) => e.textContent)).toBe(''); // the preview is gone
    expect(await page.$eval('#trim-btn', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await page.close();
  });
});
