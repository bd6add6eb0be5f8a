import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { redactArguments } from '../../lib/pipeline/save.js';

// Review s61d, finding 1. Tool-call arguments are parsed with JSON.parse, which keeps only the last value
// of a repeated key: the walk found nothing to redact in what was left and returned the arguments as sent,
// with the earlier value's secret in them (`{"a":"ghp_…","a":"x"}` was stored and indexed so). Every value
// of a repeated key is walked now, under its key, and kept where it was; arguments with nothing to redact
// in any of them stay as sent (review s59c: the CLI shows `{"a":1,"a":2}` as stored).

const redactor = createRedactor(rules);
const GH = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const PASSWORD = 'hunter2hunter2';

/** `args` redacted by the production rules (and `known` values), with the secrets it counted. */
function redact(args: string, known: string[] = []): { out: string; count: number } {
  const r = known.length ? redactor.withKnownValues(known) : redactor;
  let count = 0;
  const text = (s: string, quiet?: boolean) => {
    const got = r.redact(s);
    if (!quiet) count += got.count;
    return got.text;
  };
  const out = redactArguments(args, text, () => void count++);
  return { out, count };
}

describe('tool-call arguments whose JSON repeats a key (review s61d)', () => {
  const R = PLACEHOLDER;
  const cases: [string, string, string, string][] = [
    ['a token in the first of two', `{"a":"${GH}","a":"x"}`, `{"a":"${R}","a":"x"}`, GH],
    [
      'a secret-sounding key, the first of two',
      `{"password":"${PASSWORD}","password":""}`,
      `{"password":"${R}","password":""}`,
      PASSWORD,
    ],
    ['nested', `{"cmd":{"env":"${GH}","env":"x"}}`, `{"cmd":{"env":"${R}","env":"x"}}`, GH],
    [
      'in an array',
      `{"a":[{"b":"${GH}", "b":"y"}], "c":"z"}`,
      `{"a":[{"b":"${R}","b":"y"}],"c":"z"}`,
      GH,
    ],
    ['a key written with an escape', `{"a":"${GH}","\\u0061":"x"}`, `{"a":"${R}","a":"x"}`, GH],
    [
      'three times',
      `{"q":"${GH}","q":"${GH}","q":"deploy"}`,
      `{"q":"${R}","q":"${R}","q":"deploy"}`,
      GH,
    ],
    [
      'a whole object under a secret-sounding key',
      `{"auth":{"u":"me","p":"${PASSWORD}"},"auth":"x"}`,
      `{"auth":{"u":"${R}","p":"${R}"},"auth":"x"}`,
      PASSWORD,
    ],
    ['a `pass` name', `{"pass":"${PASSWORD}","pass":"x"}`, `{"pass":"${R}","pass":"x"}`, PASSWORD],
    [
      "a name/value pair's earlier value",
      `{"name":"DB_PASSWORD","value":"${PASSWORD}","value":"x"}`,
      `{"name":"DB_PASSWORD","value":"${R}","value":"x"}`,
      PASSWORD,
    ],
    [
      "a name/value pair's earlier name",
      `{"name":"DB_PASSWORD","name":"x","value":"${PASSWORD}"}`,
      `{"name":"DB_PASSWORD","name":"x","value":"${R}"}`,
      PASSWORD,
    ],
  ];
  for (const [name, args, expected, secret] of cases) {
    it(`${name}: every value walked under its key, kept where it was, counted`, () => {
      const { out, count } = redact(args);
      expect(out).not.toContain(secret);
      expect(out).toBe(expected);
      expect(count).toBeGreaterThan(0);
    });
  }

  it('repeated integer-like keys keep their order, so the last value read is the last sent (review s61g)', () => {
    const { out } = redact(`{"1":"${GH}","2":"b","1":"keep-me","0":"z"}`);
    expect(out).toBe(`{"1":"${R}","2":"b","1":"keep-me","0":"z"}`);
    expect((JSON.parse(out) as Record<string, string>)['1']).toBe('keep-me');
  });

  it('a pair whose earlier name is Cookie: its value read as the header (review s61g)', () => {
    const cookie = 'session=a8F3kQ9zW2mX7pL4vB6n';
    const { out } = redact(`{"name":"Cookie","value":"${cookie}","name":"x"}`);
    expect(out).not.toContain('a8F3kQ9zW2mX7pL4vB6n');
  });

  it('a secret in the last value too: each counted', () => {
    const other = 'ghp_' + 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';
    const { out, count } = redact(`{"a":"${GH}","a":"${other}","n":1.50}`);
    expect(out).toBe(`{"a":"${R}","a":"${R}","n":1.50}`);
    expect(count).toBe(2);
  });

  it("a request's own secret (Satchel-Secrets) in the first of two", () => {
    const value = 'myownsecretvalue42';
    const { out, count } = redact(`{"x":"${value}","x":1}`, [value]);
    expect(out).toBe(`{"x":"${R}","x":1}`);
    expect(count).toBe(1);
  });

  it('`__proto__` repeated: both stay own keys', () => {
    const { out } = redact(`{"__proto__":"${GH}","__proto__":{"k":"v"}}`);
    expect(out).toBe(`{"__proto__":"${R}","__proto__":{"k":"v"}}`);
    expect(Object.hasOwn(JSON.parse(out), '__proto__')).toBe(true);
  });

  it('numbers stay as sent, past 2^53 and with their zeros', () => {
    const { out } = redact(`{"id":12345678901234567890,"a":"${GH}","a":1.50,"n":-0}`);
    expect(out).toBe(`{"id":12345678901234567890,"a":"${R}","a":1.50,"n":-0}`);
  });

  it('a repeated key 20 000 levels down: the scan takes it, the secret goes', () => {
    const depth = 20_000;
    const args = '{"a":'.repeat(depth) + `{"k":"${GH}","k":"x"}` + '}'.repeat(depth);
    const { out } = redact(args);
    expect(out).toBe('{"a":'.repeat(depth) + `{"k":"${R}","k":"x"}` + '}'.repeat(depth));
  });

  it('repeated keys nested in each other, 3 000 deep: linear, the secret counted once', () => {
    const depth = 3_000;
    const args = '{"a":'.repeat(depth) + `"${GH}"` + ',"a":1}'.repeat(depth);
    const started = performance.now();
    const { out, count } = redact(args);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(out).toBe('{"a":'.repeat(depth) + `"${R}"` + ',"a":1}'.repeat(depth));
    expect(count).toBe(1);
  });

  it('10 000 repeats of a name in one object: linear', () => {
    const args = `{${'"name":"x",'.repeat(10_000)}"value":"${GH}"}`;
    const started = performance.now();
    const { out } = redact(args);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(out).toBe(`{${'"name":"x",'.repeat(10_000)}"value":"${R}"}`);
  });

  it('a repeated key with nothing to redact in any value stays as sent (spacing too)', () => {
    for (const args of [
      '{"a":1,"a":2}',
      '{ "a": {"b": 1}, "a": [1, 2.50] }',
      `{"a":"${R}","a":"x"}`,
    ])
      expect(redact(args)).toEqual({ out: args, count: 0 });
  });

  it('arguments without a repeated key and nothing to redact stay as sent (spacing too)', () => {
    const args = '{ "query": "deploy",  "limit": 5 }';
    expect(redactArguments(args, (s) => redactor.redact(s).text)).toBe(args);
  });

  it('a key repeated in separate objects is no repeat', () => {
    const args = `[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}, {"s": "a\\"b", "a": "${GH}"}]`;
    expect(redactArguments(args, (s) => redactor.redact(s).text)).toBe(
      `[{"a":1},{"a":2},{"b":{"a":3},"a":4},{"s":"a\\"b","a":"${R}"}]`,
    );
  });
});
