// Review s65i, F3 and F6. Short password flags in an argv array printed as compact JSON (`JSON.stringify`,
// `docker inspect --format '{{json .Config.Cmd}}'`: no blank after the comma) were stored: the rules wanted
// a blank before the flag's quote. And a password flag inside Markdown inline code took the closing
// backtick with its value, so the stored Markdown lost its code span.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('short password flags in compact JSON argv arrays', () => {
  it.each([
    `["redis-cli","-a","${PW}"]`,
    `["redis-cli","-h","cache","-a","${PW}","ping"]`,
    `["mysql","-uroot","-p${PW}"]`,
    `["mysql","-u","root","-p${PW}"]`,
    `["sqlcmd","-S","db","-U","sa","-P","${PW}"]`,
    `{"Cmd":["redis-cli","-a","${PW}"]}`,
  ])('is not stored: %s', async (output) =>
    expect(await storedHolders('docker inspect app', output)).toEqual([]),
  );

  it('other compact arrays stay', () => {
    for (const text of [
      `["redis-cli","-h","cache","-p","6379"]`,
      `["mysql","-h","db","-P","3306"]`,
      `["ls","-a","src"]`,
      `["sqlcmd","-S","db","-U","sa","-P","$SA_PASSWORD"]`,
    ])
      expect(redact(text)).toBe(text);
  });
});

describe('a password flag in Markdown inline code', () => {
  it.each([
    ['Run `mysql -uroot -p' + PW + '` to connect.', 'Run `mysql -uroot -p[REDACTED]` to connect.'],
    ['Run `redis-cli -a ' + PW + '` first', 'Run `redis-cli -a [REDACTED]` first'],
    ['Use `sshpass -p ' + PW + '` then `ssh host`', 'Use `sshpass -p [REDACTED]` then `ssh host`'],
  ])('keeps the closing backtick: %s', (text, want) => expect(redact(text)).toBe(want));
});
