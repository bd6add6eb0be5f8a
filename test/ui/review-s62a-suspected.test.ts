// Review s62a's suspected items, each driven in Chromium: a Reload answering after a write's 404 put the
// deleted session back on screen; signing in again with another namespace's token kept the live loop's
// updated_after of the old namespace; `/ui/sessions/%ZZ` left "Checking access…" and "Loading…" on
// screen; search marks missed the accent-folded matches the server finds (`cafe` in `Café`).
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, delayOnce, openPage, signIn } from './browser.js';

const TOK = 'tok_s62as_first_0123456789';
const OTHER = 'tok_s62as_other_0123456789';
const ui = browserAndServer(`ns=${TOK},other=${OTHER}`);

/**
 * A session in OTHER's namespace, then a newer one in TOK's (ids `<tag>-other`, `<tag>-first`), a page on
 * the list polling every 300 ms and signed in with TOK, and the `updated_after` of every request it sends.
 */
async function listOfTwoNamespaces(tag: string) {
  const older = await apiClient(ui.srv.url, OTHER)('POST', '/v1/sessions', {
    id: `${tag}-other`,
    task: 'other',
  });
  expect(older.status).toBe(201);
  await new Promise((r) => setTimeout(r, 30));
  const newer = await apiClient(ui.srv.url, TOK)('POST', '/v1/sessions', {
    id: `${tag}-first`,
    task: 'first',
  });
  expect(newer.status).toBe(201);
  const watched = await openPage(ui.browser);
  const polls: string[] = [];
  watched.page.on('request', (r) => {
    const after = new URL(r.url()).searchParams.get('updated_after');
    if (after) polls.push(after);
  });
  await watched.page.goto(`${ui.srv.url}/ui?poll=300`);
  await signIn(watched.page, TOK);
  await watched.page.waitForSelector(`#rows tr[data-id="${tag}-first"]`);
  /** The polls of the next 1.2 s: each asks for changes after `older`'s time (its namespace's newest). */
  const pollsFromOlder = async () => {
    polls.length = 0;
    await new Promise((r) => setTimeout(r, 1200));
    expect(polls.length).toBeGreaterThan(0);
    expect(new Set(polls)).toEqual(new Set([older.json.updated_at]));
  };
  return { ...watched, pollsFromOlder };
}

describe('the session browser (review s62a, suspected items)', () => {
  it('a Reload answering after an append found the session deleted does not show it again', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const made = await api('POST', '/v1/sessions', {
      id: 'gone-late',
      task: 'deleted while a reload was on its way',
      messages: [{ role: 'user', content: 'the old transcript' }],
    });
    expect(made.status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui/sessions/gone-late`);
      await signIn(page, TOK);
      await page.waitForSelector('#actions', { visible: true });
      // The Reload is answered (200, the session) before the delete, and delivered after the append's 404.
      await delayOnce(
        page,
        (r) => r.method() === 'GET' && r.url().endsWith('/v1/sessions/gone-late'),
      );
      await page.click('#reload');
      await new Promise((r) => setTimeout(r, 200));
      expect((await api('DELETE', '/v1/sessions/gone-late')).status).toBe(204);
      await page.type('#append-text', 'appended after the delete');
      await page.click('#append-btn');
      await page.waitForFunction(
        () => document.getElementById('task')!.textContent === 'Session not found',
      );
      await new Promise((r) => setTimeout(r, 2000)); // the Reload's answer has landed
      const state = await page.evaluate(() => ({
        task: document.getElementById('task')!.textContent,
        transcript: document.getElementById('messages')!.textContent,
        actions: !document.getElementById('actions')!.hidden,
      }));
      // Before its fix: the deleted session's task and transcript, and the write controls, came back.
      expect(state.task).toBe('Session not found');
      expect(state.transcript).not.toContain('the old transcript');
      expect(state.actions).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("signing in again with another namespace's token polls from that namespace's newest", async () => {
    const { page, errors, pollsFromOlder } = await listOfTwoNamespaces('in');
    try {
      // The first token stops being accepted (as after a rotation): the next poll asks for a token.
      await page.evaluate(() =>
        sessionStorage.setItem('satchel.token', 'tok_s62as_not_accepted_01'),
      );
      await signIn(page, OTHER);
      await page.waitForSelector('#rows tr[data-id="in-other"]');
      // Before its fix: every poll asked for changes after the first namespace's newest, so a session
      // of this namespace stamped before it (an import, a slow write) was missed for 30 s.
      await pollsFromOlder();
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('Back into a list after signing out and in with another token loads it again', async () => {
    const { page, errors, pollsFromOlder } = await listOfTwoNamespaces('back');
    try {
      await Promise.all([page.waitForNavigation(), page.click('#signout')]);
      await signIn(page, OTHER);
      await page.waitForSelector('#rows tr[data-id="back-other"]');
      await page.goBack(); // the first list, from the browser's cache
      // Before its fix: its rows had gone with the sign-out (a blank list), and every poll asked for
      // changes after the first namespace's newest.
      await page.waitForSelector('#rows tr[data-id="back-other"]', { timeout: 10_000 });
      await pollsFromOlder();
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a session address with broken escapes says so, and nothing is left loading', async () => {
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui/sessions/%ZZ`);
      await page.waitForFunction(() => document.getElementById('error')!.textContent!.length > 0);
      const state = await page.evaluate(() => ({
        task: document.getElementById('task')!.textContent,
        error: document.getElementById('error')!.textContent,
        who: document.getElementById('who')!.textContent!.trim(),
        status: document.getElementById('status')!.textContent!.trim(),
      }));
      expect(state.task).toBe('Session not found');
      expect(state.error).toContain('its escapes are broken');
      // Before its fix: "Checking access…" and "Loading…" stayed for good.
      expect(state.who).not.toContain('Checking access');
      expect(state.status).not.toContain('Loading');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('marks the accented words a search for their plain form finds', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const made = await api('POST', '/v1/sessions', {
      id: 'cafe',
      task: 'Café opening hours',
      messages: [{ role: 'user', content: 'When does the CAFÉ on Rue Molière open?' }],
    });
    expect(made.status).toBe(201);
    const found = await api('POST', '/v1/session_search', { action: 'search', query: 'cafe' });
    expect(found.status).toBe(200);
    expect(JSON.stringify(found.json)).toContain('cafe');
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui`);
      await signIn(page, TOK);
      await page.waitForSelector('#rows tr');
      await page.type('#q', 'cafe moliere');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#results li[data-id="cafe"]');
      const marks = await page.$$eval('#results li[data-id="cafe"] mark', (ms) =>
        ms.map((m) => m.textContent),
      );
      // Before its fix: nothing marked (the page lower-cased, the server also folds accents).
      expect(marks).toContain('Café');
      expect(marks.map((m) => m!.toLowerCase())).toContain('molière');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
