// Review s57d, findings 5 and 6: known values (`Satchel-Secrets`, SATCHEL_REDACT_VALUES) in two forms
// the docs promise but the search missed, so they were stored as sent.
//  5. In wrapped base64 (`base64 deploy.env`: GNU coreutils wraps at 76 columns, as MIME and PEM do), a
//     value whose base64 runs over a line break. Now runs of equal-width base64 lines are also searched
//     with their line breaks taken out (redact.ts unwrappedViews).
//  6. In JSON whose writer escapes every character outside ASCII (Python's json.dumps, `jq -a`, PHP's
//     json_encode): `Grüße-Köln-2024!` as `Gr\u00fc\u00dfe-K\u00f6ln-2024!`. Now that form (either case of
//     hex digits) is one of the value's known forms.
import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const WRAPPED = 'Orchid-Lamp-7741-Quartz-Zebra';
const UNICODE = 'Grüße-Köln-2024!';
const redactor = createRedactor(rules, { knownValues: [WRAPPED, UNICODE] });
const redact = (s: string) => redactor.redact(s).text;

const wrap = (s: string, width = 76) => s.match(new RegExp(`.{1,${width}}`, 'g'))!.join('\n');
/** A .env whose DB_PASS line puts the value's base64 across the first line break (at 76 columns). */
const ENV = `# deploy settings for the staging cluster\nDB_PASS=${WRAPPED}\nREGION=eu-west-1\n`;
const pyJson = (v: unknown) =>
  JSON.stringify(v).replace(
    /[\u0080-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
const decoded = (b64: string) => Buffer.from(b64.replace(/\s/g, ''), 'base64').toString('latin1');

describe('a known value in wrapped base64', () => {
  it('is redacted where its base64 runs over a line break (LF, CRLF, escaped in JSON, 100 columns)', () => {
    const b64 = Buffer.from(ENV).toString('base64');
    for (const [width, brk] of [
      [76, '\n'],
      [76, '\r\n'],
      [100, '\n'],
      [76, '\\n'],
    ] as const) {
      const text = wrap(b64, width).replaceAll('\n', brk);
      const out = redact(text);
      expect(out).toContain(PLACEHOLDER);
      expect(decoded(out.replaceAll(PLACEHOLDER, '').replaceAll('\\n', ''))).not.toContain(WRAPPED);
    }
  });

  it('leaves base64 without it, and lines not of one width, as they are', () => {
    const other = wrap(
      Buffer.from(ENV.replace(WRAPPED, 'Another-Value-Entirely-99')).toString('base64'),
    );
    expect(redact(other)).toBe(other);
  });

  for (const how of ['Satchel-Secrets', 'SATCHEL_REDACT_VALUES'] as const)
    it(`is stored nowhere (${how})`, async () => {
      const app = await makeApp(
        how === 'SATCHEL_REDACT_VALUES'
          ? { env: { SATCHEL_REDACT_VALUES: JSON.stringify([WRAPPED, UNICODE]) } }
          : {},
      );
      const secrets = Buffer.from(JSON.stringify([WRAPPED, UNICODE])).toString('base64');
      const output = wrap(Buffer.from(ENV).toString('base64'));
      const created = await app.call('POST', '/v1/sessions', {
        headers: how === 'Satchel-Secrets' ? { 'satchel-secrets': secrets } : {},
        body: {
          task: 'ship it',
          messages: [
            { role: 'user', content: 'encode the env file, then print the settings' },
            { role: 'tool', tool_call_id: 'c1', content: output },
            { role: 'tool', tool_call_id: 'c2', content: pyJson({ note: UNICODE, port: 5432 }) },
          ],
        },
      });
      expect(created.status).toBe(201);
      await settleAll(app);
      const lines = output.split('\n');
      // The line pieces as sent (JSON-escaped in the session object), and the \u-escaped value.
      const escaped = pyJson(UNICODE).slice(1, -1).replaceAll('\\', '\\\\');
      expect(holders(app.dir, [`${lines[0]}\\n${lines[1]!.slice(0, 8)}`, escaped])).toEqual([]);
    });
});

describe('a known value with characters outside ASCII, \\u-escaped in JSON', () => {
  it('is redacted with either case of hex digits, and in JSON inside a JSON string', () => {
    const lower = pyJson({ host: 'db.internal', note: UNICODE });
    expect(lower).toContain('Gr\\u00fc\\u00dfe-K\\u00f6ln-2024!');
    expect(redact(lower)).toBe(`{"host":"db.internal","note":"${PLACEHOLDER}"}`);
    const upper = lower.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`);
    expect(redact(upper)).toBe(`{"host":"db.internal","note":"${PLACEHOLDER}"}`);
    const twice = JSON.stringify(lower);
    expect(redact(twice)).toBe(JSON.stringify(`{"host":"db.internal","note":"${PLACEHOLDER}"}`));
  });
});
