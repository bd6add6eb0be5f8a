// Review s60a, finding 6: /ui?limit=<a fraction> sent the fraction to the API, which answered 400: the
// list never loaded, and the live loop asked for the same 400 every poll without a word.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s60a_limit_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

describe('?limit= that is not a whole number (review s60a)', () => {
  it('lists the sessions, the limit rounded down as an out-of-range one is clamped', async () => {
    const api = apiClient(ui.srv.url, TOK);
    for (const id of ['one', 'two', 'three'])
      expect((await api('POST', '/v1/sessions', { id, task: id })).status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?limit=2.5&poll=300`);
      await signIn(page, TOK);
      await new Promise((r) => setTimeout(r, 1500));
      const state = await page.evaluate(() => ({
        error: document.getElementById('error')!.textContent,
        rows: document.querySelectorAll('#rows tr').length,
        older: !(document.getElementById('next') as HTMLButtonElement).disabled,
      }));
      // Before its fix: "Could not list sessions. The server answered 400: limit must be an integer…".
      expect(state).toEqual({ error: '', rows: 2, older: true });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
