import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsPage } from '../../lib/http/docs.js';
import type { OpenApiDocument } from '../../lib/http/openapi.js';
import { apiDocument } from '../../lib/http/routes/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { launchBrowser, openPage, screenshot, visibleText } from './browser.js';

// /docs: shared error rows once, the document's examples rendered, readable at 390 px (in Chromium).

let browser: Browser;
let server: RunningServer;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startSatchelServer({ env: { SATCHEL_TOKENS: 'docs=tok_docs_0123456789' } });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('/docs', () => {
  it('shows an error that many operations share once, and links each operation to it', () => {
    const doc = apiDocument();
    const html = docsPage(doc);
    const unauthorized = doc.paths['/v1/sessions']!.get!.responses['401']!.description as string;
    const ops = Object.values(doc.paths)
      .flatMap((m) => Object.values(m))
      .filter((op) => op.responses['401']?.description === unauthorized);
    expect(ops.length).toBeGreaterThanOrEqual(3);
    const sentence = unauthorized.replace(/`([^`]+)`/g, '<code>$1</code>');
    expect(html.split(sentence).length - 1).toBe(1);
    expect(html).toContain('id="shared-errors"');
    const anchor = /<tr id="(error-401-\d+)">/.exec(html)?.[1];
    expect(anchor).toBeDefined();
    expect(html.split(`href="#${anchor}"`).length - 1).toBe(ops.length);
  });

  it('renders request and response examples from the OpenAPI document', () => {
    const doc = structuredClone(apiDocument()) as OpenApiDocument;
    const op = doc.paths['/v1/sessions']!.post!;
    const body = op.requestBody as { content: Record<string, Record<string, unknown>> };
    body.content['application/json']!.examples = {
      minimal: {
        summary: 'A task and one message',
        value: { task: 'Fix <the> build', messages: [{ role: 'user', content: 'hi' }] },
      },
    };
    (op.responses['201']!.content as Record<string, Record<string, unknown>>)[
      'application/json'
    ]!.example = { id: '20260101-0123', revision: 1 };
    const html = docsPage(doc);
    expect(html).toContain('Example request — A task and one message');
    expect(html).toContain('&quot;task&quot;: &quot;Fix &lt;the&gt; build&quot;'); // pretty JSON, escaped
    expect(html).toContain('Example response 201');
    expect(html).toContain('&quot;revision&quot;: 1');
    // Whatever examples the real document carries are all on the page.
    const real = apiDocument();
    const realHtml = docsPage(real);
    let count = 0;
    for (const methods of Object.values(real.paths)) {
      for (const o of Object.values(methods)) {
        const medias = [
          ...Object.values(
            ((o.requestBody as { content?: Record<string, Record<string, unknown>> } | undefined)
              ?.content ?? {}) as Record<string, Record<string, unknown>>,
          ),
          ...Object.values(o.responses).flatMap((r) =>
            Object.values((r.content ?? {}) as Record<string, Record<string, unknown>>),
          ),
        ];
        for (const m of medias)
          count +=
            ('example' in m ? 1 : 0) + Object.keys((m.examples as object | undefined) ?? {}).length;
      }
    }
    expect(realHtml.split('<details class="example"').length - 1).toBe(count);
  });

  it('reads at 390 px in Chromium: nothing wider than the screen; screenshots at 390 and 1280 px', async () => {
    for (const width of [390, 1280]) {
      const { page, errors } = await openPage(browser, width, 844);
      await page.goto(`${server.url}/docs`);
      expect(await visibleText(page, 'h1')).toContain('API');
      expect(await visibleText(page, '#shared-errors')).toContain('Shared errors');
      const sizes = await page.evaluate(() => ({
        width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight,
      }));
      expect(sizes.width).toBeLessThanOrEqual(width);
      console.log(`/docs at ${width} px: ${sizes.height} px tall`);
      await screenshot(page, `docs-${width}`);
      expect(errors).toEqual([]);
      await page.close();
    }
  });
});
