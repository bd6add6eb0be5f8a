// Review s62r, finding 2 (from review s62d, "suspected"): a data: URL after other text whose base64 is
// wrapped at fewer than 60 columns had only its first line decoded: the GitHub token on a later line was
// stored in clear. The content view now follows lines of 16 to 120 columns; a word on the line after the
// URL stays text.
import { describe, expect, it } from 'vitest';
import {
  b64,
  DOTENV,
  fileIn,
  GITHUB,
  HEAD,
  roundTrip,
  STRIPE,
  wrap,
} from '../support/inline-files.js';

const WIDTHS = [56, 48, 40, 32, 20, 16];

describe('a data: URL after text, wrapped at fewer than 60 columns (review s62r)', () => {
  for (const width of WIDTHS)
    for (const [name, before] of Object.entries({
      'a line': 'Here is my .env:\n',
      text: 'my .env: ',
    }))
      it(`after ${name}, ${width} columns: the file is redacted`, async () => {
        const r = await roundTrip(before + HEAD + wrap(b64(DOTENV), width, '\n'));
        const file = fileIn(r.content);
        expect(file).not.toContain(GITHUB.slice(0, 24)); // stored in clear
        expect(file).not.toContain(STRIPE.slice(0, 24));
        expect(r.redactions).toBe('2'); // '0'
      });

  it('CRLF and JSON-escaped line breaks at 32 columns: the file is redacted', async () => {
    for (const eol of ['\r\n', '\\n']) {
      const r = await roundTrip('env: ' + HEAD + wrap(b64(DOTENV), 32, eol) + ' done');
      expect(fileIn(r.content.split(eol).join('')), eol).not.toContain(GITHUB.slice(0, 24));
      expect(r.redactions).toBe('2');
    }
  });

  // A short line after the URL that is an ordinary word is not base64 of the file: it stays as sent.
  for (const word of ['then', 'okay', 'Done', 'thanks', 'ok'])
    it(`keeps the word ${JSON.stringify(word)} on the line after a URL wrapped at 16`, async () => {
      const r = await roundTrip('env:\n' + HEAD + wrap(b64(DOTENV), 16, '\n') + '\n' + word);
      expect(r.content.endsWith('\n' + word)).toBe(true);
      expect(fileIn(r.content.slice(0, -word.length))).not.toContain(GITHUB.slice(0, 24));
      expect(r.redactions).toBe('2');
    });

  it('keeps a file wrapped at 16 whose last line is full before a 4-letter word', async () => {
    // 12 lines of exactly 16 characters: the word is read as a 13th line first, then left out.
    const file = DOTENV + '#'.repeat(144 - DOTENV.length);
    expect(b64(file).length).toBe(192);
    const r = await roundTrip('env:\n' + HEAD + wrap(b64(file), 16, '\n') + '\nthen');
    expect(r.content.endsWith('\nthen')).toBe(true);
    expect(fileIn(r.content.slice(0, -4))).not.toContain(GITHUB.slice(0, 24));
    expect(r.redactions).toBe('2');
  });
});
