// Metadata is redacted like every other JSON the pipeline stores: a value under a secret-sounding name
// (`db_password`, `deploy_token`) goes whole, as in tool-call arguments and unknown message fields. Until
// 2026-12-04 metadata passed only the text rules, and such a pair reached the session object, the manifest
// and every list answer as sent.
import { expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';

const PASSWORD = 'correct-horse-battery-staple';
const TOKEN = 'a1b2c3d4e5f6g7h8';

it('a value under a secret-sounding metadata key is redacted like one in tool-call arguments', async () => {
  const app = await makeApp();
  // The same pairs as tool-call arguments are redacted whole: the pipeline knows these names.
  const args = JSON.stringify({ db_password: PASSWORD, deploy_token: TOKEN });
  const created = await app.call('POST', '/v1/sessions', {
    body: {
      task: 'deploy',
      metadata: { db_password: PASSWORD, deploy_token: TOKEN, team: 'infra' },
      messages: [
        { role: 'user', content: 'deploy' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'deploy', arguments: args } },
          ],
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  const storedArgs = JSON.parse(created.json.messages[1].tool_calls[0].function.arguments);
  expect(storedArgs).toEqual({ db_password: '[REDACTED]', deploy_token: '[REDACTED]' });

  // Metadata: the same names, the same values.
  expect(created.json.metadata).toEqual({
    db_password: '[REDACTED]',
    deploy_token: '[REDACTED]',
    team: 'infra',
  });
  const list = await app.call('GET', '/v1/sessions');
  expect(list.text).not.toContain(PASSWORD);
  await app.background.drain();
  for (const key of await listAll(app.objects, '')) {
    const body = text((await app.objects.get(key))!.body);
    expect(body, key).not.toContain(PASSWORD);
    expect(body, key).not.toContain(TOKEN);
  }
});
