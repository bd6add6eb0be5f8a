// Review s65f, F4. `go test -v` and automake's `make check` print a passing test as `--- PASS: TestX (0.00s)`
// and `PASS: tests/test_parser`: `generic-pass` took the bare upper-case `PASS:` for a password's name, and
// every passing test's name was stored as `[REDACTED]` (and counted). A name ending in PASS keeps its rule.
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { PW, redact } from './review-s63f-stored.js';

const GO_TEST =
  '=== RUN   TestParseConfig\n--- PASS: TestParseConfig (0.00s)\n=== RUN   TestLoad\n' +
  '    --- PASS: TestLoad/empty_input (0.01s)\nPASS\nok  \tgithub.com/acme/app/config\t0.012s';
const MAKE_CHECK =
  'PASS: tests/test_parser\nPASS: tests/test_lexer (3.2s)\nPASS: test-suite.log\n' +
  '============================================================================\n' +
  '# TOTAL: 3\n# PASS:  3\n';

describe('test verdicts are not passwords', () => {
  it('go test -v and make check output is stored as sent, with no redaction', async () => {
    const app = await makeApp();
    const made = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'run the tests',
        messages: [
          { role: 'user', content: 'run the tests' },
          { role: 'tool', tool_call_id: 'c1', content: GO_TEST },
          { role: 'tool', tool_call_id: 'c2', content: MAKE_CHECK },
        ],
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.headers.get('satchel-redactions')).toBe('0');
    const got = await app.call('GET', `/v1/sessions/${made.json.id}`);
    expect(got.json.messages.slice(1).map((m: { content: string }) => m.content)).toEqual([
      GO_TEST,
      MAKE_CHECK,
    ]);
  });

  it('names ending in PASS, and pass: in any other case, are still redacted', () => {
    for (const text of [
      `SMTP_PASS: ${PW}`,
      `DB_PASS=${PW}`,
      `PASS=${PW}`,
      `pass: ${PW}`,
      `Pass: ${PW}`,
      `{"PASS": "${PW}"}`,
      `  ansible_become_pass: ${PW}`,
    ])
      expect(redact(text)).not.toContain(PW);
  });
});
