import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../lib/client/client.js';
import { strictText, text, useAsciiText } from '../../lib/model/bytes.js';
import '../../lib/model/bytes-node.js';

const enc = new TextEncoder();
const filler = 'The retry test is flaky on Node 20 because the timer fires early. '.repeat(120);

/** Bodies whose decoding the ASCII fast paths must not change: each is compared with TextDecoder's. */
function bodies(): [string, Uint8Array][] {
  const ascii = enc.encode(filler);
  const out: [string, Uint8Array][] = [
    ['ASCII', ascii],
    ['empty', new Uint8Array(0)],
    ['a byte-offset view of ASCII', ascii.subarray(3, ascii.byteLength - 5)],
    ['a BOM then ASCII', new Uint8Array([0xef, 0xbb, 0xbf, ...ascii])],
    ['malformed UTF-8', new Uint8Array([...ascii.subarray(0, 5000), 0xc3, 0x28, 0xff])],
  ];
  // A single non-ASCII character at every position of a word's head, middle and tail, on odd offsets.
  for (const at of [0, 1, 2, 3, 4, 4093, 4094, 4095, 6000, filler.length - 1]) {
    const bytes = enc.encode(filler.slice(0, at) + 'é' + filler.slice(at));
    for (const offset of [0, 1, 3])
      out.push([`é at ${at}, offset ${offset}`, bytes.subarray(offset)]);
  }
  return out;
}

describe('text and strictText with the Node ASCII path installed', () => {
  it.each(bodies())('decode %s exactly as TextDecoder does', (_name, body) => {
    expect(text(body)).toBe(new TextDecoder().decode(body));
  });

  it.each(bodies())(
    'strictText: %s as a fatal TextDecoder (the same text, or a TypeError)',
    (_n, body) => {
      let expected: string | undefined;
      try {
        expected = new TextDecoder('utf-8', { fatal: true }).decode(body);
      } catch {
        expected = undefined;
      }
      if (expected === undefined) expect(() => strictText(body)).toThrow(TypeError);
      else expect(strictText(body)).toBe(expected);
    },
  );

  it('strictText refuses the malformed body', () => {
    expect(() => strictText(new Uint8Array([0x7b, 0xc3, 0x28]))).toThrow(TypeError);
  });

  it('takes the latin1 copy only for an ASCII body (an é is decoded, not copied as Ã©)', () => {
    const calls: (string | undefined)[] = [];
    const body = enc.encode(filler + 'é');
    useAsciiText((b) => {
      const s = b.every((x) => x < 0x80) ? 'ascii' : undefined;
      calls.push(s);
      return s;
    });
    try {
      expect(text(enc.encode('plain'))).toBe('ascii');
      expect(text(body).endsWith('é')).toBe(true);
      expect(calls).toEqual(['ascii', undefined]);
    } finally {
      // The Node path again, as bytes-node installs it.
      useAsciiText((b) =>
        b.every((x) => x < 0x80)
          ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1')
          : undefined,
      );
    }
  });
});

describe("the client's decodeBody", () => {
  it.each(bodies())('decodes %s exactly as TextDecoder does', (_name, body) => {
    expect(decodeBody(body)).toBe(new TextDecoder().decode(body));
  });
});
