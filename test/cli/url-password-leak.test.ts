/**
 * Fixed on 2026-12-04 (found by review): clientFrom (lib/cli/io.ts) checks SATCHEL_URL for a user name or password only after `new URL`
 * parsed it; when it does not parse, the UsageError message echoes the whole SATCHEL_URL verbatim, password
 * included. A password with a character such as `#`, `/` or `?` (very common in generated passwords), or a
 * typo in the port, makes the URL unparseable.
 *
 * Consequence: `satchel …` prints the password on stderr (CI logs, terminal scrollback) although
 * docs/cli.md (exit code 2) promises "a SATCHEL_URL with a user name or password … (neither is printed)".
 *
 * Fix: lib/cli/io.ts, clientFrom: in the `new URL` catch, do not echo the value (or echo it through
 * withoutCredentials from lib/client/errors.ts, extended to a userinfo that holds `#`/`/`/`?`, e.g. strip
 * everything between `://` and the last `@`), e.g. "SATCHEL_URL is not a URL".
 */
import { describe, expect, it } from 'vitest';
import { satchel } from './run.js';

describe('SATCHEL_URL with a password that does not parse as a URL', () => {
  it.each([
    ['a # in the password', 'http://alice:s3cr#tpw@example.com'],
    ['a bad port', 'http://alice:s3cr3tpw@example.com:99999'],
  ])('%s: exit 2 and the password is not printed', async (_what, url) => {
    const r = await satchel(['session', 'list'], { SATCHEL_URL: url });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).not.toContain('s3cr');
  });
});
