// Review s52f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// redactMessage (lib/pipeline/save.ts) stores every field of a message under `text(key)` with a plain
// assignment: two field names that redact to the same text (two secrets used as names) keep only the
// last value, silently. docs/api.md says unknown message fields are kept as they are, and for the same
// case in metadata "the later ones are numbered (`[REDACTED] 2`), so no value is lost" (putOwn); the
// standard: nothing acknowledged is dropped without the receipt saying so.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const GH1 = 'ghp_' + rep('Zq8xW3vN5', 36);
const GH2 = 'ghp_' + rep('Lm4kP7rT2', 36);

it('two message fields whose names redact alike both stay', async () => {
  const app = await makeApp();
  const r = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'f',
      task: 't',
      messages: [{ role: 'user', content: 'hi', [GH1]: 'first value', [GH2]: 'second value' }],
    },
  });
  expect(r.status).toBe(201);
  const got = await app.call('GET', '/v1/sessions/f');
  const values = Object.values(got.json.messages[0]);
  expect(JSON.stringify(got.json)).not.toContain('ghp_');
  expect(values).toContain('first value');
  expect(values).toContain('second value');
});
