import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUiAssets } from '../../scripts/build.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import {
  apiClient,
  axeViolations,
  FAKE_KEY,
  launchBrowser,
  openPage,
  richSession,
  screenshot,
  signIn,
  tabTo,
  visibleText,
} from './browser.js';

// The session browser in Chromium against a real server on the local store. Each test has its own
// namespace (token), so tests do not see each other's sessions.
const T = {
  alice: 'tok_ui_alice_rw_0123456789',
  aliceRo: 'tok_ui_alice_ro_0123456789',
  pager: 'tok_ui_pager_0123456789',
  live: 'tok_ui_live_0123456789',
  xss: 'tok_ui_xss_0123456789',
  search: 'tok_ui_search_0123456789',
  keys: 'tok_ui_keys_0123456789',
  acts: 'tok_ui_acts_0123456789',
  flags: 'tok_ui_flags_0123456789',
  parts: 'tok_ui_parts_0123456789',
  liveP: 'tok_ui_live_pager_0123456789',
};

let browser: Browser;
let server: RunningServer;
let openServer: RunningServer;
let chat: ChatServer;

beforeAll(async () => {
  browser = await launchBrowser();
  chat = await startChatServer();
  server = await startSatchelServer({
    env: {
      SATCHEL_TOKENS:
        `alice/laptop=${T.alice},alice/ci=${T.aliceRo}:ro,pager=${T.pager},live=${T.live},` +
        `xss=${T.xss},search=${T.search},keys=${T.keys},acts=${T.acts},flags=${T.flags},` +
        `parts=${T.parts},livep=${T.liveP}`,
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'chat-test',
    },
  });
  openServer = await startSatchelServer();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await openServer?.close();
  await chat?.close();
});

