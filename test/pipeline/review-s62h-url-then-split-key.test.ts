// Review s62h, finding 3 (a regression of bcd5d63): a data: URL whose base64 has no `=` padding, then a
// key streamed in two pieces glued to it. A URL's base64 may end before the last part that can go on with
// it, so the boundary between the key's pieces was read as the URL's end: `ghp_…` was stored in two pieces.
// So it was after a URL with padding, or with the key's first piece on a line after the URL.
import { describe, expect, it } from 'vitest';
import { b64, GITHUB, glued, HEAD, pieces, roundTrip, t } from '../support/inline-files.js';

/** Whether any 12 characters of `secret` (from every 4th) are in `stored`, its parts' pieces run on. */
const pieceIn = (stored: string, secret: string) => {
  const run = glued(stored);
  for (let i = 0; i + 12 <= secret.length; i += 4)
    if (run.includes(secret.slice(i, i + 12))) return true;
  return false;
};
/** `s` with `#` added until its bytes are a multiple of 3: its base64 has no padding. */
const unpadded = (s: string) => s + '#'.repeat((3 - (Buffer.from(s).length % 3)) % 3);

const URL = HEAD + b64(unpadded('A=1\nNOTE=plain words only here\n')); // its file holds no secret
const KEY = [GITHUB.slice(0, 20), GITHUB.slice(20)];
const PADDED = HEAD + b64('A=1\nNOTE=plain words\n!');
expect(URL.endsWith('=')).toBe(false);
expect(PADDED.endsWith('==')).toBe(true);

describe('a key in pieces right after a data: URL in text parts (review s62h)', () => {
  const shapes: Record<string, string[]> = {
    'the URL in two parts': [URL.slice(0, 40), URL.slice(40), ...KEY],
    'the URL in two parts, then " thanks"': [URL.slice(0, 40), URL.slice(40), ...KEY, ' thanks'],
    'the URL whole': [URL, ...KEY],
    // Not in the review: more pieces (they leaked before bcd5d63 too), another file; a URL with padding,
    // or the key's first piece on the line after the URL (both redacted before bcd5d63).
    'the URL whole, the key in 3 parts': [URL, ...GITHUB.match(/^(.{10})(.{15})(.*)$/)!.slice(1)],
    'the URL whole, the key in 4-character pieces': [URL, ...pieces(GITHUB, 4)],
    'another file': [HEAD + b64('A=1\nNOTE=plain words\n'), ...KEY],
    'a URL with padding': [PADDED, ...KEY],
    'a URL with padding in two parts': [PADDED.slice(0, 30), PADDED.slice(30), ...KEY],
    'a URL with padding, the first piece on the next line': [PADDED + '\n' + KEY[0], KEY[1]!],
    'the first piece on the line after the URL': [URL + '\n' + KEY[0], KEY[1]!, ' thanks'],
  };
  for (const [name, parts] of Object.entries(shapes))
    it(`${name}: the key is redacted`, async () => {
      const r = await roundTrip(parts.map(t));
      expect(pieceIn(r.stored, GITHUB)).toBe(false); // stored as sent, in pieces
      expect(r.redactions).toBe('1'); // '0'
    });

  it('the URL holding the key too, in two parts: both are redacted', async () => {
    const withKey = HEAD + b64(unpadded(`A=1\nGITHUB_TOKEN=${GITHUB}\n`));
    expect(withKey.endsWith('=')).toBe(false);
    const r = await roundTrip([withKey.slice(0, 40), withKey.slice(40), ...KEY].map(t));
    expect(pieceIn(r.stored, GITHUB)).toBe(false); // both stored in clear (this shape leaked before bcd5d63 too)
    expect(r.redactions).toBe('2'); // '0'
  });

  it('keeps a word glued to the URL out of the key and the parts as sent', async () => {
    const parts = [URL.slice(0, 40), URL.slice(40), 'thanks', ' a lot'].map(t);
    const r = await roundTrip(parts);
    expect(r.content).toEqual(parts);
    expect(r.redactions).toBe('0');
  });
});
