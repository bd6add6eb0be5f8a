// data: URLs in content parts and in text, as the second review of 2026-12-05 found them stored as sent
// (findings G1 to G7): a whole-string URL in groups with blanks, a URL streamed in parts whose last part goes
// on with the base64 or whose `;base64,` is split, a URL end past the window budget, padding then a glued
// word, a short last line before a line of text, and a short word after a whole-string URL.
import { describe, expect, it } from 'vitest';
import {
  b64,
  DOTENV,
  fileIn,
  GITHUB,
  HEAD,
  pieces,
  roundTrip,
  runOn,
  STRIPE,
  t,
  wrap,
} from '../support/inline-files.js';

const KEY_TAIL = STRIPE.slice(-24); // 24 chars of the live key, no rule's placeholder

describe('a whole-string URL in groups of 4 with single blanks (G1)', () => {
  it('HEAD + base64 in groups of 4 separated by " ": the file is redacted', async () => {
    const spaced = wrap(b64(`# a long enough first line of notes\n${DOTENV}`), 4, ' ');
    const r = await roundTrip(HEAD + spaced);
    expect(fileIn(r.content)).not.toContain(GITHUB);
    expect(r.redactions).toBe('2');
  });
});

describe('a streamed URL whose last part goes on with the base64, then a word (G2)', () => {
  it("[url head, base64 …, last 60 base64 chars + ' thanks.']: no piece of the key is stored", async () => {
    const url = HEAD + b64(DOTENV);
    const L = url.length;
    const r = await roundTrip(
      ['see ' + url.slice(0, 40), url.slice(40, L - 60), url.slice(L - 60) + ' thanks.'].map(t),
    );
    const content = runOn(r.content);
    // a '\n' is put inside the base64 before the last part: only the text before it is decoded
    expect(fileIn(content.replace('\n', ''))).not.toContain(KEY_TAIL);
    expect(r.redactions).toBe('2');
  });
  it("two URLs in a row, each in 2 parts, the last part '<base64> thanks': the second file is redacted", async () => {
    const u1 = HEAD + b64(DOTENV),
      u2 = HEAD + b64('A=1\n' + DOTENV);
    const r = await roundTrip(
      [u1.slice(0, 40), u1.slice(40), u2.slice(0, 40), u2.slice(40) + ' thanks'].map(t),
    );
    const second = runOn(r.content).slice(runOn(r.content).lastIndexOf('data:'));
    expect(fileIn(second.replace('\n', ''))).not.toContain(GITHUB); // stored as sent
    expect(r.redactions).toBe('4'); // '2'
  });
});

describe('a streamed URL whose ";base64," is split over two parts (G3)', () => {
  for (const word of ['then more', 'thanks for looking'])
    it(`pieces(url, 8) + '${word}': the file is redacted`, async () => {
      const r = await roundTrip([...pieces(HEAD + b64(DOTENV), 8), word].map(t));
      expect(fileIn(runOn(r.content))).not.toContain(GITHUB); // stored as sent, count 0
      expect(r.redactions).toBe('2');
    });
});

describe('a URL end before more in-word boundaries than the window budget (G4)', () => {
  it("url in 2 parts, 'thanks ', then 70,000 'ab' parts: the file is redacted", async () => {
    const url = HEAD + b64(DOTENV);
    const cut = HEAD.length + 20;
    const r = await roundTrip(
      [url.slice(0, cut), url.slice(cut), 'thanks ', ...Array(70000).fill('ab'), ' end'].map(t),
    );
    expect(fileIn(runOn(r.content))).not.toContain(GITHUB); // stored as sent, count 0
    expect(r.redactions).toBe('2');
  });
});

describe("a padded URL ('==') streamed in parts, then a glued word that is base64 too (G5)", () => {
  for (const word of ['thanks', 'ok'])
    it(`['see '+url[..40], url[40..] (ends ==), '${word}', ' more']: the file is redacted`, async () => {
      const url = HEAD + b64('A=1\n' + DOTENV); // 145 bytes: padded
      expect(url.endsWith('==')).toBe(true);
      const r = await roundTrip(['see ' + url.slice(0, 40), url.slice(40), word, ' more'].map(t));
      expect(fileIn(runOn(r.content))).not.toContain(GITHUB); // stored as sent, count 0
      expect(r.redactions).toBe('2');
    });
});

describe('a wrapped URL whose shorter last line is followed by a line of text (G6)', () => {
  it('UTF-8 wrapped at 76 + "\\nthanks": the last line, holding the rest of the key, is redacted too', async () => {
    const r = await roundTrip(`env:\n${HEAD}${wrap(b64(DOTENV), 76, '\n')}\nthanks`);
    expect(fileIn(r.content.replace(/\nthanks$/, ''))).not.toContain(KEY_TAIL); // 26 key chars stored
  });
  it('Latin-1 wrapped at 76 + "\\nthanks": no piece of the key is stored, counted 2', async () => {
    const f = Buffer.from('# café notes über\n' + DOTENV + '# ende\n', 'latin1');
    const r = await roundTrip(`env: ${HEAD}${wrap(f.toString('base64'), 76, '\n')}\nthanks`);
    expect(fileIn(r.content.replace(/\nthanks$/, ''))).not.toContain(KEY_TAIL); // 44 key chars stored
    expect(r.redactions).toBe('2'); // '1'
  });
});

describe('a short word after a whole-string URL (G7)', () => {
  for (const tail of [' ok', ' okay', ' yes', '\n\nok'])
    it(`HEAD + base64 + ${JSON.stringify(tail)}: the tail stays text`, async () => {
      const r = await roundTrip(HEAD + b64(DOTENV) + tail);
      expect(r.content.endsWith(tail)).toBe(true); // word re-encoded into the base64 (or a line break lost)
      expect(r.redactions).toBe('2');
    });
});
