// Before 2026-12-05 a rule ran its pattern again at every occurrence of its keyword, even inside its own
// previous match: text repeating `cookie: a=x` made `http-cookie` scan 8,192 characters per 11 (0.5 MB/s;
// a 4 MB append held the Node server's thread for 9 s), and `x-key:`, `pwd=`, `api_key=` made rules scan
// a long window and fail at every keyword. Now a rule resumes after its last match, and a value run longer
// than a rule takes is one match with no secret: each character is covered by a rule's matches about once.
// The work is counted (ruleWork), not timed; bench/redaction-adversarial.ts measures the throughput.
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER, ruleWork } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

/** Short units that hold a keyword (and a short value), each repeated to `SIZE` characters. */
const HOSTILE = [
  'cookie: a=x',
  'cookie: a=x; ',
  'Set-Cookie: a=b\n',
  'Set-Cookie:',
  'api_key=',
  'api_key=x ',
  'sk-proj-',
  'sk-proj-a ',
  'sk-ant-',
  'passwd=',
  'password=x ',
  'pwd=',
  'token=',
  'token=x ',
  'Authorization: Bearer x ',
  'x-key:',
  'apikey:',
  '-b=x ',
  'secret_access_key: a=x',
  'glpat-',
  'eyJ.',
  '--api-key=x',
  '--password=a',
  'mysql -',
  // Review s65f: a rejected key whose body holds its own prefix again (each keyword read the body again).
  'sk-proj-_',
  'fo1_',
];
const SIZE = 40_000;
/** The longest window a rule's pattern reads after its keyword (`kubeconfig-client-key-data`: 16 KB). */
const WINDOW = 16_384;

const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const counted = (f: () => void) => {
  ruleWork.runs = 0;
  ruleWork.matched = 0;
  f();
  return { ...ruleWork };
};

describe('the rules on hostile text (review s51e)', () => {
  it('no rule covers a character with its matches more than about once', () => {
    for (const unit of HOSTILE) {
      const text = fill(unit);
      const lower = text.toLowerCase();
      for (const rule of rules) {
        if (!rule.keywords.some((k) => lower.includes(k))) continue;
        const redactor = createRedactor([rule]);
        const work = counted(() => redactor.redact(text));
        expect(work.matched, `${rule.id} on ${JSON.stringify(unit)}`).toBeLessThanOrEqual(
          text.length + WINDOW,
        );
      }
    }
  });

  it('a value run longer than a rule takes is read once, not again at every keyword inside it', () => {
    const cases: [string, string][] = [
      ['x-key:', 'http-secret-header'],
      ['apikey:', 'http-secret-header'],
      ['pwd=', 'generic-password'],
      ['token=', 'generic-token'],
      ['api_key=', 'generic-api-key'],
      // Review s65f: a run of the header's value characters, 4,096 of them scanned at every keyword.
      ['authorization=aB3', 'authorization-header-bare'],
      ['Authorization:aB3', 'authorization-header-bare'],
      // Review s65f: `]` before the separator; the value is rejected by its name's own rule every time.
      ['apikey]=', 'generic-api-key'],
      ['token]=', 'generic-token'],
      ['pat]=a', 'generic-pat'],
      ['private-key]=', 'generic-private-key'],
    ];
    for (const [unit, id] of cases) {
      const redactor = createRedactor(rules.filter((r) => r.id === id));
      const work = counted(() => redactor.redact(fill(unit)));
      // One run per 512 characters or more (the longest value these rules take); before, one per keyword.
      expect(work.runs, `${id} on ${JSON.stringify(unit)}`).toBeLessThanOrEqual(SIZE / 256);
    }
  });

  it('all the rules together: the work grows with the text, not with the keywords in a window', () => {
    const redactor = createRedactor(rules);
    for (const unit of HOSTILE) {
      const small = counted(() => redactor.redact(fill(unit)));
      expect(small.matched, JSON.stringify(unit)).toBeLessThanOrEqual(8 * SIZE);
    }
  });

  it('secrets after hostile text are still redacted', () => {
    const redactor = createRedactor(rules);
    const token = 'Zx8Kq2Lm9Rt4Vb7Nc1Wd6Yf3Hj5Gp0Sa';
    const texts = [
      fill('cookie: a=x') + `\nCookie: session=${token}\n`,
      fill('cookie: a=x') + ` Set-Cookie: sid=${token}; Path=/`,
      fill('x-key:') + ` X-Api-Key: ${token}`,
      fill('pwd=') + ` password=${token}`,
      fill('api_key=') + `\napi_key=${token}`,
      fill('sk-ant-') + ` sk-ant-api03-${token}${token}`,
    ];
    for (const text of texts) {
      const out = redactor.redact(text).text;
      expect(out.includes(token), text.slice(-80)).toBe(false);
      expect(out).toContain(PLACEHOLDER);
    }
  });
});

// Before 2026-12-06 `url-credentials` ran its pattern at every `://`, and in text of `://` without an `@`
// each run backtracked through a 256-character lookahead (4.3 MB/s in bench:redaction). Now a rule that
// `requires` a character runs only where one is near enough for a match.
describe('a rule that requires a character near its keyword', () => {
  const url = createRedactor(rules.filter((r) => r.id === 'url-credentials'));

  it('does not run where the character is too far for a match', () => {
    const text = fill('://');
    const work = counted(() => expect(url.redact(text).text).toBe(text));
    expect(work.runs).toBe(0);
    const some = fill('://') + 'postgres://app:Zk3pQ9xW7vLm2@db.internal:5432/app';
    const after = counted(() => url.redact(some));
    expect(after.runs).toBeLessThanOrEqual(200); // only the keywords within 516 characters of the `@`
  });

  it('the command-line password flags: not run without a `-` near enough; found with one', () => {
    for (const [id, unit, line] of [
      ['mysql-password-flag', 'mysqlx ', 'mysql -uroot -pZk3pQ9xW7vLm2 app'],
      ['cli-password-short-flag', 'sqlcmd x', 'sqlcmd -S db -U sa -P Zk3pQ9xW7vLm2'],
    ] as const) {
      const redactor = createRedactor(rules.filter((r) => r.id === id));
      expect(counted(() => redactor.redact(fill(unit))).runs, id).toBe(0);
      expect(redactor.redact(`${fill(unit)}\n${line}`).text, id).not.toContain('Zk3pQ9xW7vLm2');
    }
  });

  it('still finds a password whose `@` is as far as a match allows', () => {
    const user = 'u'.repeat(256);
    const password = 'Zk3pQ9xW7vLm2' + 'a1B2'.repeat(60) + 'x9Y8z7W'; // 260: the pattern takes 256
    const text = `see https://${user}:${password.slice(0, 256)}@db.internal/x and ${fill('://')}`;
    const out = url.redact(text).text;
    expect(out).not.toContain(password.slice(0, 256));
    expect(out).toContain(`https://${user}:${PLACEHOLDER}@db.internal`);
  });
});
