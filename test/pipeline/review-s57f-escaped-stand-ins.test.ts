// Review s57f, finding 2. A quoted value may hold escapes (since review s57d), but the stand-in checks
// looked at the escaped text: a reference or a template written with JSON escapes was redacted as if it
// were a password. `"\"${DB_PASSWORD}\""` (a quoted shell reference inside JSON: an ECS or compose command,
// a CI step) and Go's encoding/json escaping of `<` `>` (`docker inspect`, `kubectl -o json`, `terraform
// show -json` write `\u003cpassword\u003e`) now stay, as their unescaped forms always did.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);

describe('a stand-in written with JSON escapes', () => {
  it('unescaped stand-ins stay (control)', () => {
    for (const t of [
      `{"password": "\${DB_PASSWORD}"}`,
      `{"password": "$PGPASSWORD"}`,
      `{"password": "<password>"}`,
    ])
      expect(redact(t)).toBe(t);
  });

  for (const t of [
    '{"password": "\\"${DB_PASSWORD}\\""}',
    String.raw`{"command": "psql", "password": "\"$PGPASSWORD\""}`,
    String.raw`{"password": "\u003cpassword\u003e"}`,
    String.raw`{"db_password": "\u003cchange-me\u003e"}`,
    String.raw`{"secret": "\u003c%= ENV['APP_SECRET'] %\u003e"}`,
  ])
    it(`stays too: ${t}`, () => {
      expect(redact(t)).toBe(t);
    });

  it('a password between escaped quotes, or holding an escape, still goes', () => {
    expect(redact(String.raw`{"password": "\"Tq7#Lm2Zx9\""}`)).not.toContain('Lm2Zx9');
    expect(redact(String.raw`{"password": "p\u00e4ssW0rt-Zq8"}`)).not.toContain('ssW0rt');
  });
});
