// Review s63f, finding 1. Text repeating `--api-key=x` or `--password=a` made `cli-secret-flag` and
// `cli-key-flag` take 512 characters of the run at every keyword, find no end for a value there and give
// them back one by one: no match, so the scan never resumed past them, and the next keyword 11 characters
// on did the same (1 MB/s; a 16 MB message held the Node server's thread for 9 s). `mysql -` repeated made
// `mysql-password-flag` walk 200 characters at every `mysql` (4 MB/s). Now a run of 513 characters that
// cannot end a flag's value is one match without a secret (as the generic rules' `tooLong`), and the
// MySQL rule's `-p` must come before the next MySQL command. The work is counted (ruleWork), not timed.
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER, ruleWork } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const SIZE = 40_000;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const rule = (id: string) => rules.find((r) => r.id === id)!;
const runs = (id: string, text: string) => {
  const redactor = createRedactor([rule(id)]);
  ruleWork.runs = 0;
  ruleWork.matched = 0;
  redactor.redact(text);
  return { ...ruleWork };
};

describe('hostile command-line flags (review s63f)', () => {
  it('a flag value run longer than a flag takes is read once, not again at every keyword in it', () => {
    for (const [id, unit] of [
      ['cli-secret-flag', '--api-key=x'],
      ['cli-secret-flag', '--password=a'],
      ['cli-key-flag', '--api-key=x'],
      ['cli-secret-flag', '-storepass=x'],
    ] as const) {
      const work = runs(id, fill(unit));
      // One run per 513 characters or more (the matches cover the text once); before, one per keyword.
      expect(work.runs, `${id} on ${JSON.stringify(unit)}`).toBeLessThanOrEqual(SIZE / 256);
      expect(work.matched, `${id} on ${JSON.stringify(unit)}`).toBeLessThanOrEqual(SIZE);
    }
  });

  it('a MySQL command is read up to the next one, not 200 characters past it', () => {
    const mysql = rule('mysql-password-flag');
    const text = 'mysql -h db; echo; mysql -e "select 1" mysql -uroot -pZk3pQ9xW7vLm2 app';
    // Run at the second `mysql`: before, its gap ran over the third command to that one's `-p`.
    const at = text.indexOf('mysql -e');
    mysql.pattern.lastIndex = at;
    expect(mysql.pattern.exec(text)).toBeNull();
    const third = text.indexOf('mysql -uroot');
    mysql.pattern.lastIndex = third;
    expect(mysql.pattern.exec(text)?.index).toBe(third);
    // The password is still found, by the command it belongs to.
    const out = createRedactor([mysql]).redact(text).text;
    expect(out).toBe(text.replace('Zk3pQ9xW7vLm2', PLACEHOLDER));
  });

  it('passwords after or among the hostile text are still redacted', () => {
    const redactor = createRedactor(rules);
    const secret = 'Zk3pQ9xW7vLm2Qa8Rt4Vb7Nc';
    for (const text of [
      `${fill('--api-key=x')} --api-key=${secret}`,
      `${fill('--password=a')}\ncurl --password '${secret}' https://x.io`,
      `${fill('mysql -')}\nmysql -uroot -p${secret} app`,
      `${fill('mysql -')} mysql -uroot -p${secret} app`,
      `tool --token=${'a'.repeat(600)};--api-key ${secret}`,
    ]) {
      const out = redactor.redact(text).text;
      expect(out.includes(secret), text.slice(-60)).toBe(false);
      expect(out).toContain(PLACEHOLDER);
    }
  });
});
