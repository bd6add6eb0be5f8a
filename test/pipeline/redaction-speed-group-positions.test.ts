// Until 2026-12-06 (s54) a rule with a capture group ran its pattern with the d flag (group positions),
// which about doubles the cost of a match: in hostile text (`secret: x`, `token\t="a1` repeated), where
// matches are not rare, it showed. Now the group is found in the match, where its value occurs there once,
// and the d-flagged pattern runs again only where the value occurs twice (`smtp_pass: pass`); a group
// inside a lookaround keeps the d flag alone. The ranges are sorted only when out of order (apply).
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER, ruleWork } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const SIZE = 40_000;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const redactor = createRedactor(rules);
const redact = (text: string) => redactor.redact(text).text;

describe("a secret's position in its match", () => {
  it('a value that also occurs in its name is redacted where the value is', () => {
    ruleWork.reruns = 0;
    expect(redact('smtp_pass: pass')).toBe(`smtp_pass: ${PLACEHOLDER}`);
    expect(ruleWork.reruns).toBeGreaterThan(0);
    expect(redact('x_token: token-token-9f8a7b6c5d4e1234')).toBe(`x_token: ${PLACEHOLDER}`);
    expect(redact('api_key: api_key_9f8a7b6c5d4e')).toBe(`api_key: ${PLACEHOLDER}`);
    expect(redact('Cookie: ie=Zk3pQ9xW7vLm2Qa; ie')).toBe(`Cookie: ie=${PLACEHOLDER}; ie`);
  });

  it('ranges out of order (a bot id extended back, a URL decoded) are redacted where they are', () => {
    const text =
      'bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 and ' +
      'https://x.io/cb?next=https%3A%2F%2Fa.io%2F%3Ftoken%3DZk3pQ9xW7vLm2Qa8 and password=Xk9mQ2vLp7Rt4Wz8';
    const out = redactor.redact(text);
    expect(out.text).toBe(
      `bot ${PLACEHOLDER} and https://x.io/cb?next=https%3A%2F%2Fa.io%2F%3Ftoken%3D${PLACEHOLDER} ` +
        `and password=${PLACEHOLDER}`,
    );
    expect(out.count).toBe(3);
  });

  it('hostile text of matches: the d-flagged pattern never runs again', () => {
    for (const unit of ['secret: x', 'token\t="a1', 'password is 1/', 'authorization="a1']) {
      ruleWork.reruns = 0;
      expect(redactor.redact(fill(unit)).count, unit).toBeGreaterThan(SIZE / 60);
      expect(ruleWork.reruns, unit).toBe(0);
    }
  });
});
