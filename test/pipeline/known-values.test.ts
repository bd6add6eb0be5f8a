import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { ConfigError, configFrom } from '../../lib/server/config.js';

// Known values (SATCHEL_REDACT_VALUES, Satchel-Secrets) are found where the text escapes them too: JSON's
// `\/` and `\u00XX`, percent escapes in either case, form encoding (review, 2026-12-04).
describe('known values in escaped text', () => {
  const slashy = 'q9Zt/Lm3Xw/Pp8Rk'; // base64-ish, as AWS secret keys are
  const amp = 'Tr0ub&dor<3x';
  const spaced = 'correct horse/battery staple';
  it.each([
    ['JSON with escaped slashes', slashy, `{"key":"${slashy.replaceAll('/', '\\/')}"}`],
    ['JSON with \\u escapes (Go)', amp, '{"hint":"Tr0ub\\u0026dor\\u003c3x"}'],
    ['lowercase percent escapes', slashy, 'https://example.com/cb?state=q9Zt%2fLm3Xw%2fPp8Rk&x=1'],
    ['mixed-case percent escapes', slashy, 'state=q9Zt%2FLm3Xw%2fPp8Rk'],
    ['form encoding (+ for a space)', spaced, 'user=a&pass=correct+horse%2Fbattery+staple&go=1'],
    ['form encoding without escapes', 'correct horse battery', 'pass=correct+horse+battery&go=1'],
  ])('%s', (_name, value, text) => {
    for (const redactor of [
      createRedactor([], { knownValues: [value] }),
      createRedactor(rules).withKnownValues([value]),
    ]) {
      const out = redactor.redact(text);
      expect(out.count, text).toBe(1);
      expect(out.text).toContain(PLACEHOLDER);
      // Nothing of the value is left (its escapes included), and the text around it stays.
      expect(out.text).not.toMatch(/Lm3Xw|dor|horse|battery/);
      expect(out.text.slice(0, 5)).toBe(text.slice(0, 5));
      expect(redactor.redact(out.text).count).toBe(0);
    }
  });

  it('that overlap, or repeat overlapping themselves, are redacted whole', () => {
    // The forms are found in one regex pass (2026-12-04): a match must not hide one starting inside it.
    const a = 'secret-alpha-7';
    const b = 'alpha-7-omega-9';
    const r = createRedactor([], { knownValues: [a, b] });
    const out = r.redact(`x secret-alpha-7-omega-9 y`);
    expect(out.text).toBe(`x ${PLACEHOLDER} y`);
    const twice = createRedactor([], { knownValues: ['k3yk3yk3y'] }).redact('<k3yk3yk3yk3y>');
    expect(twice.text).toBe(`<${PLACEHOLDER}>`);
    // Characters a regex would read as syntax are matched as themselves.
    const odd = 'a.b*c+d?(e)[f]{g}|h^i$j\\k';
    expect(createRedactor([], { knownValues: [odd] }).redact(`(${odd})`).text).toBe(
      `(${PLACEHOLDER})`,
    );
    expect(createRedactor([], { knownValues: [odd] }).redact('aXbbbcddeefg').count).toBe(0);
  });

  it('in long text, only around its escapes', () => {
    const prose = 'Nothing escaped in these words at all. '.repeat(300);
    const text = `${prose}{"key":"q9Zt\\/Lm3Xw\\/Pp8Rk"}${prose}`;
    const out = createRedactor([], { knownValues: [slashy] }).redact(text);
    expect(out.text).toBe(`${prose}{"key":"${PLACEHOLDER}"}${prose}`);
    expect(out.count).toBe(1);
  });
});

// A value shorter than the minimum would be skipped (it would destroy ordinary text): refused, not ignored.
describe('SATCHEL_REDACT_VALUES under the minimum length', () => {
  it('is refused at start, naming the minimum', async () => {
    const start = (values: string[]) =>
      configFrom({ SATCHEL_REDACT_VALUES: JSON.stringify(values) }, 'local');
    const err = await start(['corp-known-value-7781', 'Q7#zk']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String(err)).toMatch(/SATCHEL_REDACT_VALUES .*at least 6 characters/);
    expect((await start(['Q7#zk9'])).redactValues).toEqual(['Q7#zk9']);
  });
});
