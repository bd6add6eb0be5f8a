import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { jsonText, redactArguments, redactJsonValue } from '../../lib/pipeline/save.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

// Review s59e. JSON nested deeper than 128 levels inside a string (tool-call arguments; a webhook's JSON)
// passes the body's depth check, since the body itself is shallow. The JSON walk recursed and threw past
// 128 levels, and the arguments were then redacted as plain text, where the JSON rule (every string under a
// secret-sounding key goes whole) does not hold: `{"password": ["…"], "d": [[[…140 deep…]]]}` was stored
// as sent. The walk is iterative now, and the result is serialised at any depth (JSON.stringify itself
// throws past a few thousand levels).

const redactor = createRedactor(rules);
const text = (s: string) => redactor.redact(s).text;
const PASSWORD = 'Tr0ub4dor&3xyz';
const brackets = (n: number) => '['.repeat(n) + ']'.repeat(n);
/** `{"a":{"a":…leaf…}}`, `n` objects deep. */
const objects = (n: number, leaf: string) => '{"a":'.repeat(n) + leaf + '}'.repeat(n);

describe('JSON arguments nested past 128 levels keep the JSON rules (review s59e)', () => {
  for (const depth of [10, 140, 20_000]) {
    it(`a password list next to a branch ${depth} deep: the password goes, the rest is as sent`, () => {
      // Before: 140 and 20 000 came back as sent (the text rules do not know `"password": ["…"]`).
      const args = `{"password": ["${PASSWORD}"], "d": ${brackets(depth)}}`;
      expect(redactArguments(args, text)).toBe(
        `{"password":["${PLACEHOLDER}"],"d":${brackets(depth)}}`,
      );
    });
  }

  it('a secret-sounding key 300 levels down has its value whole, as at the top', () => {
    const args = objects(300, `{"token": {"value": "${PASSWORD}"}, "n": 1.50}`);
    expect(redactArguments(args, text)).toBe(
      objects(300, `{"token":{"value":"${PLACEHOLDER}"},"n":1.50}`).replace(/ /g, ''),
    );
  });

  it('a webhook payload nested 5 000 levels deep: its password is redacted and counted', () => {
    let hits = 0;
    const value = JSON.parse(`{"password": ["${PASSWORD}"], "d": ${brackets(5000)}}`) as unknown;
    const red = redactJsonValue(value, text, () => void hits++);
    expect(jsonText(red)).toBe(`{"password":["${PLACEHOLDER}"],"d":${brackets(5000)}}`);
    expect(hits).toBe(1);
  });

  it('jsonText writes what JSON.stringify writes, and past the depth where it throws', () => {
    const shallow = { a: [1, 'x', null, true, { '': -0.5, 'c d': [] }], 'b"': {} };
    expect(jsonText(shallow)).toBe(JSON.stringify(shallow));
    let deep: unknown = { k: ['é\n', 2, false, null, {}], u: undefined };
    for (let i = 0; i < 50_000; i++) deep = i % 2 ? [deep, 1] : { x: deep, y: 'z' };
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    let expected = '{"k":["é\\n",2,false,null,{}]}';
    for (let i = 0; i < 50_000; i++)
      expected = i % 2 ? `[${expected},1]` : `{"x":${expected},"y":"z"}`;
    expect(jsonText(deep)).toBe(expected);
  });

  for (const depth of [140, 20_000]) {
    it(`a session created with such arguments (a branch ${depth} deep) stores no password`, async () => {
      const app = await makeApp();
      const args = `{"password": ["${PASSWORD}"], "d": ${brackets(depth)}}`;
      const call = { id: 'c1', type: 'function', function: { name: 'login', arguments: args } };
      const messages = [
        { role: 'user', content: 'log in' },
        { role: 'assistant', content: '', tool_calls: [call] },
      ];
      const res = await app.call('POST', '/v1/sessions', {
        body: { task: 't', id: 's', messages },
      });
      expect(res.status).toBe(201);
      await settleAll(app);
      const got = await app.call('GET', '/v1/sessions/s');
      expect(got.json.messages[1].tool_calls[0].function.arguments).toBe(
        `{"password":["${PLACEHOLDER}"],"d":${brackets(depth)}}`,
      );
      expect(holders(app.dir, [PASSWORD])).toEqual([]);
    });
  }
});
