import { describe, expect, it } from 'vitest';
import { parsePayload, summarize } from '../../lib/hooks/summary.js';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s59e. A GitHub-form webhook (`payload=<JSON>`) whose JSON nested deeper than 128 levels: the JSON
// walk threw, and the summary fell back to the payload's `raw`, which for a form was the whole URL-encoded
// body, where `+` and `%0A` hide a private key from the rules (the hole reviews s58i/s58j closed for other
// forms): the key was stored as sent. The walk now takes any depth, and a form's `raw` is its decoded
// payload, never the encoded body.

const redactor = createRedactor(rules);
const redact = (s: string) => redactor.redact(s).text;
const BODY_LINE =
  'MIIEowIBAAKCAQEA7bq3Xs9kq1J8n2L8xYz0q9Lw5r3V8bQ2mN7pK4sT6uV1wX3yZ5aB8cD0eF2gH4iJ6kL8mN0oP2qR4sT6uV8wX0' +
  'yZ2aB4cD6eF8gH0iJ2kL4mN6oP8qR0sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2oP4qR6sT8uV0wX2yZ4';
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${BODY_LINE}\n-----END RSA PRIVATE KEY-----`;
const PASSWORD = 'Tr0ub4dor&3xyz';
const enc = (s: string) => new TextEncoder().encode(s);
const FORM = 'application/x-www-form-urlencoded';
const asForm = (json: string) => new URLSearchParams({ payload: json }).toString();

/** The payload: a private key, a password list, and `{"a":{"a":…}}` nested `depth` objects deep. */
const payload = (depth: number) =>
  `{"type":"deploy","text":${JSON.stringify(PEM)},"password":["${PASSWORD}"],` +
  `"nested":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`;

describe('a GitHub form whose JSON nests past 128 levels (review s59e)', () => {
  it("a form's raw text is its decoded payload, never the encoded body", () => {
    const json = JSON.stringify({ type: 'deploy', text: PEM });
    const parsed = parsePayload(enc(asForm(json)), FORM);
    expect(parsed.raw).toBe(json); // before: `payload=%7B%22type%22…`
  });

  for (const depth of [140, 5000]) {
    it(`a private key and a password list next to a branch ${depth} deep are redacted`, () => {
      const json = payload(depth);
      const s = summarize({ hook: 'forms', ...parsePayload(enc(asForm(json)), FORM) }, redact);
      expect(s.title).toBe('Webhook forms: deploy');
      // Before: the encoded body (`payload=%7B…%0AMIIE…`), the key and the password in it.
      expect(s.text).not.toContain('payload=');
      expect(s.text).not.toContain(BODY_LINE.slice(0, 40));
      expect(s.text).not.toContain(PASSWORD);
      // Pretty when JSON.stringify takes the depth, else compact (before: `[object Object]` was the fallback).
      expect(s.text).toContain(
        depth < 1000 ? `"password": [\n    "${PLACEHOLDER}"\n  ]` : `"password":["${PLACEHOLDER}"]`,
      );
      expect(s.redactions).toBe(2);
    });
  }

  for (const [name, contentType, wrap] of [
    ['JSON body', 'application/json', (json: string) => json],
    ['GitHub form (payload=<JSON>)', FORM, asForm],
  ] as const) {
    it(`${name} delivered over HTTP: neither the key nor the password is stored`, async () => {
      const SECRET = 'form-hook-secret-0123456789';
      const hooks = { forms: { secret: SECRET, namespace: 'alice', session: 'form-log' } };
      const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(hooks) } });
      const json = payload(140);
      const delivery = signedDelivery(SECRET, wrap(json), 'd-1', contentType);
      expect((await app.call('POST', '/v1/hooks/forms', delivery)).status).toBe(202);
      await settleAll(app);
      const stored = (await app.call('GET', '/v1/sessions/form-log')).json;
      expect(stored.messages.length).toBe(1);
      expect(stored.messages[0].content).toContain('"a": {');
      expect(holders(app.dir, [BODY_LINE.slice(0, 40), PASSWORD])).toEqual([]);
    });
  }
});
