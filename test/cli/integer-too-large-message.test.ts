/**
 * Fixed on 2026-12-04 (found by review): integerArg (lib/cli/args.ts) checks `n > max` with max defaulting to Number.MAX_SAFE_INTEGER but
 * words its message for that default as "must be at least <min>", so a number that is too LARGE is
 * refused with "<n> must be at least 2, not 100000000000000000000", which is false (it is at least 2).
 *
 * Consequence: a false, confusing usage message (exit 2 is right; what it says is wrong), e.g. for
 * `session trim`, `session list --limit`, `session cleanup`.
 *
 * Fix: lib/cli/args.ts integerArg: say "must be at most <max>" (or "too large") when n > max, whatever max is.
 */
import { describe, expect, it } from 'vitest';
import { satchel } from './run.js';

describe('a count too large to be exact', () => {
  it('is refused with a message that does not claim it is too small', async () => {
    const r = await satchel(['session', 'trim', 'some-id', '100000000000000000000'], {
      SATCHEL_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('must be at least');
  });
});
