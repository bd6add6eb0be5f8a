// Review s60a, finding 2: the live list never showed a session that became visible with an updated_at
// older than the newest it had shown (an import with its own updated_at, as `satchel import` sends; a
// slow write; another server's clock a little behind), though it belongs on page 1: updated_after never
// returns it, and the 12th poll's re-read of page 1 acted only when a row on screen was gone.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s60a_live_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

describe('the live list and a session stamped before the newest one shown (review s60a)', () => {
  it('shows it on page 1 once page 1 is read again (every 12th poll)', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const make = async (id: string, body: Record<string, unknown> = {}) =>
      expect((await api('POST', '/v1/sessions', { id, task: id, ...body })).status).toBe(201);
    await make('older', { created_at: ago(120), updated_at: ago(120) });
    await make('newest');
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui?poll=250`);
      await signIn(page, TOK);
      await page.waitForSelector('#rows tr');
      const rows = () => page.$$eval('#rows tr', (t) => t.map((r) => r.getAttribute('data-id')));
      expect(await rows()).toEqual(['newest', 'older']);
      await page.evaluate(() => ((window as unknown as { same: boolean }).same = true));

      // Another device imports a session last written a minute ago: it belongs between the two.
      await make('imported', { created_at: ago(60), updated_at: ago(60) });
      const listed = (await api('GET', '/v1/sessions?limit=50')).json.sessions.map(
        (s: { id: string }) => s.id,
      );
      expect(listed).toEqual(['newest', 'imported', 'older']);
      // 12 polls at 250 ms read page 1 again. Before its fix: ['newest', 'older'] for good.
      await page.waitForFunction(() => document.querySelectorAll('#rows tr').length === 3, {
        timeout: 10_000,
      });
      expect(await rows()).toEqual(listed);
      expect(await page.evaluate(() => (window as unknown as { same?: boolean }).same)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
