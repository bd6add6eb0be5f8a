// Review s57d, finding 2. The text rule `generic-pass` takes `pass`, `DB_PASS`, `smtp_pass`, `userPass`
// for secrets' names: `{"user":"bob","smtp_pass":"…"}` in a tool result is redacted. The same object as
// tool-call arguments or as metadata is walked string by string (save.ts redactJson), where SENSITIVE_KEY
// named neither `pass`, `MYSQL_PWD` nor Rails' `SECRET_KEY_BASE`: the values were stored as sent. Now
// such a string goes whole where the text rules find a secret in `name="value"`, and `secret_key_base`
// is a secret's name.
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { redactArguments } from '../../lib/pipeline/save.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const PASSWORD = 'S3cr3t!Tulip-42';
const KEY_BASE = 'a3f9'.repeat(32); // 128 hex, as `rails secret` prints
const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (args: object) =>
  JSON.parse(redactArguments(JSON.stringify(args), (s) => pipeline.redactText(s)));

describe('a password under a `pass` or `pwd` name, and Rails secret_key_base', () => {
  it('goes whole in JSON arguments; a pass count, `bypass` and `pwd` stay', () => {
    const args = {
      pass: PASSWORD,
      DB_PASS: PASSWORD,
      smtp_pass: PASSWORD,
      userPass: PASSWORD,
      MYSQL_PWD: PASSWORD,
      env: { SECRET_KEY_BASE: KEY_BASE },
      // Ordinary data.
      first_pass: 2,
      last_pass: 'ok',
      bypass: 'cache-layer-7',
      compass: 'north-west-2',
      pwd: '/srv/app',
      pass_ref: '${SMTP_PASS}',
      db_pass: '${SMTP_PASS}',
    };
    expect(redact(args)).toEqual({
      ...args,
      pass: PLACEHOLDER,
      DB_PASS: PLACEHOLDER,
      smtp_pass: PLACEHOLDER,
      userPass: PLACEHOLDER,
      MYSQL_PWD: PLACEHOLDER,
      env: { SECRET_KEY_BASE: PLACEHOLDER },
    });
  });

  it('is stored nowhere: tool-call arguments and metadata as the same pair in a tool result', async () => {
    const app = await makeApp();
    const args = { host: 'smtp.example.com', user: 'bob', smtp_pass: PASSWORD };
    const env = { RAILS_ENV: 'production', SECRET_KEY_BASE: KEY_BASE, DB_PASS: PASSWORD };
    const call = (id: string, name: string, a: object) => ({
      id,
      type: 'function',
      function: { name, arguments: JSON.stringify(a) },
    });
    const created = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'send the report',
        metadata: { smtp_user: 'bob', smtp_pass: PASSWORD },
        messages: [
          { role: 'user', content: 'mail the report to ops, then deploy' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              call('c1', 'send_mail', args),
              call('c2', 'docker_run', { image: 'app:1.2', env }),
            ],
          },
          // The same pairs as text: the rules' own verdict.
          { role: 'tool', tool_call_id: 'c1', content: `sent with ${JSON.stringify(args)}` },
          {
            role: 'tool',
            tool_call_id: 'c2',
            content: `SECRET_KEY_BASE=${KEY_BASE}\nDB_PASS=${PASSWORD}`,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    await settleAll(app);
    const got = await app.call('GET', `/v1/sessions/${created.json.id}`);
    expect(got.json.metadata).toEqual({ smtp_user: 'bob', smtp_pass: PLACEHOLDER });
    expect(JSON.parse(got.json.messages[1].tool_calls[0].function.arguments)).toEqual({
      ...args,
      smtp_pass: PLACEHOLDER,
    });
    expect(holders(app.dir, [PASSWORD, KEY_BASE])).toEqual([]);
  });
});
