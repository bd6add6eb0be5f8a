// Review s57d, finding 1. The keyed rules' quoted value (QUOTED_VALUE in lib/pipeline/rules.ts) took no
// backslash and no quote character of any kind inside it. A password holding `"`, `'` or `\`, or a
// non-ASCII letter in JSON that Python's json.dumps wrote (`\u00e4`), was then not redacted at all in JSON
// text, a Python dict or a shell line, while the same value without them was. Now a value quoted with a
// plain quote runs to the same quote, and may hold the other two and escapes.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);

/** JSON as Python's json.dumps writes it: every character outside ASCII as `\uXXXX`. */
const pyJson = (v: unknown) =>
  JSON.stringify(v, null, 2).replace(
    /[\u0080-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );

const CASES: { name: string; output: string; tail: string }[] = [
  {
    name: 'JSON text, a backslash',
    output: pyJson({ host: 'db', user: 'app', password: 'Zx9\\q#Lm2!wP' }),
    tail: 'q#Lm2!wP',
  },
  {
    name: 'JSON text, a quote',
    output: pyJson({ host: 'db', user: 'app', password: 'Lm2"Zx9#qWv8' }),
    tail: 'Zx9#qWv8',
  },
  {
    name: 'json.dumps, letters outside ASCII',
    output: pyJson({ host: 'db', user: 'app', password: 'pässwört-2024-Kq' }),
    tail: 'rt-2024-Kq',
  },
  {
    name: "a Python dict's repr",
    output: `{'host': 'db', 'user': 'app', 'password': 'Lm2"Zx9#qWv8'}`,
    tail: 'Zx9#qWv8',
  },
  { name: 'a shell line', output: `export DB_PASSWORD='Lm2"Zx9#qWv8'`, tail: 'Zx9#qWv8' },
];

describe('a password whose quoted value holds a quote, a backslash or a \\u escape', () => {
  for (const { name, output, tail } of CASES)
    it(`is redacted whole, and the text around it stays (${name})`, () => {
      const out = redact(output);
      expect(out).not.toContain(tail);
      expect(out).toContain(`${PLACEHOLDER}`);
      // Only the value goes: its quotes and the other fields stay.
      expect(out).toMatch(/["']\[REDACTED\]["']/);
      if (output.includes('host')) expect(out).toContain('db');
    });

  it('is stored nowhere when a tool printed it', async () => {
    const app = await makeApp();
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'check the db settings',
        messages: [
          { role: 'user', content: 'show me the settings' },
          ...CASES.map((c, i) => ({ role: 'tool', tool_call_id: `c${i}`, content: c.output })),
        ],
      },
    });
    expect(created.status).toBe(201);
    await settleAll(app);
    expect(
      holders(
        app.dir,
        CASES.map((c) => c.tail),
      ),
    ).toEqual([]);
  });

  it('ends at the quote it opened with; an escaped quote (JSON in a JSON string) as before', () => {
    expect(redact(`password: "it's 4 you" and more`)).toBe(`password: "${PLACEHOLDER}" and more`);
    expect(redact(`{\\"password\\": \\"abc12345\\", \\"x\\": 1}`)).toBe(
      `{\\"password\\": \\"${PLACEHOLDER}\\", \\"x\\": 1}`,
    );
    expect(redact(`const password = "hunter22"; const y = 'z';`)).toBe(
      `const password = "${PLACEHOLDER}"; const y = 'z';`,
    );
    // Stand-ins stay.
    expect(redact(`"password": "\${DB_PASSWORD}"`)).toBe(`"password": "\${DB_PASSWORD}"`);
  });
});
