// Review s65i, F2. Since 9707a60 a key's tail is cut from the next text part at a boundary between long
// parts too, unless the next part starts with a word of prose and a blank. A part ending in a complete
// password lost the next part's first word when a `.`, `:`, `=` or a file's extension came after it
// (`README.md`, `exit_code=0`, `Done.`, `Next:`): a free-form value cannot tell cut from complete, so a
// word of that shape is taken for the user's, not for a key's tail.
import { describe, expect, it } from 'vitest';
import { roundTrip, t } from '../support/inline-files.js';

const PW = 'Tq7vLm2pXz9wQe4R';
const FILLER = Array.from({ length: 120 }, (_, i) => `LOG_LINE_${i}=value number ${i}`).join('\n');

describe('a long part after one that ends in a complete password', () => {
  it.each(['README.md\n', 'exit_code=0\n', 'Done.\n', 'Next:\n', 'Done. ', 'Summary: ok\n'])(
    'keeps its first word: %j',
    async (word) => {
      const r = await roundTrip([t(`${FILLER}\nDB_PASSWORD=${PW}`), t(`${word}${FILLER}`)]);
      expect(r.content[1].text).toBe(`${word}${FILLER}`);
      expect(r.stored).not.toContain(PW);
    },
  );

  it('a key tail of the same shapes but for its digits is still cut', async () => {
    for (const tail of ['Qe4R\n', 'Qe4R.\n', 'e4R=x\n']) {
      const r = await roundTrip([
        t(`${FILLER}\nDB_PASSWORD=${PW.slice(0, 12)}`),
        t(`${tail}${FILLER}`),
      ]);
      expect(r.content[1].text, tail).toBe(`${tail.slice(tail.search(/\s/))}${FILLER}`);
    }
  });
});
