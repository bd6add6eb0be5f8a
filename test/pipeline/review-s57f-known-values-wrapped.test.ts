// Review s57f, finding 9. With known values configured, unwrappedViews joined every run of wrapped base64
// into a second copy (with a position map per character) and searched all of it again, though only forms
// that cross a line break are new there: wrapped base64 (a CA bundle, `base64` output, GitHub's contents
// API) redacted 1.7x (PEM) to 4x (JSON-escaped `\n`) slower than before review s57d. Now only a window
// around a line break that a form can cross (its 4 characters before or after the break are some form's)
// is searched. Speed is measured outside the suite (no timing assertions here); these tests hold that
// the windows still find every form across one break or several, at every place in the lines.
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER, createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const SHORT = 'Orchid-Lamp-7741-Quartz-Zebra';
// Longer than two 60-character lines once in base64: its forms run over two breaks.
const LONG =
  'Velvet-Harbor-5512-Mosaic-Ember-Lantern-9034-Quill-Saffron-Tundra-2287-Wisp-Yarrow-Zenith-61';
const redactor = createRedactor(rules, { knownValues: [SHORT, LONG] });
const wrap = (s: string, width: number, brk: string, indent = '') =>
  s
    .match(new RegExp(`.{1,${width}}`, 'g'))!
    .map((l) => indent + l)
    .join(brk);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decoded = (s: string) => Buffer.from(s, 'base64').toString('latin1');

describe('a known value in wrapped base64, across one line break or several', () => {
  for (const [value, name] of [
    [SHORT, 'short'],
    [LONG, 'long'],
  ] as const)
    for (const [brk, indent, width] of [
      ['\n', '', 64],
      ['\r\n', '    ', 60],
      ['\\n', '', 76],
    ] as const)
      it(`${name} value, break ${JSON.stringify(brk)}, width ${width}`, () => {
        for (let pad = 0; pad < 2 * width; pad += 7) {
          const prefix = 'x'.repeat(pad);
          const text = wrap(
            b64(`${prefix}KEY=${value}\nMORE=${'y'.repeat(200)}\n`),
            width,
            brk,
            indent,
          );
          const out = redactor.redact(text).text;
          expect(out).toContain(PLACEHOLDER);
          const rest = out
            .replaceAll(PLACEHOLDER, '')
            .split(brk)
            .map((l) => l.trim())
            .join('');
          expect(decoded(rest)).not.toContain(value.slice(0, 12));
        }
      });

  it('base64 that holds no known value is kept as it is', () => {
    const text = wrap(
      b64('ordinary file contents, nothing secret in it at all. '.repeat(20)),
      76,
      '\n',
    );
    expect(redactor.redact(text).text).toBe(text);
  });
});
