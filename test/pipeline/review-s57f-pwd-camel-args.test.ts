// Review s57f, finding 7. save.ts PASS_NAME took `pass` / `Pass` / `PASS` and `_pwd` / `-PWD`, but not
// camelCase `Pwd` (`dbPwd`, `adminPwd`; it took camelCase `userPass`). In text `generic-password` redacts
// `dbPwd: "…"`, and the same name as a name/value pair went too; as a tool call's argument the value was
// stored as sent.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { redactArguments } from '../../lib/pipeline/save.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const args = (a: object) =>
  JSON.parse(redactArguments(JSON.stringify(a), (s) => pipeline.redactText(s)));
const PASSWORD = 'S3cr3t!Tulip-42';

describe('a password under a camelCase `…Pwd` name', () => {
  it('control: text and a name/value pair redact it', () => {
    expect(pipeline.redactText(`{"dbPwd": "${PASSWORD}"}`)).not.toContain(PASSWORD);
    expect(JSON.stringify(args({ env: [{ name: 'dbPwd', value: PASSWORD }] }))).not.toContain(
      PASSWORD,
    );
  });

  it('goes in JSON arguments too', () => {
    const out = args({
      host: 'db.internal',
      dbPwd: PASSWORD,
      adminPwd: PASSWORD,
      userPass: PASSWORD,
    });
    expect(JSON.stringify(out)).not.toContain(PASSWORD);
    expect(out.host).toBe('db.internal');
  });

  it('a directory and other words ending in pwd stay', () => {
    const out = args({ pwd: '/home/agent', oldpwd: '/tmp' });
    expect(out).toEqual({ pwd: '/home/agent', oldpwd: '/tmp' });
  });
});
