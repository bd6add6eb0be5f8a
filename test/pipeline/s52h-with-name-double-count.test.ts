// Review s52h (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// Review s52h. withName (lib/pipeline/save.ts) redacts a short JSON value again as `name: value` with
// `text(head + value, true)` ("quiet": counted by its own hit()), then calls hit(). But redactArguments
// wraps `text` in `(s) => { const r = text(s); ... }`, which drops the `quiet` flag: inside tool-call
// arguments the secret is counted by `text` AND by withName's hit(). One redaction, `redactions: 2` in the
// receipt (contract: "`redactions` ... count what this write did"). The same JSON as metadata counts 1.
import { expect, it } from 'vitest';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';
import type { Message } from '../../lib/model/session.js';
import { bareSession, saveOne } from '../../test/pipeline/sessions.js';
import { createSavePipeline } from '../../lib/pipeline/save.js';
import { makeApp } from '../http/helpers.js';

const redactor = createRedactor(rules);
const headers = { Cookie: 'sessionid=Kp9dL2mQ7vX4zR8tB3nW6yHc' };

const call = (args: unknown): Message =>
  ({
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'http', arguments: JSON.stringify(args) } },
    ],
  }) as Message;

it('one Cookie header in tool-call arguments counts one redaction (pipeline)', () => {
  const out = saveOne(redactor, call({ url: 'https://api.example.com/', headers }));
  expect(out.session.messages[0]!.tool_calls![0]!.function.arguments).toContain('[REDACTED]');
  expect(out.redactions).toBe(1); // is 2
});

it('the same header as metadata counts 1 (control), and the append receipt for the tool call 1 too', async () => {
  const pipeline = createSavePipeline({ redactor, rulesVersion: 't', maxSessionBytes: 1 << 20 });
  const meta = pipeline.apply({
    next: bareSession([{ role: 'user', content: 'x' } as Message], { metadata: headers }),
    previous: null,
  });
  expect(meta.session.metadata).toEqual({ Cookie: 'sessionid=[REDACTED]' });
  expect(meta.redactions).toBe(1);

  const app = await makeApp();
  const c = await app.call('POST', '/v1/sessions', {
    body: { id: 's', task: 't', messages: [{ role: 'user', content: 'x' }] },
  });
  expect(c.status).toBe(201);
  const r = await app.call('POST', '/v1/sessions/s/messages', {
    body: { messages: [call({ url: 'https://api.example.com/', headers })] },
  });
  expect(r.status).toBe(200);
  expect(r.json.redactions).toBe(1); // is 2
});
