// The first version (2026-12-05) of resuming a rule after its own match also resumed after a match whose
// value the checks rejected: a typed-password value runs over `,` and `=`, so in Helm's
// `--set a.password=changeme,b.password=<secret>` the first match took `changeme,b.password=…`, was rejected
// for `changeme`, and the second `password=` inside it was never run: the secret was stored in clear. Now a
// rejected value is resumed after only up to a keyword of the rule after a separator (or a capital) in it.
import { expect, it } from 'vitest';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import { makeApp } from '../http/helpers.js';

const SECRET = 'Xk9mQ2vLp7Rt4Wz8';
const redact = (t: string) => createRedactor(rules).redact(t).text;

it.each([
  `helm upgrade app ./chart --set postgresql.password=changeme,redis.password=${SECRET}`,
  `--set db.password=example123,cache.password=${SECRET}`,
  `environment: [POSTGRES_PASSWORD=changeme,REDIS_PASSWORD=${SECRET}]`,
  `password: "for example PGPASSWORD=${SECRET}"`,
])('a secret after a rejected value of the same rule is redacted: %s', (text) => {
  expect(redact(text)).not.toContain(SECRET);
});

it('stored through the API, the helm secret is gone', async () => {
  const { call } = await makeApp();
  const res = await call('POST', '/v1/sessions', {
    body: {
      task: 'deploy',
      messages: [
        { role: 'user', content: 'deploy it' },
        {
          role: 'assistant',
          content: `ran: helm upgrade app ./chart --set postgresql.password=changeme,redis.password=${SECRET}`,
        },
      ],
    },
  });
  expect(res.status).toBe(201);
  const got = await call('GET', `/v1/sessions/${res.json.id}`);
  expect(got.text).not.toContain(SECRET);
});
