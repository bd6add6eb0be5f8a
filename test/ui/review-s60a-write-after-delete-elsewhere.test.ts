// Review s60a, finding 5: a write answered 404 (the session was deleted elsewhere) left the transcript,
// facts, Download and every write control on screen; only a Reload forgot them. docs/api.md ("Browser"):
// a session deleted elsewhere shows "Session not found" and nothing of it.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s60a_w404_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

describe('a write to a session deleted elsewhere (review s60a)', () => {
  for (const [action, act] of [
    ['an append', '#append-btn'],
    ['a delete', '#delete-yes'],
  ] as const)
    it(`${action} answered 404 shows "Session not found" and nothing of the session`, async () => {
      const api = apiClient(ui.srv.url, TOK);
      const id = `w-${act.slice(1)}`;
      const made = await api('POST', '/v1/sessions', {
        id,
        task: 'deleted meanwhile',
        messages: [{ role: 'user', content: 'old words' }],
      });
      expect(made.status).toBe(201);
      const { page, errors } = await openPage(ui.browser);
      try {
        await page.goto(`${ui.srv.url}/ui/sessions/${id}`);
        await signIn(page, TOK);
        await page.waitForSelector('#actions', { visible: true });
        expect((await api('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
        if (act === '#append-btn') await page.type('#append-text', 'hello?');
        else await page.click('#delete-ask');
        await page.click(act);
        await page.waitForFunction(() => document.getElementById('action-msg')!.textContent);
        const state = await page.evaluate(() => ({
          msg: document.getElementById('action-msg')!.textContent,
          task: document.getElementById('task')!.textContent,
          transcript: document.getElementById('messages')!.textContent,
          facts: document.getElementById('facts')!.textContent,
          actions: !document.getElementById('actions')!.hidden,
          download: !document.getElementById('download')!.hidden,
          focus: document.activeElement?.id,
        }));
        // Before its fix: the transcript, facts, Download and the write controls stayed.
        expect(state).toEqual({
          msg: `Nothing was changed. The server answered 404: session ${id} does not exist.`,
          task: 'Session not found',
          transcript: '',
          facts: '',
          actions: false,
          download: false,
          focus: 'task', // the button pressed is hidden now
        });
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    });
});
