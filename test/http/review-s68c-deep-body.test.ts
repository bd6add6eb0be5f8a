// Review s68c: a deeply nested body was parsed whole before its depth was checked. JSON.parse builds every
// level first: 24 MiB of brackets took 27 s of CPU (health checks waited meanwhile) and ran a 512 MB heap
// out of memory before the 400. Now the text is read for its depth first, and such a body never parsed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { textNestedPast } from '../../lib/model/json-depth.js';
import { makeApp } from './helpers.js';

afterEach(() => vi.restoreAllMocks());

describe('textNestedPast', () => {
  it('counts levels outside strings, the outermost as 1', () => {
    expect(textNestedPast('[]', 1)).toBe(false);
    expect(textNestedPast('[[]]', 1)).toBe(true);
    expect(textNestedPast('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(textNestedPast('{"a":[{"b":1}]}', 2)).toBe(true);
    // Brackets inside strings, escaped quotes and backslashes before a closing quote.
    expect(textNestedPast('["[[[[", "\\"[[[", "\\\\", "{{{"]', 1)).toBe(false);
    expect(textNestedPast('["\\\\\\"[[[["]', 1)).toBe(false);
    expect(textNestedPast('["\\\\", [[]]]', 2)).toBe(true);
    // A string that never closes: no depth past it (the parse says what is wrong).
    expect(textNestedPast('["[[[[', 1)).toBe(false);
  });
});

it('a body nested past 128 levels is refused before it is parsed; one of 128 is read', async () => {
  const app = await makeApp();
  const deep = (n: number) => '['.repeat(n) + '"x"' + ']'.repeat(n);
  const body = (messages: string) =>
    `{"task":"deep","messages":[{"role":"user","content":"hi","extra":${messages}}]}`;
  const json = { 'content-type': 'application/json' };
  const parse = vi.spyOn(JSON, 'parse');
  const refused = await app.call('POST', '/v1/sessions', {
    raw: body(deep(200_000)),
    headers: json,
  });
  expect(refused.status).toBe(400);
  expect(refused.json.detail).toBe('JSON nested deeper than 128 levels');
  expect(parse.mock.calls.some(([text]) => String(text).includes('[['.repeat(100)))).toBe(false);
  parse.mockRestore();
  // The outermost object, messages, a message, extra: 3 levels; 125 more are taken, 126 are not.
  const held = await app.call('POST', '/v1/sessions', { raw: body(deep(125)), headers: json });
  expect(held.status).toBe(201);
  const past = await app.call('POST', '/v1/sessions', { raw: body(deep(126)), headers: json });
  expect(past.status).toBe(400);
  expect(past.json.detail).toBe('JSON nested deeper than 128 levels');
});
