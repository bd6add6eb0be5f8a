// Review s65i, F1. Since 9707a60 a string under any field named `arguments` that started with `{` or `[`
// was walked as a tool call's JSON arguments, and, not being JSON, replaced whole by `{"redacted":true}`: a
// session's metadata value, a text part's extra field. Only a Responses `function_call` or `mcp_call`
// part's arguments are JSON; elsewhere the string is text (its secret goes, the rest stays).
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { roundTrip } from '../support/inline-files.js';

const PW = 'Tq7vLm2pXz9wQe4R';
const VALUE = `[prod] deploy --password ${PW} --region eu-west-1 (retry 2)`;
const REDACTED = VALUE.replace(PW, '[REDACTED]');

describe('a string under `arguments` outside a function call is text', () => {
  it('in metadata', async () => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/sessions', {
      body: {
        task: 't',
        metadata: { arguments: VALUE, other: VALUE },
        messages: [{ role: 'user', content: 'hi' }],
      },
    });
    expect(res.status, res.text).toBe(201);
    const got = await app.call('GET', `/v1/sessions/${res.json.id}`);
    expect(got.json.metadata).toEqual({ arguments: REDACTED, other: REDACTED });
  });

  it("in a text part's extra field", async () => {
    const r = await roundTrip([{ type: 'text', text: 'run it', arguments: `{draft} ${VALUE}` }]);
    expect(r.content).toEqual([{ type: 'text', text: 'run it', arguments: `{draft} ${REDACTED}` }]);
  });

  it("a function_call or mcp_call part's arguments: JSON walked as JSON, other text redacted as text", async () => {
    const json = JSON.stringify({ user: 'app', password: 73910264 });
    const r = await roundTrip([
      { type: 'function_call', call_id: 'c1', name: 'sh', arguments: json },
      { type: 'mcp_call', id: 'm1', name: 'db', arguments: json },
      { type: 'function_call', call_id: 'c2', name: 'sh', arguments: `{x} ${VALUE}` },
    ]);
    const args = (r.content as { arguments: string }[]).map((p) => p.arguments);
    expect(args).toEqual([
      '{"user":"app","password":"[REDACTED]"}',
      '{"user":"app","password":"[REDACTED]"}',
      `{x} ${REDACTED}`,
    ]);
    expect(r.stored).not.toContain('73910264');
    expect(r.stored).not.toContain(PW);
  });
});
