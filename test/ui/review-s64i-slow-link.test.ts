// Review s64i. The page's call deadlines (review s64a) counted the answer's body too: on a slow link a large
// session never loaded ("Could not load the session"). Now a deadline ends when the answer starts.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s64i_deadline_0123456789';
const ui = browserAndServer(`ns=${TOK}`);
const KB = 1024;

describe('page deadlines on a slow link', () => {
  it('a 2.4 MB session over a 64 KB/s link (about 38 s to download)', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const big = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content:
        `${i} ` +
        Array.from({ length: (200 * KB) / 8 }, (_, j) =>
          `w${(j * 7919 + i) % 99991}`.padEnd(8, 'x'),
        ).join(''),
    }));
    const made = await api('POST', '/v1/sessions', { id: 'big', task: 'big', messages: big });
    expect(made.status).toBe(201);
    const { page } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui/sessions/big`);
      await signIn(page, TOK).catch(() => undefined);
      const cdp = await page.createCDPSession();
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 20,
        downloadThroughput: 64 * KB,
        uploadThroughput: 10 * 1024 * KB,
      });
      const t0 = Date.now();
      await page.reload({ waitUntil: 'domcontentloaded' });
      await new Promise((r) => setTimeout(r, 50_000));
      const state = await page.evaluate(() => ({
        task: document.getElementById('task')!.textContent,
        error: document.getElementById('error')!.textContent,
        messages: document.querySelectorAll('#messages li').length,
      }));
      console.log('after', Date.now() - t0, 'ms:', JSON.stringify(state));
    } finally {
      await page.close();
    }
  });
});
