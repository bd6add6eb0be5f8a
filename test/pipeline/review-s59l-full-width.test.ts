// A CJK input method writes `＝` and `：` (full-width forms): `DB_PASSWORD＝…` kept its value until
// 2026-12-07 (review s59l). The redactor reads full-width forms as ASCII in a view of the same length.
import { describe, expect, it } from 'vitest';
import { createRedactor, fullWidthView, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const redactor = createRedactor(rules);
const secret = 'Xk9mQ2vLp7zR';

describe('full-width separators', () => {
  it.each([
    [`DB_PASSWORD\uFF1D${secret}`, `DB_PASSWORD\uFF1D${PLACEHOLDER}`],
    // The value ends where the sentence goes on: CJK text puts no blank after it.
    [
      `DB_PASSWORD\uFF1D${secret}\u3001\u6B21\u306F`,
      `DB_PASSWORD\uFF1D${PLACEHOLDER}\u3001\u6B21\u306F`,
    ],
    [`password\uFF1A${secret}\u3002`, `password\uFF1A${PLACEHOLDER}\u3002`],
    // Full-width letters in the name too.
    [
      `\uFF50\uFF41\uFF53\uFF53\uFF57\uFF4F\uFF52\uFF44\uFF1A${secret}`,
      `\uFF50\uFF41\uFF53\uFF53\uFF57\uFF4F\uFF52\uFF44\uFF1A${PLACEHOLDER}`,
    ],
    [`api_key\uFF1D sk-${secret}${secret}`, `api_key\uFF1D ${PLACEHOLDER}`],
    // A full-width name with an ASCII separator (review s61f).
    [
      `\uFF24\uFF22\uFF3F\uFF30\uFF21\uFF33\uFF33\uFF37\uFF2F\uFF32\uFF24=${secret}`,
      `\uFF24\uFF22\uFF3F\uFF30\uFF21\uFF33\uFF33\uFF37\uFF2F\uFF32\uFF24=${PLACEHOLDER}`,
    ],
  ])('%s', (text, want) => {
    expect(redactor.redact(text).text).toBe(want);
  });

  it('leaves CJK prose with full-width colons as it is', () => {
    for (const text of [
      '\u30D1\u30B9\u30EF\u30FC\u30C9\u3092\u5909\u66F4\u3057\u307E\u3057\u305F\uFF1A\u78BA\u8A8D\u6E08\u307F',
      '\u6CE8\u610F\uFF1A\u3053\u306E\u30C8\u30FC\u30AF\u30F3\u306F\u516C\u958B\u3057\u306A\u3044\u3067\u304F\u3060\u3055\u3044',
      'token\uFF1A\u6709\u52B9',
    ])
      expect(redactor.redact(text).text, text).toBe(text);
  });

  it('builds no view for text without a full-width =, : or letter', () => {
    expect(fullWidthView('password: plain ASCII\u3001\uFF10')).toBeUndefined();
    expect(fullWidthView('a\uFF1Ab\u4E00')).toBe('a=b ');
  });
});
