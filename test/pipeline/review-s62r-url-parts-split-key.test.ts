// Review s62r, finding 1: a data: URL streamed in content parts, with a key split across the parts after
// it (or before it). When the content view decoded the URL's file (a first part 60 to 120 characters wide,
// or any width once short wrapped lines are read), the parts gave way to the content, whose line breaks
// split the key: `ghp_…` was stored in two pieces. A first part too wide for the content view to follow
// (140) had its file's fragment redacted alone and glued to the rest: the Stripe key's tail was stored.
import { describe, expect, it } from 'vitest';
import {
  b64,
  DOTENV,
  GITHUB,
  glued,
  HEAD,
  roundTrip,
  runOn,
  STRIPE,
  t,
} from '../support/inline-files.js';

const URL = HEAD + b64(DOTENV);
const WIDTHS = [20, 40, 76, 100, 140, 160];
/** The URL in two parts, its first part's base64 `width` characters wide. */
const halves = (width: number) => [
  URL.slice(0, HEAD.length + width),
  URL.slice(HEAD.length + width),
];
const KEY = [GITHUB.slice(0, 20), GITHUB.slice(20)];

describe('a data: URL streamed in two parts, and a key split across parts (review s62r)', () => {
  for (const width of WIDTHS)
    it(`after the URL, its first part ${width} characters of base64: nothing stored`, async () => {
      const r = await roundTrip([...halves(width), 'then ', ...KEY, 'thanks'].map(t));
      expect(glued(r.stored)).not.toContain(GITHUB.slice(4, 30)); // stored as 20 + 20, a line between
      expect(r.stored).not.toContain(STRIPE.slice(-20)); // the file's tail, after a fragment redacted alone
      expect(r.redactions).toBe('3'); // '2'
      expect(runOn(r.content)).toMatch(/\nthen \[REDACTED\]\nthanks$/);
    });

  for (const width of [20, 76, 140])
    it(`before the URL, its first part ${width} characters of base64: nothing stored`, async () => {
      const [first, rest] = halves(width);
      const parts = ['see ' + KEY[0], KEY[1]!, ' file ' + first, rest!, ' thanks'];
      const r = await roundTrip(parts.map(t));
      expect(glued(r.stored)).not.toContain(GITHUB.slice(4, 30));
      expect(r.stored).not.toContain(STRIPE.slice(-20));
      expect(r.redactions).toBe('3');
    });

  // Guards: the URL's parts are read run together only to redact; what holds no secret stays as sent.
  it('keeps the parts as sent when the file holds no secret, whatever the width', async () => {
    const clean = HEAD + b64('NODE_ENV=production\nPORT=8080\nLOG_LEVEL=debug\nREGION=eu-west-1\n');
    for (const width of [20, 76, 140]) {
      const cut = HEAD.length + width;
      const parts = [clean.slice(0, cut), clean.slice(cut), 'then ', 'thanks'].map(t);
      const r = await roundTrip(parts);
      expect(r.content, String(width)).toEqual(parts);
      expect(r.redactions).toBe('0');
    }
  });

  it('keeps a word glued to the base64 out of the file, and the part after it as sent', async () => {
    const r = await roundTrip([...halves(76), 'thanks', ' a lot'].map(t));
    expect(r.stored).not.toContain(STRIPE.slice(-20));
    expect(r.redactions).toBe('2');
    expect(runOn(r.content)).toMatch(/\nthanks a lot$/);
  });
});
