// Until 2026-12-06 (s54) every value a rule's checks rejected was searched again, lower-cased, for each of
// the rule's keywords (`nextKeyword`): in `?signature=x` repeated, `url-query-secret` matches `signature=x`
// (too short) and searched it for 23 keywords at each of them (7.4 MB/s in bench:redaction). Only a keyword
// after a separator or a capital can start another secret: a value without either (nor a character outside
// ASCII) is now resumed after at once. Counted by ruleWork.rescanned, not timed.
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER, ruleWork } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const SIZE = 40_000;
const SECRET = 'Zk3pQ9xW7vLm2Qa8';
const SIGNATURE = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const redactor = createRedactor(rules);

describe('a rejected value is searched again only where a keyword in it may start a secret', () => {
  it('the secrets after or inside rejected values are still redacted', () => {
    const cases = [
      `${fill('?signature=x')}&X-Amz-Signature=${SIGNATURE}`,
      `${fill('?signature=x')}&token=${SECRET}`,
      `https://s3.example.com/b/k?signature=x?signature=x&X-Amz-Signature=${SIGNATURE}`,
      `?sig=ab€?token=${SECRET}`, // a character outside ASCII in the rejected value: searched as before
      `helm upgrade app ./chart --set postgresql.password=changeme,redis.password=${SECRET}`,
      `password: "for example PGPASSWORD=${SECRET}"`,
      `https://app.example.com/cb?pwd=abc?token=${SECRET}`,
    ];
    for (const text of cases) {
      const out = redactor.redact(text).text;
      expect(out, text.slice(-90)).not.toContain(SECRET);
      expect(out, text.slice(-90)).not.toContain(SIGNATURE);
      expect(out).toContain(PLACEHOLDER);
    }
  });

  it('`?signature=x` repeated: no rejected value is searched again, one run per keyword', () => {
    const url = createRedactor(rules.filter((r) => r.id === 'url-query-secret'));
    ruleWork.runs = 0;
    ruleWork.rescanned = 0;
    const text = fill('?signature=x');
    expect(url.redact(text).text).toBe(text);
    expect(ruleWork.rescanned).toBe(0);
    expect(ruleWork.runs).toBeLessThanOrEqual(Math.ceil(SIZE / '?signature=x'.length));
  });

  it('a rejected value with a separator in it is searched once, not again per keyword inside it', () => {
    ruleWork.rescanned = 0;
    const text = fill('--set a.password=changeme,');
    redactor.redact(text);
    // Each rejected value (`changeme,a.password=changeme,…` for the typed-password rules) is searched up to
    // its next keyword after a separator: about the text's length per rule, not per keyword.
    expect(ruleWork.rescanned).toBeLessThanOrEqual(8 * SIZE);
  });
});