describe('session browser: sign-in, list and paging', () => {
  it('asks for a token, rejects a wrong one, lists sessions newest first with their columns after sign-in', async () => {
    const api = apiClient(server.url, T.alice);
    const older = await api('POST', '/v1/sessions', {
      task: 'Older task',
      model: 'gpt-a',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const newer = await api('POST', '/v1/sessions', richSession('Newest task in the list'));
    expect(older.status).toBe(201);
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/`); // GET / redirects to /ui
    expect(new URL(page.url()).pathname).toBe('/ui');
    expect(await visibleText(page, '#signin')).toContain('Access token');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token');
    await page.type('#token', 'not-a-token');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      document.querySelector('#signin-error')?.textContent?.includes('not accepted'),
    );
    await page.$eval('#token', (el) => ((el as HTMLInputElement).value = ''));
    await signIn(page, T.alice);
    await page.waitForSelector('#rows tr', { visible: true });
    const rows = await page.$$eval('#rows tr', (trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-id'), text: (tr as HTMLElement).innerText })),
    );
    expect(rows.map((r) => r.id)).toEqual([newer.json.id, older.json.id]);
    expect(rows[0]!.text).toContain('Newest task in the list');
    expect(rows[0]!.text).toContain('gpt-test');
    expect(rows[1]!.text).toMatch(/gpt-a[\s\S]*openai[\s\S]*1/);
    const time = await page.$eval('#rows tr time', (t) => ({
      text: t.textContent,
      title: t.getAttribute('title'),
      dt: t.getAttribute('datetime'),
    }));
    expect(time.text).toBe('just now');
    expect(time.title).toContain(time.dt!);
    expect(await visibleText(page, '#who')).toContain('Signed in');
    // The token is in sessionStorage only: not in the URL, not in a cookie.
    expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBe(T.alice);
    expect(page.url()).not.toContain(T.alice);
    expect(await page.cookies()).toEqual([]);
    // A reload stays signed in; sign out forgets the token.
    await page.reload();
    await page.waitForSelector('#rows tr', { visible: true });
    await page.click('#signout');
    await page.waitForSelector('#signin', { visible: true });
    expect(await page.evaluate(() => sessionStorage.getItem('satchel.token'))).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('pages through sessions with Older and Newer', async () => {
    const api = apiClient(server.url, T.pager);
    const ids: string[] = [];
    for (let i = 1; i <= 7; i++)
      ids.push((await api('POST', '/v1/sessions', { task: `paged session ${i}` })).json.id);
    const newestFirst = ids.slice().reverse();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui?limit=3`);
    await signIn(page, T.pager);
    const shown = async () => {
      await page.waitForSelector('#rows tr', { visible: true });
      return page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
    };
    expect(await shown()).toEqual(newestFirst.slice(0, 3));
    expect(await page.$eval('#prev', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await page.click('#next');
    await page.waitForFunction(
      () => document.querySelector('#page-label')?.textContent === 'Page 2',
    );
    expect(await shown()).toEqual(newestFirst.slice(3, 6));
    await page.click('#next');
    await page.waitForFunction(
      () => document.querySelector('#page-label')?.textContent === 'Page 3',
    );
    expect(await shown()).toEqual(newestFirst.slice(6));
    expect(await page.$eval('#next', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await page.click('#prev');
    await page.waitForFunction(
      () => document.querySelector('#page-label')?.textContent === 'Page 2',
    );
    expect(await shown()).toEqual(newestFirst.slice(3, 6));
    await page.close();
  });

  it('open mode: no sign-in, the list shows at once', async () => {
    const api = apiClient(openServer.url, null);
    await api('POST', '/v1/sessions', { task: 'open mode session' });
    const { page } = await openPage(browser);
    await page.goto(`${openServer.url}/ui`);
    expect(await visibleText(page, '#rows')).toContain('open mode session');
    expect(await page.$eval('#signin', (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(await visibleText(page, '#who')).toContain('Open mode');
    await page.close();
  });
});

describe('session browser: flags and metadata', () => {
  it('the list shows taint and sandbox badges from the list entries; the header shows metadata', async () => {
    const api = apiClient(server.url, T.flags);
    const flagged = await api('POST', '/v1/sessions', {
      task: 'sandboxed and tainted',
      sandbox: true,
      untrusted_ingested: true,
      episode_untrusted: true,
      metadata: { team: 'infra', ticket: 'OPS-7' },
      messages: [{ role: 'user', content: 'run it in the sandbox' }],
    });
    const plain = await api('POST', '/v1/sessions', {
      task: 'plain session',
      messages: [{ role: 'user', content: 'nothing special' }],
    });
    expect([flagged.status, plain.status]).toEqual([201, 201]);
    // The list entries carry the flags and the metadata (GET /v1/sessions, v1.1).
    const entries = (await api('GET', '/v1/sessions')).json.sessions as Record<string, unknown>[];
    expect(entries.find((e) => e.id === flagged.json.id)).toMatchObject({
      sandbox: true,
      untrusted_ingested: true,
      episode_untrusted: true,
      metadata: { team: 'infra', ticket: 'OPS-7' },
    });
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await signIn(page, T.flags);
    await page.waitForSelector('#rows tr', { visible: true });
    const badgesOf = (id: string) =>
      page.$$eval(`#rows tr[data-id="${id}"] .badge`, (els) =>
        els.map((el) => `${el.className}: ${el.textContent}`),
      );
    expect(await badgesOf(flagged.json.id)).toEqual([
      'badge taint: untrusted',
      'badge taint: episode untrusted',
      'badge sandbox: sandbox',
    ]);
    expect(await badgesOf(plain.json.id)).toEqual([]);
    await page.click(`#rows tr[data-id="${flagged.json.id}"] a`);
    await page.waitForSelector('#messages li', { visible: true });
    expect(await visibleText(page, '#badges')).toMatch(/untrusted.*sandbox/s);
    const metadata = await page.$$eval('#metadata dt, #metadata dd', (els) =>
      els.map((el) => el.textContent),
    );
    expect(metadata).toEqual(['team', 'infra', 'ticket', 'OPS-7']);
    expect(await visibleText(page, '#metadata-wrap')).toContain('Metadata');
    // A session without metadata shows no metadata heading.
    await page.goto(`${server.url}/ui/sessions/${plain.json.id}`);
    await page.waitForSelector('#messages li', { visible: true });
    expect(await page.$eval('#metadata-wrap', (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('session browser: search and live updates', () => {
  it('search runs session_search and marks the matched words', async () => {
    const api = apiClient(server.url, T.search);
    const hit = await api('POST', '/v1/sessions', {
      task: 'Cluster maintenance',
      messages: [
        { role: 'user', content: 'The kubernetes rollback of the payments service failed twice.' },
      ],
    });
    await api('POST', '/v1/sessions', {
      task: 'Unrelated',
      messages: [{ role: 'user', content: 'Write a haiku about autumn.' }],
    });
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await signIn(page, T.search);
    await page.waitForSelector('#rows tr', { visible: true });
    await page.type('#q', 'kubernetes rollback');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#result-list li mark', { visible: true });
    const results = await page.$$eval('#result-list li', (lis) =>
      lis.map((li) => ({
        id: li.getAttribute('data-id'),
        marks: Array.from(li.querySelectorAll('mark')).map((m) => m.textContent?.toLowerCase()),
      })),
    );
    expect(results.map((r) => r.id)).toEqual([hit.json.id]);
    expect(results[0]!.marks).toEqual(expect.arrayContaining(['kubernetes', 'rollback']));
    expect(await visibleText(page, '#result-h')).toContain('1 result');
    expect(await page.$eval('#list-wrap', (el) => (el as HTMLElement).hidden)).toBe(true);
    // No match: said so, not a blank list.
    await page.$eval('#q', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#q', 'zeppelin quasar');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      document.querySelector('#result-h')?.textContent?.startsWith('No results'),
    );
    await page.click('#clear-search');
    await page.waitForSelector('#rows tr', { visible: true });
    await page.close();
  });

  it('a new or updated session appears without a reload (the updated_after loop)', async () => {
    const api = apiClient(server.url, T.live);
    const first = await api('POST', '/v1/sessions', { task: 'already here' });
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui?poll=300`);
    await signIn(page, T.live);
    await page.waitForSelector('#rows tr', { visible: true });
    await page.evaluate(
      () => ((window as unknown as { sameDocument: boolean }).sameDocument = true),
    );
    const created = await api('POST', '/v1/sessions', { task: 'arrived while watching' });
    await page.waitForSelector(`#rows tr[data-id="${created.json.id}"]`, {
      visible: true,
      timeout: 5_000,
    });
    expect(await page.$eval('#rows tr', (tr) => tr.getAttribute('data-id'))).toBe(created.json.id);
    expect(
      await page.$eval(
        `#rows tr[data-id="${created.json.id}"]`,
        (tr) => (tr as HTMLElement).innerText,
      ),
    ).toContain('new');
    await api('POST', `/v1/sessions/${first.json.id}/messages`, {
      messages: [{ role: 'user', content: 'more' }],
    });
    await page.waitForFunction(
      (id) => document.querySelector('#rows tr')?.getAttribute('data-id') === id,
      { timeout: 5_000 },
      first.json.id,
    );
    const top = await page.$eval('#rows tr', (tr) => (tr as HTMLElement).innerText);
    expect(top).toContain('updated');
    expect(top).toMatch(/already here/);
    expect(await page.$$eval('#rows tr', (trs) => trs.length)).toBe(2); // moved, not duplicated
    expect(
      await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
    ).toBe(true);
    await page.close();
  });

  it('after a live update pushes a row off page 1, Older still shows every session', async () => {
    const api = apiClient(server.url, T.liveP);
    const ids: string[] = [];
    for (const task of ['s1 oldest', 's2', 's3', 's4 newest']) {
      ids.push((await api('POST', '/v1/sessions', { task })).json.id);
      await new Promise((r) => setTimeout(r, 15));
    }
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui?limit=2&poll=250`);
    await signIn(page, T.liveP);
    const rowIds = () =>
      page.$$eval('#rows tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')!));
    await page.waitForSelector('#rows tr', { visible: true });
    expect(await rowIds()).toEqual([ids[3], ids[2]]);
    const fresh = (await api('POST', '/v1/sessions', { task: 's5 live' })).json.id as string;
    await page.waitForSelector(`#rows tr[data-id="${fresh}"]`, { visible: true, timeout: 5_000 });
    expect(await rowIds()).toEqual([fresh, ids[3]]); // s3 was pushed off page 1
    const seen = new Set(await rowIds());
    for (let n = 2; !(await page.$eval('#next', (b) => (b as HTMLButtonElement).disabled)); n++) {
      await page.click('#next');
      await page.waitForFunction(
        (label) => document.querySelector('#page-label')?.textContent === label,
        {},
        `Page ${n}`,
      );
      for (const id of await rowIds()) seen.add(id);
    }
    expect(
      [...ids, fresh].filter((id) => !seen.has(id)),
      'never shown',
    ).toEqual([]);
    await page.close();
  });
});

describe('session browser: the transcript', () => {
  it('renders roles, tool calls with their results, folds, reasoning, redactions, a wrapper, the cap marker, refs and the audit log', async () => {
    const api = apiClient(server.url, T.alice);
    const created = await api('POST', '/v1/sessions', richSession());
    const id = created.json.id as string;
    const stored = (await api('GET', `/v1/sessions/${id}`)).json;
    expect(JSON.stringify(stored)).not.toContain(FAKE_KEY);
    const { page, errors, violations } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await signIn(page, T.alice);
    await page.click(`#rows tr[data-id="${id}"] a`);
    await page.waitForSelector('#messages li', { visible: true });
    expect(new URL(page.url()).pathname).toBe(`/ui/sessions/${id}`);
    expect(await visibleText(page, '#task')).toBe('Fix the flaky deploy pipeline');
    const roles = await page.$$eval('#messages > li', (lis) =>
      lis.map((li) => li.querySelector('.role')?.textContent),
    );
    // Tool results sit under their calls, not as items of their own.
    expect(roles).toEqual(['system', 'user', 'size cap', 'assistant', 'user', 'assistant']);
    // Redactions marked, in the text and in the tool call arguments.
    expect(await page.$$eval('#m2 mark.redacted', (m) => m.length)).toBe(1);
    expect(await page.$$eval('.tool-call mark.redacted', (m) => m.length)).toBeGreaterThan(0);
    // The cap marker is shown as such.
    expect(await visibleText(page, '#m3')).toContain(
      '3 earlier message groups removed by the size cap',
    );
    // Tool calls: pretty JSON arguments, collapsible, with the result under each.
    const calls = await page.$$('.tool-call');
    expect(calls).toHaveLength(2);
    const firstCall = await calls[0]!.evaluate((d) => ({
      open: (d as HTMLDetailsElement).open,
      text: (d as HTMLElement).innerText,
    }));
    expect(firstCall.open).toBe(true);
    expect(firstCall.text).toContain('read_file');
    expect(firstCall.text).toContain('"path": "deploy.yaml"');
    expect(firstCall.text).toContain('stages:');
    expect(await calls[1]!.evaluate((d) => (d as HTMLElement).innerText)).toContain('not JSON');
    await page.click('.tool-call summary');
    expect(await calls[0]!.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    // The long result is folded until opened; its text is built then.
    const fold = await page.$('.tool-call .fold');
    expect(
      await fold!.evaluate((d) => ({
        open: (d as HTMLDetailsElement).open,
        summary: d.querySelector('summary')!.textContent,
      })),
    ).toMatchObject({ open: false });
    expect(await fold!.evaluate((d) => d.textContent)).not.toContain('line 120');
    await fold!.evaluate((d) => d.querySelector('summary')!.click());
    // Its text is built on the `toggle` event, which the browser fires in a task after the click.
    await page.waitForFunction(() =>
      (document.querySelector('.tool-call .fold') as HTMLElement | null)?.innerText.includes(
        'line 120: deploy step output',
      ),
    );
    expect(await fold!.evaluate((d) => (d as HTMLElement).innerText)).toContain(
      'line 120: deploy step output',
    );
    // Reasoning folded.
    const reasoning = await page.$eval('.reasoning', (d) => ({
      open: (d as HTMLDetailsElement).open,
      summary: d.querySelector('summary')!.textContent,
    }));
    expect(reasoning.open).toBe(false);
    expect(reasoning.summary).toContain('Reasoning');
    // The wrapper is a labelled block with its source; the text around it stays text. Scrolled to first,
    // as a reader would: the open result above pushed it off screen, and items use content-visibility:
    // auto, so Chromium reports no innerText for it until it is near the viewport.
    await page.$eval('#m7', (el) => el.scrollIntoView({ block: 'center' }));
    await page.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
    );
    const wrapper = await page.$eval('.untrusted', (el) => ({
      label: el.getAttribute('aria-label'),
      text: (el as HTMLElement).innerText,
    }));
    expect(wrapper.label).toBe('Untrusted content from webhook:github');
    expect(wrapper.text).toContain('Deploy broke after merging #42');
    expect(wrapper.text).not.toContain('untrusted_content_0123456789abcdef');
    expect(await visibleText(page, '#m7')).toContain('What do you think?');
    // Refs as text, never links.
    const refs = await visibleText(page, '#refs');
    expect(refs).toContain('https://github.com/acme/deploy');
    expect(refs).toContain('jira://OPS-1234');
    expect(await page.$$eval('#refs a', (a) => a.length)).toBe(0);
    // The audit log.
    await page.waitForSelector('#audit li time');
    const audit = await visibleText(page, '#audit');
    expect(audit).toMatch(/create by laptop → revision 1/);
    expect(audit).toMatch(/redaction/);
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it("shows the cap's marker as such in its current wording too (no 'earlier')", async () => {
    const api = apiClient(server.url, T.alice);
    const marker =
      '[satchel] 2 message groups were removed to keep this session under its size limit.';
    const id = (
      await api('POST', '/v1/sessions', {
        task: 'current cap marker',
        messages: [
          { role: 'system', content: 'You are an agent.' },
          { role: 'system', content: marker },
          { role: 'user', content: 'go on' },
        ],
      })
    ).json.id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.alice);
    await page.waitForSelector('#messages li', { visible: true });
    const cap = await page.$$eval('#messages li.cap-marker .cap', (els) =>
      els.map((el) => el.textContent),
    );
    expect(cap).toEqual(['2 message groups removed by the size cap.']);
    await page.close();
  });

  it('shows the text of Responses-format parts (input_text, output_text, refusal)', async () => {
    const api = apiClient(server.url, T.parts);
    const created = await api('POST', '/v1/sessions', {
      task: 'agents sdk session',
      messages: [
        { role: 'user', content: [{ type: 'input_text', text: 'Where is the deploy log kept?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'It is in /var/log/deploy.log on the runner.' },
            { type: 'input_image', image_url: 'https://example.com/a.png' },
          ],
        },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot share the key.' }] },
      ],
    });
    expect(created.status).toBe(201);
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${created.json.id}`);
    await signIn(page, T.parts);
    await page.waitForSelector('#messages li', { visible: true });
    const text = await visibleText(page, '#messages');
    expect(text).toContain('Where is the deploy log kept?');
    expect(text).toContain('It is in /var/log/deploy.log on the runner.');
    expect(text).toContain('I cannot share the key.');
    expect(text).toContain('[input_image part, not shown]');
    expect(text).not.toMatch(/(input_text|output_text|refusal) part, not shown/);
    await page.close();
  });

  it('downloads the stored JSON as a file', async () => {
    const api = apiClient(server.url, T.alice);
    const id = (
      await api('POST', '/v1/sessions', {
        task: 'download me',
        messages: [{ role: 'user', content: 'hello' }],
      })
    ).json.id as string;
    const dir = mkdtempSync(join(tmpdir(), 'satchel-ui-download-'));
    const { page } = await openPage(browser);
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir });
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.alice);
    await page.waitForSelector('#messages li', { visible: true });
    await page.click('#download');
    const file = join(dir, `${id}.json`);
    // Chromium may show the file before it has written all of it: wait (at most 5 s) for whole JSON.
    let saved: unknown;
    for (let i = 0; i < 50 && saved === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
      } catch {
        saved = undefined;
      }
    }
    expect(readdirSync(dir)).toContain(`${id}.json`);
    expect(saved).toEqual((await api('GET', `/v1/sessions/${id}`)).json);
    rmSync(dir, { recursive: true, force: true });
    await page.close();
  });

  it('an unknown session says so', async () => {
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/20200101-00000000000000000000000000000000`);
    await signIn(page, T.alice);
    expect(await visibleText(page, '#task')).toBe('Session not found');
    expect(await visibleText(page, '#error')).toContain('404');
    await page.close();
  });
});

describe('session browser: actions', () => {
  it('append adds a message; a stale page gets "changed since you loaded it" and writes nothing', async () => {
    const api = apiClient(server.url, T.acts);
    const id = (
      await api('POST', '/v1/sessions', {
        task: 'append here',
        messages: [{ role: 'user', content: 'first' }],
      })
    ).json.id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.acts);
    await page.waitForSelector('#actions', { visible: true });
    await page.type('#append-text', 'hello from the browser');
    await page.click('#append-btn');
    await page.waitForFunction(() =>
      document.querySelector('#messages')?.textContent?.includes('hello from the browser'),
    );
    expect(await visibleText(page, '#action-msg')).toContain('revision 2');
    expect(
      (await api('GET', `/v1/sessions/${id}`)).json.messages.map(
        (m: { content: string }) => m.content,
      ),
    ).toEqual(['first', 'hello from the browser']);
    // Someone else writes; this page still holds revision 2.
    await api('POST', `/v1/sessions/${id}/messages`, {
      messages: [{ role: 'user', content: 'from another device' }],
    });
    await page.type('#append-text', 'late write');
    await page.click('#append-btn');
    await page.waitForFunction(() =>
      document.querySelector('#action-msg')?.textContent?.includes('changed since you loaded it'),
    );
    const after = (await api('GET', `/v1/sessions/${id}`)).json;
    expect(after.messages.map((m: { content: string }) => m.content)).toEqual([
      'first',
      'hello from the browser',
      'from another device',
    ]);
    expect(await page.$eval('#append-text', (t) => (t as HTMLTextAreaElement).value)).toBe(
      'late write',
    ); // the draft is kept
    await page.click('#action-msg button'); // reload
    await page.waitForFunction(() =>
      document.querySelector('#messages')?.textContent?.includes('from another device'),
    );
    await page.close();
  });

  it('trim previews what it drops, then drops exactly that; a stale page trims nothing', async () => {
    const api = apiClient(server.url, T.acts);
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u1' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
      { role: 'assistant', content: 'a2' },
    ];
    const id = (await api('POST', '/v1/sessions', { task: 'trim here', messages })).json
      .id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.acts);
    await page.waitForSelector('#actions', { visible: true });
    await page.type('#trim-keep', '4'); // system + newest 3, but never starting on a tool result
    await page.click('#trim-preview');
    const preview = await visibleText(page, '#trim-out');
    expect(preview).toContain('drop 3 messages and keep 4');
    expect(await page.$$eval('#trim-out li', (lis) => lis.map((li) => li.textContent))).toEqual([
      'user: u1',
      'assistant: (1 tool call)',
      'tool: r1',
    ]);
    await page.click('#trim-btn');
    await page.waitForFunction(() =>
      document.querySelector('#action-msg')?.textContent?.startsWith('Trimmed'),
    );
    expect(await visibleText(page, '#action-msg')).toContain('3 messages dropped, 4 kept');
    const stored = (await api('GET', `/v1/sessions/${id}`)).json;
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual([
      'sys',
      'a1',
      'u2',
      'a2',
    ]);
    // Stale: another write lands, then trim from this page is refused.
    await api('POST', `/v1/sessions/${id}/messages`, {
      messages: [{ role: 'user', content: 'u3' }],
    });
    await page.$eval('#trim-keep', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#trim-keep', '2');
    await page.click('#trim-preview');
    await page.click('#trim-btn');
    await page.waitForFunction(() =>
      document.querySelector('#action-msg')?.textContent?.includes('changed since you loaded it'),
    );
    expect((await api('GET', `/v1/sessions/${id}`)).json.messages).toHaveLength(5);
    await page.close();
  });

  it('delete asks for confirmation, then deletes and returns to the list', async () => {
    const api = apiClient(server.url, T.acts);
    const id = (await api('POST', '/v1/sessions', { task: 'delete me' })).json.id as string;
    const { page, dialogs } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.acts);
    await page.waitForSelector('#actions', { visible: true });
    await page.click('#delete-ask');
    await page.waitForSelector('#delete-confirm', { visible: true });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('delete-no'); // the safe choice has focus
    await page.click('#delete-no');
    expect((await api('GET', `/v1/sessions/${id}`)).status).toBe(200);
    // Stale: another write lands, then delete from this page is refused (the server's 412 on If-Match).
    await api('POST', `/v1/sessions/${id}/messages`, {
      messages: [{ role: 'user', content: 'u' }],
    });
    await page.click('#delete-ask');
    await page.click('#delete-yes');
    await page.waitForFunction(() =>
      document.querySelector('#action-msg')?.textContent?.includes('changed since you loaded it'),
    );
    expect((await api('GET', `/v1/sessions/${id}`)).status).toBe(200);
    // Loaded again, it deletes.
    await page.reload();
    await page.waitForSelector('#actions', { visible: true });
    await page.click('#delete-ask');
    await Promise.all([page.waitForNavigation(), page.click('#delete-yes')]);
    expect(new URL(page.url()).pathname).toBe('/ui');
    await page.waitForFunction(
      (text) => document.querySelector('#status')?.textContent === text,
      {},
      `Deleted session ${id}.`,
    );
    expect(await visibleText(page, '#status')).toContain(`Deleted session ${id}`);
    expect((await api('GET', `/v1/sessions/${id}`)).status).toBe(404);
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('continue stores the message and shows the model reply as stored (local chat server)', async () => {
    chat.script({ reply: 'Rolled back to the previous release; the deploy is green.' });
    const api = apiClient(server.url, T.acts);
    const id = (
      await api('POST', '/v1/sessions', {
        task: 'continue here',
        messages: [{ role: 'user', content: 'deploy is red' }],
      })
    ).json.id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.acts);
    await page.waitForSelector('#actions', { visible: true });
    await page.type('#continue-text', 'Please roll back.');
    await page.click('#continue-btn');
    await page.waitForFunction(
      () => document.querySelector('#action-msg')?.textContent?.includes('The model replied'),
      { timeout: 20_000 },
    );
    const roles = await page.$$eval('#messages > li', (lis) =>
      lis.map(
        (li) =>
          `${li.querySelector('.role')?.textContent}: ${li.querySelector('.text')?.textContent}`,
      ),
    );
    expect(roles.slice(-2)).toEqual([
      'user: Please roll back.',
      'assistant: Rolled back to the previous release; the deploy is green.',
    ]);
    expect(chat.requests.at(-1)!.body.messages.at(-1)!.content).toContain('Please roll back.');
    await page.close();
  });

  it('a read-only token sees no write controls', async () => {
    const api = apiClient(server.url, T.alice);
    const id = (
      await api('POST', '/v1/sessions', {
        task: 'read only view',
        messages: [{ role: 'user', content: 'look only' }],
      })
    ).json.id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await signIn(page, T.aliceRo);
    await page.waitForSelector('#messages li', { visible: true });
    await page.waitForFunction(() =>
      document.querySelector('#ro-note')?.textContent?.includes('Read-only'),
    );
    expect(await page.$eval('#actions', (el) => (el as HTMLElement).hidden)).toBe(true);
    for (const sel of ['#append-btn', '#continue-btn', '#trim-btn', '#delete-ask'])
      expect(await page.$eval(sel, (el) => (el as HTMLElement).offsetParent === null)).toBe(true);
    expect(await visibleText(page, '#messages')).toContain('look only');
    await page.close();
  });
});

describe('session browser: the script as the Worker serves it', () => {
  it('runs when minified and bundled: the list and a transcript render, nothing fails', async () => {
    // The Workers serve the page script as a static asset the build writes (buildUiAssets: a minified
    // bundle of lib/ui/index.ts makes it, so the functions of lib/ui/client.ts get short names there);
    // it must still hold together. Build it so and serve it here.
    const dir = mkdtempSync(join(tmpdir(), 'satchel-ui-min-'));
    await buildUiAssets(dir);
    const script = readFileSync(join(dir, 'ui', 'app.js'), 'utf8');
    rmSync(dir, { recursive: true, force: true });
    expect(script).not.toContain('function sessionBrowser'); // really minified
    const api = apiClient(openServer.url, null);
    const id = (await api('POST', '/v1/sessions', richSession('Minified script session'))).json.id;
    const { page, errors, violations } = await openPage(browser);
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/ui/app.js')
        void req.respond({ status: 200, contentType: 'text/javascript', body: script });
      else void req.continue();
    });
    await page.goto(`${openServer.url}/ui`);
    expect(await visibleText(page, `#rows tr[data-id="${id}"]`)).toContain('Minified script');
    await page.click(`#rows tr[data-id="${id}"] a`);
    await page.waitForSelector('.tool-call', { visible: true });
    expect(await visibleText(page, '#m2')).toContain('[REDACTED]');
    await page.waitForSelector('#audit li time');
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });
});

describe('session browser: safety', () => {
  const PAYLOADS = [
    '<script>window.__xss = "script"</script>',
    '<img src=x onerror="window.__xss=\'img\'">',
    '<svg onload="window.__xss=\'svg\'"><circle r=5></circle></svg>',
    'javascript:window.__xss="uri"',
    '<a href="javascript:window.__xss=1">click me</a>',
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    '"><img src=x onerror=window.__xss=1>',
    '<untrusted_content_0123456789abcdef source="x&quot; onmouseover=&quot;window.__xss=1">\n<img src=x onerror="window.__xss=\'wrapped\'">\n</untrusted_content_0123456789abcdef>',
    '</untrusted_content_0123456789abcdef><script>window.__xss="closer"</script>',
    '<untrusted_content_ZZZZ source="<img src=x onerror=window.__xss=1>">look-alike</untrusted_content_ZZZZ>',
    '<untrusted_content_fedcba9876543210 source="a"><b>unclosed look-alike',
  ];

  it('stores the XSS corpus in every field and proves nothing runs (list, search, transcript, folds)', async () => {
    const api = apiClient(server.url, T.xss);
    const joined = PAYLOADS.join('\n');
    const created = await api('POST', '/v1/sessions', {
      task: `xss probe ${PAYLOADS[0]}${PAYLOADS[1]}`,
      model: PAYLOADS[1],
      provider: PAYLOADS[0],
      messages: [
        { role: 'system', content: joined },
        ...PAYLOADS.map((p) => ({ role: 'user', content: `xss probe ${p}` })),
        {
          role: 'assistant',
          content: PAYLOADS[6],
          reasoning_content: joined,
          tool_calls: [
            {
              id: PAYLOADS[1],
              type: 'function',
              function: {
                name: PAYLOADS[0],
                arguments: JSON.stringify({ html: PAYLOADS[1], uri: PAYLOADS[3] }),
              },
            },
            { id: 'c2', type: 'function', function: { name: '<b>t</b>', arguments: PAYLOADS[2] } },
          ],
        },
        { role: 'tool', tool_call_id: PAYLOADS[1], content: joined.repeat(20) },
        { role: 'tool', tool_call_id: 'c2', name: PAYLOADS[0], content: PAYLOADS[7] },
      ],
      metadata: { [PAYLOADS[1]!]: PAYLOADS[0]!, note: PAYLOADS[4]! },
      external_refs: [
        { kind: 'link', uri: 'javascript:window.__xss=1', created_by: '<script>x</script>' },
        { kind: 'img', uri: '<img src=x onerror=window.__xss=1>' },
      ],
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const { page, errors, dialogs, violations } = await openPage(browser);
    const check = async () => {
      const found = await page.evaluate(() => {
        const app = document.getElementById('content')!;
        const bad = app.querySelectorAll('script,img,svg,iframe,object,embed,b,style,link');
        const handlers = Array.from(app.querySelectorAll('*')).filter((el) =>
          Array.from(el.attributes).some((a) => a.name.startsWith('on')),
        );
        // The page's own links: from the root, or relative to the page (./ui, ../../ui: review s52c).
        const jsLinks = Array.from(document.querySelectorAll('a')).filter(
          (a) => !/^(\/|#|\.\.?\/)/.test(a.getAttribute('href') ?? ''),
        );
        return {
          xss: (window as unknown as { __xss?: unknown }).__xss ?? null,
          bad: bad.length,
          handlers: handlers.length,
          jsLinks: jsLinks.map((a) => a.getAttribute('href')),
        };
      });
      expect(found).toEqual({ xss: null, bad: 0, handlers: 0, jsLinks: [] });
    };
    await page.goto(`${server.url}/ui`);
    await signIn(page, T.xss);
    const row = await visibleText(page, '#rows');
    expect(row).toContain('xss probe <script>window.__xss = "script"</script>'); // shown as text
    await check();
    await page.type('#q', 'xss probe');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#result-list li', { visible: true });
    await check();
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await page.waitForSelector('#messages li', { visible: true });
    // Open every fold so the lazily built text is in the page too, and hover everything.
    for (let i = 0; i < 3; i++)
      await page.$$eval('details:not([open]) > summary', (all) =>
        all.forEach((s) => (s as HTMLElement).click()),
      );
    await page.waitForFunction(() => document.querySelectorAll('details:not([open])').length === 0);
    for (const el of (await page.$$('#messages *')).slice(0, 200))
      await el.hover().catch(() => undefined);
    const text = await visibleText(page, '#messages');
    for (const p of [PAYLOADS[0]!, PAYLOADS[1]!, PAYLOADS[3]!]) expect(text).toContain(p);
    // The real wrapper in the corpus becomes a block; its source shown as text, look-alikes stay text.
    expect(await page.$$eval('.untrusted', (els) => els.length)).toBeGreaterThan(0);
    expect(text).toContain('<untrusted_content_ZZZZ');
    expect(text).toContain('unclosed look-alike');
    expect(await visibleText(page, '#refs')).toContain('javascript:window.__xss=1');
    const meta = await visibleText(page, '#metadata');
    for (const p of [PAYLOADS[0]!, PAYLOADS[1]!, PAYLOADS[4]!]) expect(meta).toContain(p);
    await check();
    // A hostile id in the URL is text too.
    await page.goto(
      `${server.url}/ui/sessions/${encodeURIComponent('<img src=x onerror=window.__xss=1>')}`,
    );
    await page.waitForFunction(() => document.querySelector('#error')?.textContent);
    await check();
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('serves a strict CSP on every UI response and no inline script', async () => {
    for (const path of ['/ui', '/ui/sessions/x', '/ui/app.js', '/ui/app.css']) {
      const res = await fetch(server.url + path);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("require-trusted-types-for 'script'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      const body = await res.text();
      if (path.startsWith('/ui/app')) continue;
      expect(body).not.toMatch(/<script(?![^>]*\bsrc=)/); // every script has a src
      expect(body).not.toMatch(/\sstyle=|<style|https?:\/\//);
    }
  });
});

describe('session browser: keyboard, accessibility, screenshots', () => {
  it('works with the keyboard only: sign in, open a session, unfold a result, append', async () => {
    const api = apiClient(server.url, T.keys);
    const id = (await api('POST', '/v1/sessions', richSession('keyboard session'))).json
      .id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    await page.waitForSelector('#signin', { visible: true });
    await page.keyboard.type(T.keys); // the token box has focus
    await page.keyboard.press('Enter');
    await page.waitForSelector('#rows tr', { visible: true });
    await tabTo(page, `#rows tr[data-id="${id}"] a`);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await page.waitForSelector('#actions', { visible: true });
    await tabTo(page, '.tool-call .fold > summary');
    await page.keyboard.press('Enter');
    expect(await page.$eval('.tool-call .fold', (d) => (d as HTMLDetailsElement).open)).toBe(true);
    await tabTo(page, '#append-text');
    await page.keyboard.type('typed without a mouse');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('append-btn');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      document.querySelector('#messages')?.textContent?.includes('typed without a mouse'),
    );
    // Focus is visible: the focused element has an outline.
    await tabTo(page, '#download');
    expect(
      await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle),
    ).not.toBe('none');
    await page.close();
  });

  it('axe-core finds no serious or critical violations on the list and the transcript', async () => {
    const api = apiClient(server.url, T.keys);
    const id = (await api('POST', '/v1/sessions', richSession('axe session'))).json.id as string;
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/ui`);
    expect(await axeViolations(page)).toEqual([]); // the sign-in form
    await signIn(page, T.keys);
    await page.waitForSelector('#rows tr', { visible: true });
    expect(await axeViolations(page)).toEqual([]);
    await page.goto(`${server.url}/ui/sessions/${id}`);
    await page.waitForSelector('#audit li', { visible: true });
    for (const summary of await page.$$('details:not([open]) > summary')) await summary.click();
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it('screenshots at 1280 px and 390 px, with nothing wider than the screen', async () => {
    const api = apiClient(server.url, T.keys);
    const id = (await api('POST', '/v1/sessions', richSession('screenshot session'))).json
      .id as string;
    for (const width of [1280, 390]) {
      const { page } = await openPage(browser, width, 844);
      await page.goto(`${server.url}/ui`);
      await signIn(page, T.keys);
      await page.waitForSelector('#rows tr', { visible: true });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        width,
      );
      await screenshot(page, `list-${width}`);
      await page.goto(`${server.url}/ui/sessions/${id}`);
      await page.waitForSelector('#audit li', { visible: true });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        width,
      );
      await screenshot(page, `transcript-${width}`);
      await page.close();
    }
  });
});
