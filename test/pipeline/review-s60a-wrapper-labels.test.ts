// The untrusted-content scan of every save (taint.ts, wrapperLabels) used one regex with a lazy body: from
// each opening without a closing tag the body scanned to the end of the text, so a tool result with many
// unclosed openings took seconds per save (32,000 took 13 s; review s60a found it in the browser's copy).
// It now reads each nonce's last closing tag first; this checks it finds what the regex found.
import { describe, expect, it } from 'vitest';
import { wrapperLabels } from '../../lib/pipeline/taint.js';
import { mulberry32 } from '../support/prng.js';

/** The regex the scan used until 2026-12-07: the reference for what it finds. */
const WRAPPER =
  /<untrusted_content_([0-9a-f]{16}) source="([^"\n]{0,256})">[\s\S]*?<\/untrusted_content_\1>/g;
const reference = (text: string) =>
  text.includes('<untrusted_content_') ? [...text.matchAll(WRAPPER)].map((m) => m[2]!) : [];

const A = '0123456789abcdef';
const B = 'fedcba9876543210';

describe('wrapper labels', () => {
  it('are the regex`s, in any mix of openings, closings and text', () => {
    const pieces = [
      `<untrusted_content_${A} source="web">`,
      `<untrusted_content_${B} source="mcp:x">`,
      `<untrusted_content_${A} source="a\nb">`,
      `<untrusted_content_${A} source="${'s'.repeat(257)}">`,
      `</untrusted_content_${A}>`,
      `</untrusted_content_${B}>`,
      '<untrusted_content_',
      'text ',
      '\n',
      '"',
      '>',
    ];
    const next = mulberry32(60);
    for (let n = 0; n < 4000; n++) {
      let text = '';
      const length = 1 + Math.floor(next() * 16);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(next() * pieces.length)];
      expect(wrapperLabels(text), JSON.stringify(text)).toEqual(reference(text));
    }
  });
});
