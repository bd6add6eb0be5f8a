// Before 2026-12-06 an odek file holding an integer past 2^53 (a 64-bit id in metadata or a content part)
// was imported with other digits (JSON.parse rounds it, and the CLI sent the rounded number, which the
// server cannot tell from one sent so), and `1e400` became Infinity, sent as null. The server refuses such
// numbers in a body (400); the file is refused the same way, naming the number, rather than imported changed.
import { expect, it } from 'vitest';
import { parseOdekFile } from '../../lib/odek/format.js';
import { newFormat } from '../support/odek-files.js';

/** A file whose first message has a field of its own (kept as sent) with this JSON value. */
const withValue = (value: string) => {
  const file = newFormat();
  file.messages[1] = { ...file.messages[1]!, run_id: 'RUN' } as (typeof file.messages)[number];
  return JSON.stringify(file).replace('"RUN"', value);
};

it('a number the parse would change is the file failure, naming it; exact numbers and digits in strings are taken', () => {
  const big = parseOdekFile(withValue('12345678901234567890'));
  // Named by where it is, not quoted: it may be a secret's (review s59h).
  expect(big).toEqual({
    ok: false,
    reason: expect.stringContaining('at messages[1].run_id (past 2^53'),
  });
  const huge = parseOdekFile(withValue('1e400'));
  expect(huge).toEqual({ ok: false, reason: expect.stringContaining('1e400') });
  for (const fine of [
    '9007199254740991',
    '-9007199254740991',
    '1.5e300',
    '"12345678901234567890"',
    '0.1',
  ]) {
    const r = parseOdekFile(withValue(fine));
    expect(r.ok, fine).toBe(true);
    if (r.ok)
      expect((r.session.messages[1] as { run_id?: unknown }).run_id).toEqual(JSON.parse(fine));
  }
});
