// Review s52h (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// Review s52h. withName (lib/pipeline/save.ts, c26bda7) redacts every short JSON value again as
// `name: value`, so the `http-secret-header` rule (lib/pipeline/rules.ts: any name ending in `-key`,
// `-token`, `-secret` followed by 16+ characters of [A-Za-z0-9._~+/=:-]) now fires on ordinary kebab-case
// keys whose values are paths, message ids or flag names: an S3 object key, an i18n message key, a
// feature-flag key are destroyed in tool arguments and metadata (and each counted twice, see
// with-name-double-count.test.ts). docs/design.md: keys outside the secret-sounding list "are an agent's
// ordinary data (`issue_key`, `source_key`, `routeKey` ...) and stay". Before c26bda7 all of these stayed.
import { expect, it } from 'vitest';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import type { Message } from '../../lib/model/session.js';
import { saveOne } from '../../test/pipeline/sessions.js';
import { makeApp } from '../http/helpers.js';

const redactor = createRedactor(rules);
const ORDINARY = {
  'object-key': 'uploads/2024/06/report-final.pdf',
  's3-key': 'datasets/2024/train-00001-of-00010.parquet',
  'routing-key': 'orders.created.eu-west-1.v2',
  'message-key': 'errors.validation.email-invalid',
  'feature-key': 'enable.dark-mode.beta',
  'file-key': 'docs/guides/getting-started.md',
};

it.each(Object.entries(ORDINARY))('tool-call arguments keep {"%s": "%s"}', (name, value) => {
  const args = JSON.stringify({ bucket: 'b', [name]: value });
  const out = saveOne(redactor, {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 's3_get', arguments: args } }],
  } as Message);
  expect(out.session.messages[0]!.tool_calls![0]!.function.arguments).toBe(args);
  expect(out.redactions).toBe(0);
});

it('metadata keeps ordinary kebab-case values (and its filter finds them)', async () => {
  const app = await makeApp();
  const r = await app.call('POST', '/v1/sessions', {
    body: { id: 'm', task: 't', metadata: ORDINARY, messages: [{ role: 'user', content: 'x' }] },
  });
  expect(r.status).toBe(201);
  const got = await app.call('GET', '/v1/sessions/m');
  expect(got.json.metadata).toEqual(ORDINARY);
});
