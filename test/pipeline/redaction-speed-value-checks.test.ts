// Since 2026-12-06 (s54) a rule's value checks (length, entropy, placeholders, documented examples) run once
// for a value the rule checked just before (a header on every line of a log, or `secret: x` repeated:
// `secret: x` was 12.2 MB/s in bench:redaction, `token\t="a1` 12.3), placeholderIn's verdict is not looked
// for again (isExampleValue ran twice per value), and an entropy's terms are computed once per length.
// Counted by ruleWork.checks, not timed.
import { describe, expect, it } from 'vitest';
import {
  createRedactor,
  PLACEHOLDER,
  ruleWork,
  shannonEntropy,
} from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const SIZE = 40_000;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const redactor = createRedactor(rules);
const redact = (text: string) => redactor.redact(text).text;

describe("a rule's value checks", () => {
  it('the same value repeated is checked once per rule, and still redacted every time', () => {
    for (const unit of [
      'secret: x',
      'token\t="a1',
      'password is 1/',
      'authorization="a1',
      'secret_access_key: a=x',
    ]) {
      ruleWork.checks = 0;
      const { count } = redactor.redact(fill(unit));
      expect(count, unit).toBeGreaterThan(SIZE / 60);
      expect(ruleWork.checks, unit).toBeLessThanOrEqual(10);
    }
  });

  it('values alternating between rejected and accepted: every secret is redacted, no stand-in is', () => {
    const secrets = ['Xk9mQ2vLp7Rt4Wz8', 'Bq7Lm3Zx9Rw2Tp5K', 'Hn4Vc8Yq2Jd6Ws1E'];
    let text = '';
    for (let i = 0; i < 300; i++)
      text += `password=changeme\npassword=${secrets[i % 3]}\npassword=\${DB_PASSWORD}\n`;
    const out = redactor.redact(text);
    for (const s of secrets) expect(out.text).not.toContain(s);
    expect(out.count).toBe(300);
    expect(out.text).toContain('password=changeme\n');
    expect(out.text).toContain('password=${DB_PASSWORD}\n');
  });

  it('one value, two rules, two verdicts: each rule keeps its own', () => {
    // 12 characters: `generic-access-key` takes it (8 or more), `generic-key` does not (16 or more).
    const value = 'Zk3pQ9xW7vLm';
    const out = redact(`access_key: ${value}\nsigning_key: ${value}\naccess_key: ${value}`);
    expect(out).toBe(
      `access_key: ${PLACEHOLDER}\nsigning_key: ${value}\naccess_key: ${PLACEHOLDER}`,
    );
  });

  it('placeholders and documented examples are kept, blank- or quote-wrapped values checked in full', () => {
    expect(redact('api_key: "AKIAIOSFODNN7EXAMPLE"')).toBe('api_key: "AKIAIOSFODNN7EXAMPLE"');
    expect(redact('<add key="Password" value=" changeme "/>')).toBe(
      '<add key="Password" value=" changeme "/>',
    );
    expect(redact('<add key="Password" value=" Zk3pQ9xW7vLm2 "/>')).toBe(
      `<add key="Password" value="${PLACEHOLDER}"/>`,
    );
    expect(redact(`secret: ${PLACEHOLDER}tail`)).toBe(`secret: ${PLACEHOLDER}tail`);
    expect(redact('password: your_password_here')).toBe('password: your_password_here');
  });

  it('an entropy is the same sum as before, to the last bit, whatever the order of lengths', () => {
    const reference = (s: string) => {
      const counts = new Map<string, number>();
      for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
      let h = 0;
      for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
      return h;
    };
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    const alphabet = 'abcdefgh0123456789ABCDEF+/_-';
    for (let i = 0; i < 3000; i++) {
      const length = 1 + (next() % (i % 2 ? 40 : 9));
      let s = '';
      for (let k = 0; k < length; k++) s += alphabet[next() % (1 + (i % alphabet.length))];
      expect(shannonEntropy(s), s).toBe(reference(s));
    }
    expect(shannonEntropy('abcdefgh')).toBe(3); // on the threshold of the rules that take 3
  });
});
