import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const redactor = createRedactor(rules);

// JSON text written by Go's encoding/json (kubectl, docker, terraform) escapes `&`, `<` and `>` as
// `\u0026`, `\u003c` and `\u003e`; other encoders escape more (review, 2026-12-04).
describe('rule secrets inside `\\u00XX` escapes', () => {
  it.each([
    [
      'a URL password with & (kubectl -o json)',
      '{"data":{"DATABASE_URL":"postgres://admin:S3cr3t\\u0026Pw9x@db.internal:5432/app"}}',
      ['S3cr3t', 'Pw9x'],
    ],
    [
      'a query token with an escaped = (encoders that escape every non-alphanumeric)',
      '{"url":"https://a.example/cb?x=1\\u0026access_token\\u003dya29.a0AfH6SMBq7xK2mP9vL4wR8tN3cZ5jD1gF"}',
      ['ya29.a0AfH6SMBq7xK2mP9vL4wR8tN3cZ5jD1gF'],
    ],
    [
      'an escaped slash and a \\u escape together',
      '{"u":"https:\\/\\/deploy:Vq7\\u0026mZ2pL9xR4wT8@git.example.com\\/r.git"}',
      ['mZ2pL9xR4wT8'],
    ],
  ])('%s', (_name, text, secrets) => {
    const out = redactor.redact(text);
    for (const secret of secrets) expect(out.text).not.toContain(secret);
    expect(out.text).toContain(PLACEHOLDER);
    expect(out.count).toBe(1);
    expect(redactor.redact(out.text).count).toBe(0);
    expect(out.text.slice(0, 8)).toBe(text.slice(0, 8));
  });

  it('\\u escapes alone change nothing', () => {
    for (const s of [
      '{"q":"a \\u0026 b \\u003c c"}',
      '\\u00e9t\\u00e9',
      '\\u2028',
      'C:\\users\\u00',
    ]) {
      expect(redactor.redact(s)).toEqual({ text: s, count: 0 });
    }
  });
});

// A page, an XML config or an HTML-escaped log writes quotes as character references; the keyed rules end a
// value at `&` and `;`, so `password=&quot;…&quot;` kept its password and still counted one (review s59l).
describe('rule secrets inside HTML character references', () => {
  it.each([
    ['&quot; around a keyed value', 'password=&quot;Hq7vK2mP9xL4wR8t&quot;', 'Hq7vK2mP9xL4wR8t'],
    [
      'a JSON object in an HTML attribute',
      '<div data-cfg="{&quot;client_secret&quot;:&quot;Hq7vK2mP9xL4wR8tN3cZ&quot;}">',
      'Hq7vK2mP9xL4wR8tN3cZ',
    ],
    ['decimal references', 'api_key=&#34;Hq7vK2mP9xL4wR8tN3cZ&#34;', 'Hq7vK2mP9xL4wR8tN3cZ'],
    ['hex references, upper case', 'db_password=&#X27;Hq7vK2mP9xL4wR8t&#X27;', 'Hq7vK2mP9xL4wR8t'],
    [
      'an escaped XML element',
      '&lt;password&gt;Hq7vK2mP9xL4wR8t&lt;/password&gt;',
      'Hq7vK2mP9xL4wR8t',
    ],
    // HTML5's names of punctuation, and leading zeros past four digits (review s60f).
    ['&equals; for the =', 'password&equals;Zq8vKp3LmN7xWr2TgH5d', 'Zq8vKp3LmN7xWr2TgH5d'],
    [
      'references with leading zeros',
      'password&#00061;&#00034;Zq8vKp3LmN7xWr2TgH5d&#00034;',
      'Zq8vKp3LmN7xWr2TgH5d',
    ],
    ['nine digits', 'password&#000000061;Zq8vKp3LmN7xWr2TgH5d', 'Zq8vKp3LmN7xWr2TgH5d'],
    [
      'twice escaped (&amp;quot;)',
      'token: &amp;quot;ghp_R8tN3cZ5jD1gFq7xK2mP9vL4wR8tN3cZ5j&amp;quot;',
      'ghp_R8tN3cZ5jD1gFq7xK2mP9vL4wR8tN3cZ5j',
    ],
  ])('%s', (_name, text, secret) => {
    const out = redactor.redact(text);
    expect(out.text).not.toContain(secret);
    expect(out.count).toBe(1);
    // The references around the value stay as written: only the value becomes the stand-in.
    expect(out.text).toBe(text.replace(secret, PLACEHOLDER));
    expect(redactor.redact(out.text).count).toBe(0);
  });

  it('references alone change nothing', () => {
    for (const s of [
      'a &amp; b &lt; c &quot;hi&quot; &#39;x&#39; &#x2014; &#0; &#128512;',
      'if (a &amp;&amp; b) return &quot;password&quot;;',
      '<a href="/s?q=1&amp;page=2">next</a>',
      'password&colon; &lt;enter your password&gt; &lowbar;&lowbar; &nbsp; &copy; &hellip;',
    ]) {
      expect(redactor.redact(s)).toEqual({ text: s, count: 0 });
    }
  });
});

// A value that is only a reference's head is no secret (`&quot` of `password=&quot;…`), but only for names
// the views decode: `&` and 2 to 6 letters was skipped too, so `password=&Qwxzrt` was stored (review s60g).
describe('values that begin with & and a few letters', () => {
  it.each(['password=&Qwxzrt', 'PGPASSWORD=&Hkqzw', 'password=&Qwxzrt;'])(
    '%s is redacted',
    (text) => {
      const out = redactor.redact(text);
      expect(out.count).toBe(1);
      expect(out.text).not.toMatch(/Qwxzrt|Hkqzw/);
    },
  );
});
