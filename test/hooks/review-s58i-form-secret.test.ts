import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s58i: a form-encoded webhook (Slack, Twilio, many CI senders) whose body has no `payload` field
// was stored as its raw URL-encoded text until 2026-12-06; the redaction rules saw `+` and `%0A` where the
// secret has spaces and line breaks, so a private key in one of its fields was stored whole. Its fields
// are read as JSON's are now. Review s58j: so is a form whose `payload` field is not JSON (or is empty
// beside other fields): until that day's fix it was still stored as its encoded text.
const SECRET = 'form-hook-secret-0123456789';
const HOOKS = { forms: { secret: SECRET, namespace: 'alice', session: 'form-log' } };
const BODY_LINE =
  'MIIEowIBAAKCAQEA7bq3Xs9kq1J8n2L8xYz0q9Lw5r3V8bQ2mN7pK4sT6uV1wX3yZ5aB8cD0eF2gH4iJ6kL8mN0oP2qR4sT6uV8wX0yZ2aB4cD6eF8gH0iJ2kL4mN6oP8qR0sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2oP4qR6sT8uV0wX2yZ4';
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${BODY_LINE}\n-----END RSA PRIVATE KEY-----`;

describe('form-encoded webhook without a payload field', () => {
  it('the same private key is redacted as JSON but stored whole when form-encoded', async () => {
    const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) } });
    const json = JSON.stringify({ type: 'deploy', text: PEM });
    expect(
      (await app.call('POST', '/v1/hooks/forms', signedDelivery(SECRET, json, 'j-1'))).status,
    ).toBe(202);
    await app.background.drain();
    let stored = JSON.stringify((await app.call('GET', '/v1/sessions/form-log')).json);
    expect(stored).not.toContain(BODY_LINE.slice(0, 40)); // JSON: redacted

    const form = new URLSearchParams({ type: 'deploy', text: PEM }).toString();
    const res = await app.call(
      'POST',
      '/v1/hooks/forms',
      signedDelivery(SECRET, form, 'f-1', 'application/x-www-form-urlencoded'),
    );
    expect(res.status).toBe(202);
    await app.background.drain();
    stored = JSON.stringify((await app.call('GET', '/v1/sessions/form-log')).json);

    // Bug: the key body is in the stored session (and in the object on disk).
    expect(stored).not.toContain(BODY_LINE.slice(0, 40));
  });
});

describe('form-encoded webhook whose payload field is not JSON', () => {
  for (const [name, fields] of [
    ['payload is the key itself', { payload: PEM }],
    ['payload empty, key in another field', { payload: '', text: PEM }],
    ['payload not JSON, key in another field', { payload: 'hello', text: PEM }],
  ] as const) {
    it(name, async () => {
      const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) } });
      const form = new URLSearchParams(fields as Record<string, string>).toString();
      const res = await app.call(
        'POST',
        '/v1/hooks/forms',
        signedDelivery(SECRET, form, 'f-1', 'application/x-www-form-urlencoded'),
      );
      expect(res.status).toBe(202);
      await app.background.drain();
      const stored = JSON.stringify((await app.call('GET', '/v1/sessions/form-log')).json);
      expect(stored).not.toContain(BODY_LINE.slice(0, 40));
    });
  }
});
