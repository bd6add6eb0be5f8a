// Review s59e. docs/api.md ("Numbers") promises a 400 for a number JavaScript's JSON would store changed:
// an integer past 2^53 and a number past a double's range. Before 2026-12-06 lib/http/body.ts checked only
// integers written as plain digits (inexactInteger: /^-?\d{16,}$/), so the same integer written with a
// fraction (`12345678901234567890.0`) or an exponent (`1.2345678901234567890e19`) was stored as
// 12345678901234567000 (201), and a non-zero number that a parse makes 0 (`1e-400`) was stored as 0. The
// 400's detail quoted the integer whatever its key (a numeric PIN under `api_token` was sent back in the
// answer, and in every log that keeps it), and its `errors[].path` was '' (the body). `Content-Encoding:
// Identity` was 415, though content codings are case-insensitive (RFC 9110 8.4.1). An odek file (the
// CLI's import) is checked by the same function, and was imported changed alike.
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { parseOdekFile } from '../../lib/odek/format.js';
import { newFormat } from '../support/odek-files.js';

/** A create body whose first message has a field of its own (kept as sent) holding `literal`. */
const bodyWith = (id: string, literal: string) =>
  `{"task":"t","id":"${id}","messages":[{"role":"user","content":"x","order_id":${literal}}]}`;

const post = (app: Awaited<ReturnType<typeof makeApp>>, raw: string, headers = {}) =>
  app.call('POST', '/v1/sessions', {
    raw,
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('numbers a parse would change, in any form (review s59e)', async () => {
  const app = await makeApp();
  // [what, as sent, as JavaScript would store it]
  const refused: [name: string, literal: string, stored: string][] = [
    ['an integer past 2^53 with ".0"', '12345678901234567890.0', '12345678901234567000'],
    ['an integer past 2^53 in exponent form', '1.2345678901234567890e19', '12345678901234567000'],
    [
      'one past 2^53, its digits around the point',
      '-1234567.8901234567890e12',
      '-1234567890123456800',
    ],
    ['a non-zero number that a double holds only as 0', '1e-400', '0'],
    ['a non-zero number with 400 zeros after its point', `0.${'0'.repeat(400)}1`, '0'],
  ];
  let n = 0;
  for (const [name, literal, stored] of refused) {
    it(`${name}: 400 naming its path, nothing stored`, async () => {
      const id = `num-${n++}`;
      const res = await post(app, bodyWith(id, literal));
      expect(res.status).toBe(400);
      expect(res.json.errors).toEqual([
        {
          path: 'messages[0].order_id',
          message:
            stored === '0'
              ? 'a non-zero number below the range of a double would be stored as 0'
              : `the number ${literal} is past 2^53 and would be stored as ${stored}: send it as a string`,
        },
      ]);
      expect(res.json.detail).toBe(
        `the body is not valid: messages[0].order_id: ${res.json.errors[0].message}`,
      );
      expect((await app.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
    });
  }

  it('floats that lose only their last digits, and integers a double keeps, are taken as before', async () => {
    const kept: [literal: string, stored: string][] = [
      ['0.1', '0.1'],
      ['3.141592653589793238', '3.141592653589793'],
      ['6.02214076e23', '6.02214076e+23'],
      ['1e300', '1e+300'],
      ['1e-300', '1e-300'],
      ['5e-324', '5e-324'],
      ['0e-400', '0'],
      ['12345678901234567000.0', '12345678901234567000'],
      ['9007199254740992', '9007199254740992'],
      // A double as C's %.17g prints it: 17 digits, not JavaScript's shortest form, the same double.
      ['9.9999999999999992e+22', '1e+23'],
      ['0.30000000000000004', '0.30000000000000004'],
    ];
    for (const [literal, stored] of kept) {
      const id = `kept-${n++}`;
      expect((await post(app, bodyWith(id, literal))).status, literal).toBe(201);
      const got = await app.call('GET', `/v1/sessions/${id}`);
      expect(/"order_id":([^,}]+)/.exec(got.text)?.[1], literal).toBe(stored);
    }
  });
});

describe('the 400 of an integer past 2^53 under a secret-sounding key (review s59e)', async () => {
  const app = await makeApp();
  const pin = '12345678901234567890';
  for (const [name, field, path] of [
    ['its own key', `"api_token":${pin}`, 'messages[0].api_token'],
    ['a key above it', `"credentials":{"pin":[${pin}]}`, 'messages[0].credentials.pin[0]'],
    [
      'a name/value pair',
      `"env":[{"name":"DB_PASSWORD","value":${pin}}]`,
      'messages[0].env[0].value',
    ],
  ]) {
    it(`names the path, not the number, when stored it would be redacted (${name})`, async () => {
      const res = await post(
        app,
        `{"task":"t","messages":[{"role":"user","content":"x",${field}}]}`,
      );
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(pin.slice(0, 16));
      const message = 'a number past 2^53 would be stored changed: send it as a string';
      expect(res.json.errors).toEqual([{ path, message }]);
      expect(res.json.detail).toBe(`the body is not valid: ${path}: ${message}`);
    });
  }

  it('quotes the number under a key that is not secret-sounding', async () => {
    const res = await post(
      app,
      `{"task":"t","messages":[{"role":"user","content":"x","ids":[1,${pin}]}]}`,
    );
    expect(res.status).toBe(400);
    expect(res.json.errors[0].path).toBe('messages[0].ids[1]');
    expect(res.json.detail).toContain(pin);
  });
});

describe('Content-Encoding is case-insensitive (review s59e)', async () => {
  const app = await makeApp();
  for (const coding of ['Identity', 'IDENTITY', 'identity, Identity', ' identity ']) {
    it(`"${coding}" is no coding: the body is read`, async () => {
      const res = await post(app, '{"task":"t"}', { 'content-encoding': coding });
      expect(res.status).toBe(201);
    });
  }
  for (const coding of ['Gzip', 'identity, gzip', 'BR']) {
    it(`"${coding}" is 415, asking for the body uncompressed`, async () => {
      const res = await post(app, '{"task":"t"}', { 'content-encoding': coding });
      expect(res.status).toBe(415);
      expect(res.json.detail).toBe('send the body as application/json, uncompressed');
    });
  }
});

describe('an odek file with a number a parse would change (review s59e)', () => {
  const withValue = (value: string) => {
    const file = newFormat();
    file.messages[1] = { ...file.messages[1]!, run_id: 'RUN' };
    return JSON.stringify(file).replace('"RUN"', value);
  };

  it('is refused, naming where, in every form; floats are imported as before', () => {
    expect(parseOdekFile(withValue('1.2345678901234567890e19'))).toEqual({
      ok: false,
      // The path, never the number: it may be a secret's (review s59h).
      reason:
        'a number JavaScript cannot keep at messages[1].run_id (past 2^53; write it as a string)',
    });
    const pin = newFormat();
    pin.messages[1] = { ...pin.messages[1]!, password: 'PIN' };
    const refused = parseOdekFile(JSON.stringify(pin).replace('"PIN"', '98765432109876543210'));
    expect(refused.ok).toBe(false);
    expect(JSON.stringify(refused)).not.toContain('98765');
    expect(parseOdekFile(withValue('1e-400'))).toEqual({
      ok: false,
      reason: 'a non-zero number JavaScript reads as 0 at messages[1].run_id',
    });
    const fine = parseOdekFile(withValue('3.141592653589793238'));
    expect(fine.ok && fine.session.messages[1]).toMatchObject({ run_id: 3.141592653589793 });
  });
});
