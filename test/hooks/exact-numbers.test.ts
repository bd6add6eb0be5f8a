// Until 2026-12-06 a webhook payload was shown re-serialised from JSON.parse: a 64-bit id in it came back
// with other digits (`12345678901234567890` as `12345678901234567000`), `1.50` as `1.5`, in the stored
// message (stop 51's left item). Now numbers a parse would change stay as sent, in the JSON shown and in
// a summary's fields, and the message is the same bytes on every attempt.
import { expect, it } from 'vitest';
import { parsePayload, summarize } from '../../lib/hooks/summary.js';
import { utf8 } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';

const SECRET = 'ci-hook-secret-0123456789';

it('a payload keeps its numbers as sent in the stored message', async () => {
  const app = await makeApp({
    env: {
      SATCHEL_HOOKS: JSON.stringify({
        ci: { secret: SECRET, namespace: 'alice', session: 'ci-log' },
      }),
    },
    answersAfterBackground: true,
  });
  const body =
    '{"type":"build","build_id":12345678901234567890,"cost":1.50,"run":{"id":-9223372036854775808},' +
    '"password":98765432109876543210}';
  const res = await app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, body, 'exact-1'));
  expect(res.status).toBe(202);
  const stored = (await app.call('GET', '/v1/sessions/ci-log')).json;
  const text = JSON.stringify(stored.messages);
  expect(text).toContain('12345678901234567890');
  expect(text).toContain('1.50');
  expect(text).toContain('-9223372036854775808');
  expect(text).not.toContain('12345678901234567000');
  expect(text).not.toContain('98765432109876543210'); // under a secret-sounding key: redacted whole
  expect(text).not.toContain('\\u0000');
});

it('the summary is the same text whichever parse made it, and a field shown in a line keeps its digits', () => {
  const body = utf8('{"event":12345678901234567891,"n":[1.50,2]}');
  const a = parsePayload(body, 'application/json');
  const b = parsePayload(body, 'application/json');
  const one = summarize({ hook: 'ci', ...a }, (s) => s);
  const two = summarize({ hook: 'ci', ...b }, (s) => s);
  expect(one.text).toBe(two.text);
  expect(one.title).toBe('Webhook ci: 12345678901234567891');
  expect(one.text).toContain('1.50');
});
