// Before 2026-12-05 a number past a double's range (1e400) in a body was parsed as Infinity and stored as
// null where Satchel keeps JSON as sent (a content part's field, an unknown message field): 201, and the
// value came back changed. Now it is 400 naming the field, as a typed field (`limit`, `keep`) refuses it.
// So is an integer past 2^53 (stored rounded: 12345678901234567890 came back 12345678901234567000), and
// tool-call arguments re-serialised after a redaction keep every number as sent (review s51g).
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

describe('numbers outside the double range', () => {
  for (const [name, raw, path] of [
    [
      'a content part field',
      '{"task":"t","messages":[{"role":"user","content":[{"type":"text","text":"hi","weight":1e400}]}]}',
      'messages[0].content[0].weight',
    ],
    [
      'an unknown message field',
      '{"task":"t","messages":[{"role":"user","content":"hi","score":-1E+400}]}',
      'messages[0].score',
    ],
    ['309 digits', `{"task":"t","metadata_x":${'9'.repeat(309)}}`, 'metadata_x'],
  ] as const) {
    it(`${name}: 400 naming it, and nothing stored`, async () => {
      const app = await makeApp();
      const res = await app.call('POST', '/v1/sessions', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.json.errors[0]).toEqual({ path, message: 'a number past the range of a double' });
      expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
    });
  }

  it('large numbers within range are kept as sent', async () => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/sessions', {
      raw: '{"task":"t","messages":[{"role":"user","content":"hi","score":1e300,"n":9007199254740991}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    const got = await app.call('GET', `/v1/sessions/${res.json.id}`);
    expect(got.json.messages[0].score).toBe(1e300);
  });

  it('an integer past 2^53: 400 (it would be stored rounded); as a string it is kept', async () => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/sessions', {
      raw: '{"task":"t","messages":[{"role":"user","content":"hi","meta":{"id":12345678901234567890}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain('12345678901234567890');
    expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
    const ok = await app.call('POST', '/v1/sessions', {
      raw: '{"task":"t","messages":[{"role":"user","content":"hi","meta":{"id":"12345678901234567890","n":0.12345678901234567890}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(201);
  });

  it('tool-call arguments redacted and re-serialised keep their numbers as sent', async () => {
    const app = await makeApp();
    const key = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';
    const args = `{"token":"${key}","channel_id":12345678901234567890,"ratio":1.50,"big":1e400}`;
    const call = { id: 'c1', type: 'function', function: { name: 'post', arguments: args } };
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'assistant', content: '', tool_calls: [call] }] },
    });
    expect(res.status).toBe(201);
    const stored = res.json.messages[0].tool_calls[0].function.arguments as string;
    expect(stored).not.toContain(key);
    expect(stored).toBe(
      '{"token":"[REDACTED]","channel_id":12345678901234567890,"ratio":1.50,"big":1e400}',
    );
  });
});
