// Review s64a, one session's page, driven in Chromium: Back after signing out and in again with the same
// token rendered into the content the sign-out cleared (a blank page, "page is missing #task"); the
// scope probe's late answer showed the write controls again under "Session not found".
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, delayOnce, openPage, signIn } from './browser.js';

const TOK = 'tok_s64a_session_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

describe('one session (review s64a)', () => {
  it('Back after signing out and in again with the same token shows the transcript', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const made = await api('POST', '/v1/sessions', {
      id: 'keep-b',
      task: 'session b',
      messages: [{ role: 'user', content: 'hello transcript' }],
    });
    expect(made.status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.evaluateOnNewDocument(() => {
        window.addEventListener('pageshow', (ev) => {
          if (ev.persisted) sessionStorage.setItem('test.restored', '1');
        });
      });
      await page.goto(`${ui.srv.url}/ui/sessions/keep-b`);
      await signIn(page, TOK);
      await page.waitForSelector('#messages li', { visible: true });
      await Promise.all([page.waitForNavigation(), page.click('#signout')]);
      await signIn(page, TOK); // the same token, on the list
      await page.waitForSelector('#rows tr');
      await page.goBack(); // the transcript page, from the browser's cache
      // Before the fix: no task, no transcript, and the page error "page is missing #task".
      await page.waitForSelector('#messages li', { visible: true, timeout: 10_000 });
      const state = await page.evaluate(() => ({
        restored: sessionStorage.getItem('test.restored'),
        url: location.pathname,
        task: document.getElementById('task')!.textContent,
        messages: document.querySelectorAll('#messages li').length,
      }));
      expect(state).toEqual({
        restored: '1',
        url: '/ui/sessions/keep-b',
        task: 'session b',
        messages: 1,
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('the scope probe answering after a Reload found the session deleted shows no write controls', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const made = await api('POST', '/v1/sessions', {
      id: 'probe-late',
      task: 'probe late',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(made.status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      // The probe's answer (428: writable) is delivered 1.5 s late.
      await delayOnce(page, (r) => r.method() === 'PUT' && r.url().endsWith('/ui-write-probe'));
      await page.goto(`${ui.srv.url}/ui/sessions/probe-late`);
      await signIn(page, TOK);
      await page.waitForSelector('#messages li');
      expect((await api('DELETE', '/v1/sessions/probe-late')).status).toBe(204);
      await page.click('#reload');
      await page.waitForFunction(
        () => document.getElementById('task')!.textContent === 'Session not found',
      );
      await new Promise((r) => setTimeout(r, 2000)); // the probe has answered
      const state = await page.evaluate(() => ({
        task: document.getElementById('task')!.textContent,
        actions: !document.getElementById('actions')!.hidden,
      }));
      // Before the fix: { task: 'Session not found', actions: true } (Append, Continue, Trim, Delete).
      expect(state).toEqual({ task: 'Session not found', actions: false });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
