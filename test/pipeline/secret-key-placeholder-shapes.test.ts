// Review s52f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// docs/api.md (Additions, metadata): "A value under a secret-sounding key (`db_password`, `deploy_token`,
// `api_key` ...) is stored as `[REDACTED]` whatever it looks like"; docs/design.md step 2: "every string and
// number under a secret-sounding key ... goes whole". redactJson (lib/pipeline/save.ts) skips values that
// `isPlaceholder` (lib/pipeline/redact.ts) calls references or placeholder shapes: any value starting
// with `$` + letter, containing `...`, `xxxxx`, `example`, `[REDACTED]`, `self.` ... is stored verbatim.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { holders } from '../support/holders.js';

// Real passwords as a generator or a person makes them (none is a reference or a placeholder).
const PASSWORDS = ['$uperS3cretPa55', 'W41t...F0r1tNow', 'xXxXxDragon1987', 'MyExample#Pw2024'];

it('metadata under a secret-sounding key is stored as [REDACTED] whatever it looks like', async () => {
  const app = await makeApp();
  const metadata = Object.fromEntries(PASSWORDS.map((p, i) => [`db${i}_password`, p]));
  const r = await app.call('POST', '/v1/sessions', {
    body: { id: 'm', task: 't', metadata, messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(r.status).toBe(201);
  await app.sessions.settled();
  expect(r.json.metadata).toEqual(
    Object.fromEntries(PASSWORDS.map((_, i) => [`db${i}_password`, '[REDACTED]'])),
  );
  expect(holders(app.dir, PASSWORDS)).toEqual([]);
});

it('tool-call arguments: a password under `password` goes whole', async () => {
  const app = await makeApp();
  const args = JSON.stringify({ host: 'db', user: 'admin', password: PASSWORDS[0] });
  const r = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'a',
      task: 't',
      messages: [
        { role: 'user', content: 'connect' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'db_connect', arguments: args } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'connected' },
      ],
    },
  });
  expect(r.status).toBe(201);
  await app.sessions.settled();
  expect(JSON.parse(r.json.messages[1].tool_calls[0].function.arguments).password).toBe(
    '[REDACTED]',
  );
  expect(holders(app.dir, [PASSWORDS[0]!])).toEqual([]);
});
