// Review s57f, finding 6. Review s57d let a quoted value hold quotes, backslashes and `\u` escapes, but
// only one level of quoting: after an ESCAPED quote (JSON inside a JSON string: an API Gateway or Lambda
// `body`, a log line's `message`, a webhook payload kept as a string) QUOTED_VALUE took no backslash, and
// a password holding `"`, `\` or a letter outside ASCII (`\\u00e4` there) was kept whole, while the same
// password one level up was redacted. Escapes one level down (`\\\"`, `\\\\`, `\\u00e4`) are now part of
// the value; stand-ins there stay.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
/** JSON as Python's json.dumps writes it: every character outside ASCII as `\uXXXX`. */
const py = (v: unknown) =>
  JSON.stringify(v).replace(
    /[\u0080-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
const event = (inner: object) => py({ statusCode: 200, body: py(inner) });

const CASES = [
  { name: 'a quote', password: 'Lm2"Zx9#qWv8', tail: 'Zx9#qWv8' },
  { name: 'a backslash', password: 'Zx9\\q#Lm2!wP', tail: 'q#Lm2!wP' },
  { name: 'letters outside ASCII', password: 'pässwört-2024-Kq', tail: 'rt-2024-Kq' },
];

describe('a password with a quote, backslash or \\u escape in JSON inside a JSON string', () => {
  for (const { name, password, tail } of CASES) {
    it(`control: one level of JSON (${name}) is redacted`, () => {
      expect(redact(py({ user: 'app', password }))).not.toContain(tail);
    });
    it(`two levels (${name}) are redacted too, the rest kept`, () => {
      const out = redact(event({ user: 'app', password, region: 'eu-west-1' }));
      expect(out).not.toContain(tail);
      expect(out).toContain('eu-west-1');
      expect(out).toContain('\\"user\\":\\"app\\"');
    });
  }

  it('stand-ins two levels down stay', () => {
    for (const password of ['${DB_PASSWORD}', '<password>', '"$PGPASSWORD"']) {
      const text = event({ password });
      expect(redact(text)).toBe(text);
    }
  });
});
