// The first version (2026-12-05) of keeping numbers as sent scanned JSON text with a backtracking regular
// expression, which overflows V8's stack on a string of some millions of characters: a 10 MB message with a
// 16-digit number in it answered 500, large tool arguments fell back to plain-text redaction (a value under
// a secret-sounding key was stored in clear), and 2^64 was taken though stored as other digits. Now a scan.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

it.each(['18446744073709551616', '1152921504606846976'])(
  'an integer past 2^53 that a double holds (%s) is kept as sent or refused, never rewritten',
  async (n) => {
    const { call } = await makeApp();
    const res = await call('POST', '/v1/sessions', {
      raw: `{"task":"x","messages":[{"role":"user","content":"x","provider_meta":{"id":${n}}}]}`,
      headers: { 'content-type': 'application/json' },
    });
    if (res.status === 400) return;
    expect(res.status).toBe(201);
    const got = await call('GET', `/v1/sessions/${res.json.id}`);
    expect(got.text).toContain(`"id":${n}`); // found: 18446744073709552000 / 1152921504606847000
  },
);

/**
 * lib/http/body.ts inexactInteger: `"(?:[^"\\]|\\.)*"` over the whole body, run whenever 16 digits occur
 * anywhere (a timestamp in ns, a card-like number in prose). On a JSON string of ~9M+ plain characters V8's
 * regexp backtrack stack overflows: RangeError, uncaught -> 500, under the 64 MiB body limit.
 */
it('a valid 10 MB message with a 16-digit number in it is not a 500', async () => {
  const { call } = await makeApp();
  const raw = JSON.stringify({
    task: 'x',
    messages: [{ role: 'user', content: 'trace id 1234567890123456 ' + 'x'.repeat(10_000_000) }],
  });
  const res = await call('POST', '/v1/sessions', {
    raw,
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBeLessThan(500);
}, 60_000);

/**
 * lib/pipeline/save.ts exactNumbers (~line 831) runs the same string regex over tool arguments, inside
 * redactArguments' try: on a ~9M-character string it throws RangeError and the arguments fall back to
 * text redaction, which does not apply the JSON rule "every string under a secret-sounding key goes
 * whole". `{"password":["hunter2abc"], ...}` is stored in clear; before 7245e52 it was redacted.
 */
it('a secret under a secret key in large tool arguments is still redacted', async () => {
  const { call } = await makeApp();
  const args = JSON.stringify({
    password: ['hunter2abc'],
    path: 'big.txt',
    content: 'x'.repeat(10_000_000),
  });
  const created = await call('POST', '/v1/sessions', {
    body: {
      task: 'x',
      messages: [
        { role: 'user', content: 'write the file' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'write', arguments: args } },
          ],
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  const got = await call('GET', `/v1/sessions/${created.json.id}`);
  expect(got.text).not.toContain('hunter2abc');
}, 60_000);
