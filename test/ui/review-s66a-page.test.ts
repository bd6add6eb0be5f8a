// Review s66a, driven in Chromium. Finding 2: the audit timeline did not wrap long words, so an ingest
// source (a wrapper's source="…", which the session's own content names) or a long device label made the
// transcript page wider than a phone's screen. Suspected item: search titled its results "20 results"
// when it showed the first 20 of more.
import { describe, expect, it } from 'vitest';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

const TOK = 'tok_s66a_page_0123456789';
/** A device label with no break opportunity (underscores and dots), 72 characters. */
const DEVICE = 'ci_runner_eu_west_1_production_build_agent_0042.internal.example.com.lan';
const ui = browserAndServer(`ns/${DEVICE}=${TOK}`);

/** Ingest sources, as a wrapper's source="…" names them; '' for a session with no wrapper. */
const SOURCES = {
  url: 'web:https://raw.githubusercontent.com/acme/infrastructure/main/terraform/modules/eks_cluster/variables.tf',
  base64ish: 'tool:fetch:' + 'aHR0cHM6Ly9leGFtcGxlLmNvbS9kb2NzL2d1aWRlcy9nZXR0aW5nX3N0YXJ0ZWQ',
  none: '',
};
const TAG = 'untrusted_content_0123456789abcdef';

describe('the audit timeline at 390 px (review s66a)', () => {
  for (const [name, source] of Object.entries(SOURCES))
    it(`wraps a long device label and an ingest source like ${name}`, async () => {
      const api = apiClient(ui.srv.url, TOK);
      const id = `audit-${name}`;
      const made = await api('POST', '/v1/sessions', {
        id,
        task: 'read a page',
        messages: [
          { role: 'user', content: 'read it' },
          {
            role: 'tool',
            content: source ? `<${TAG} source="${source}">\npage text\n</${TAG}>` : 'text',
          },
        ],
      });
      expect(made.status).toBe(201);
      const { page, errors } = await openPage(ui.browser, 390, 800);
      try {
        await page.goto(`${ui.srv.url}/ui/sessions/${id}`);
        await signIn(page, TOK);
        await page.waitForSelector('#audit li .op');
        const audit = await page.$eval('#audit', (e) => e.textContent ?? '');
        expect(audit).toContain(`by ${DEVICE}`);
        expect(audit).toContain(source ? `ingested from ${source}` : '');
        // Before the fix: 796 (url), 670 (base64ish) and 576 (none) at a 390 px screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          390,
        );
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    });
});

describe('search results heading (review s66a)', () => {
  it('says "top 20" when the page shows 20 of more results', async () => {
    const api = apiClient(ui.srv.url, TOK);
    for (let i = 0; i < 21; i++) {
      const made = await api('POST', '/v1/sessions', {
        id: `walrus-${i}`,
        task: `walrus migration ${i}`,
        messages: [
          { role: 'user', content: `the walrus migration, step ${i}${i === 7 ? ', narwhal' : ''}` },
        ],
      });
      expect(made.status).toBe(201);
    }
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui`);
      await signIn(page, TOK);
      await page.waitForSelector('#rows tr');
      await page.type('#q', 'walrus');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() =>
        /for “walrus”/.test(document.getElementById('result-h')!.textContent ?? ''),
      );
      expect(await page.$$eval('#result-list li', (l) => l.length)).toBe(20);
      // Before the fix: "20 results for “walrus”", as if 20 were all there are.
      expect(await page.$eval('#result-h', (e) => e.textContent)).toBe(
        'The top 20 results for “walrus”',
      );
      // Fewer than 20: the count, as before.
      await page.$eval('#q', (e) => ((e as HTMLInputElement).value = ''));
      await page.type('#q', 'narwhal');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() =>
        /for “narwhal”/.test(document.getElementById('result-h')!.textContent ?? ''),
      );
      expect(await page.$eval('#result-h', (e) => e.textContent)).toBe('1 result for “narwhal”');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
