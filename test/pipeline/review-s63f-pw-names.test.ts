// Review s63f, finding 8. Names ending in `_PW` (`DB_PW`, `ADMIN_PW`, `ROOT_PW`: a common abbreviation in
// .env files, CI variables and Ansible) were never redacted, in any form: the rules knew `PASSWORD`,
// `PASSWD`, `PASS`, `PWD` and `PASSPHRASE`. `generic-password` now takes `_pw` (not `pw` alone: too short
// a word), and a name/value pair's name (`- name: DB_PW` then `value: …`) may end in `_pw` too.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('names ending in _PW', () => {
  it.each([`DB_PW=${PW}`, `export ADMIN_PW="${PW}"`, `ROOT_PW: ${PW}`])(
    'a .env or YAML line is not stored: %s',
    async (line) => expect(await storedHolders('cat .env', line)).toEqual([]),
  );

  it('in code, JSON and a Kubernetes env entry', () => {
    for (const text of [
      `db_pw = '${PW}'`,
      `{"SMTP_PW": "${PW}"}`,
      `env:\n  - name: DB_PW\n    value: ${PW}\n`,
    ])
      expect(redact(text), text).not.toContain(PW);
  });

  it("a tool call's JSON argument named DB_PW is not stored (lib/pipeline/save.ts PASS_NAME)", async () => {
    const call = { name: 'configure', arguments: JSON.stringify({ DB_PW: PW, db_host: 'db1' }) };
    expect(await storedHolders(call)).toEqual([]);
  });

  it('settings and other names stay', () => {
    for (const text of ['SHOW_PW=true', 'the_pw_length = 12', 'MAX_PW: 64', 'npw=Zk3pQ9xW7vLm2'])
      expect(redact(text)).toBe(text);
  });
});
