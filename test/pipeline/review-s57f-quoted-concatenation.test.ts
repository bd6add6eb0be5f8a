// Review s57f, finding 1. A quoted value after a plain quote runs to the same quote and may hold the other
// quotes (rules.ts quotedWith, since review s57d). In code that builds a string by concatenation the
// "value" after `password = '` was then the code between two string literals (`" + new_pw + "`): it was
// replaced by [REDACTED] and the stored code no longer said what it did. A value that starts with another
// quote and a concatenation operator is code, not a value; a real password with quotes still goes.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);

const CODE = [
  // Python DB-API, string-built SQL
  `cursor.execute("UPDATE users SET password = '" + new_pw + "' WHERE id = %s", (uid,))`,
  // Java / JS
  `String sql = "UPDATE users SET password = '" + hashed + "' WHERE id = " + id;`,
  `const msg = 'password: "' + pw + '"';`,
  // PHP
  `echo "secret: '" . $s . "'";`,
  // SQL's own concatenation, VB's
  `SELECT 'password = "' || pw || '"' FROM t`,
  `s = "password = '" & pw & "'"`,
];

describe('code that concatenates strings around a secret-named field', () => {
  for (const line of CODE)
    it(`stays as written: ${line}`, () => {
      expect(redact(line)).toBe(line);
    });

  it('a quoted password holding the other quote still goes', () => {
    const out = redact(`password = 'Lm2"Zx9+Qw7'`);
    expect(out).toBe(`password = '[REDACTED]'`);
    expect(redact(`{"password": "Zx'9 + Lm2q"}`)).not.toContain('Lm2q');
  });
});
