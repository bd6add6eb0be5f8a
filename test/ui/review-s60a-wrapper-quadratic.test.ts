// Review s60a, finding 3: the transcript found untrusted-content wrappers with one regex (a lazy body up to
// a back-referenced closing tag), which scanned to the end of the text from every opening without a
// closing tag: a tool result of many unclosed openings (a fetched page, a webhook payload) froze the tab
// for seconds to minutes when its fold was opened (32,000 openings, 1.5 MB: 12 s; time grew with the
// square of the size). The scan is linear now and finds exactly what the regex found.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wrappers } from '../../lib/ui/client.js';
import { apiClient, browserAndServer, openPage, signIn } from './browser.js';

/** What the old regex (wrapperPattern until review s60a) found: the reference for well-formed text. */
function byRegex(text: string) {
  const re =
    /<untrusted_content_([0-9a-f]{16}) source="([^"\n]*)">\n?([\s\S]*?)\n?<\/untrusted_content_\1>/g;
  return Array.from(text.matchAll(re), (m) => ({
    at: m.index,
    end: m.index + m[0].length,
    source: m[2],
    content: m[3],
  }));
}

const A = '0123456789abcdef';
const B = 'fedcba9876543210';
const piece = fc.constantFrom(
  `<untrusted_content_${A} source="webhook:github">`,
  `<untrusted_content_${A} source="">`,
  `<untrusted_content_${B} source="x">`,
  `<untrusted_content_${B} source="a\nb">`,
  `<untrusted_content_${A} source="<untrusted_content_${B}">`,
  `<untrusted_content_${A.toUpperCase()} source="x">`,
  `</untrusted_content_${A}>`,
  `</untrusted_content_${B}>`,
  `</untrusted_content_${A.slice(1)}>`,
  '<untrusted_content_',
  '\n',
  '\n\n',
  'text ',
  '[REDACTED]',
  '"',
  '>',
);

describe('finding untrusted-content wrappers (review s60a)', () => {
  it('finds what the regex found, in any mix of openings, closings and text', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(wrappers(text)).toEqual(byRegex(text));
      }),
      { numRuns: 3000 },
    );
  });

  // Its speed is measured, never asserted as a time: 32,000 unclosed openings took 7 to 12 ms through the
  // scan (scratch script, 2026-12-07 02:44 UTC); the regex took 12 s for the same in the browser.
  it('finds the one closed wrapper after 32,000 unclosed openings, of one nonce or of many', () => {
    const hex = (i: number) => i.toString(16).padStart(16, '0');
    for (const nonce of [() => A, hex]) {
      // 32,000 unclosed openings (1.5 MB), then a wrapper that is closed.
      let text = '';
      for (let i = 0; i < 32_000; i++) text += `<untrusted_content_${nonce(i)} source="x">\n`;
      text += `<untrusted_content_${B} source="y">\nkept\n</untrusted_content_${B}>`;
      expect(wrappers(text)).toEqual([
        { at: text.lastIndexOf('<untrusted'), end: text.length, source: 'y', content: 'kept' },
      ]);
    }
  });
});

const TOK = 'tok_s60a_wrap_0123456789';
const ui = browserAndServer(`ns=${TOK}`);

describe('a tool result holding many unclosed wrapper openings (review s60a)', () => {
  it('opens its fold without freezing the page', async () => {
    const api = apiClient(ui.srv.url, TOK);
    const n = 32_000;
    // 48 bytes a line: 1.5 MB of tool result.
    const text = `<untrusted_content_${A} source="x">\n`.repeat(n);
    const r = await api('POST', '/v1/sessions', {
      id: 'w',
      task: `tool result with ${n} unclosed openings`,
      messages: [
        { role: 'user', content: 'fetch that page' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'fetch', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: text },
      ],
    });
    expect(r.status).toBe(201);
    const { page, errors } = await openPage(ui.browser);
    try {
      await page.goto(`${ui.srv.url}/ui/sessions/w`);
      await signIn(page, TOK);
      await page.waitForSelector('.tool-result details.fold summary');
      // Opening it took 12 s before the fix (a frozen tab); the time is not asserted (the brief).
      await page.click('.tool-result details.fold summary');
      await page.waitForSelector('.tool-result details.fold[open] .text', { timeout: 600_000 });
      const shown = await page.$eval('.tool-result details.fold[open] .text', (e) => ({
        text: e.textContent,
        blocks: e.querySelectorAll('.untrusted').length,
      }));
      expect(shown).toEqual({ text, blocks: 0 }); // no wrapper is closed: all of it as text
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
    // The POST alone took 4-13 s on a busy two-core machine: the server's own wrapper scan
    // (lib/pipeline/taint.ts) has the same quadratic regex.
  }, 120_000);
});
