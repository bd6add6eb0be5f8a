import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { redactArguments } from '../../lib/pipeline/save.js';
import type { Message } from '../../lib/model/session.js';
import { saveOne } from './sessions.js';

// One rule, so that these tests are about the key names, not about the rules.
const redactor = createRedactor([
  { id: 'gh', keywords: ['ghp_'], pattern: /ghp_[A-Za-z0-9]{36}/y, boundary: true },
]);
const GH = 'ghp_' + 'A1b2C3d4E5'.repeat(3) + 'f6G7h8';
const SECRET = 'Zx9kQ2mLp4Rt7Vb1Nc8Hd3Jf6';
const redact = (args: unknown) =>
  JSON.parse(redactArguments(JSON.stringify(args), (s) => redactor.redact(s).text));

const apply = (message: Message) => saveOne(redactor, message);

describe('JSON arguments under secret-sounding keys (review)', () => {
  it('names of secret keys go whole (secret_key, signingKey, x-api-key); other keys, lookups and paths stay', () => {
    const args = {
      secret_key: SECRET,
      env: { SECRET_KEY: SECRET, OPENAI_API_KEY: SECRET, HOME: '/home/me' },
      signingKey: SECRET,
      'x-api-key': SECRET,
      // Names of ordinary data: Jira and S3 keys, DynamoDB paging, a shell's working directory, a pass count.
      issue_key: 'PROJ-123',
      spaceKey: 'ENG',
      source_key: 'logs/a.gz',
      exclusive_start_key: { pk: 'u#1' },
      routeKey: 'GET /items',
      pwd: '/srv/app',
      first_pass: 2,
      key: 'user:42',
      keys: ['a', 'b'],
      public_key: 'ssh-ed25519 AAAAC3Nza',
      sort_key: 'name',
      cache_key: 'v1',
      bypass: 'cache',
      hotkey: 'ctrl+k',
    };
    expect(redact(args)).toEqual({
      ...args,
      secret_key: PLACEHOLDER,
      env: { SECRET_KEY: PLACEHOLDER, OPENAI_API_KEY: PLACEHOLDER, HOME: '/home/me' },
      signingKey: PLACEHOLDER,
      'x-api-key': PLACEHOLDER,
    });
  });

  it('numbers under a secret-sounding key go too; other numbers and booleans stay', () => {
    expect(
      redact({ user: 'admin', password: 73910264, pin: [1234], retries: 3, auth: true }),
    ).toEqual({ user: 'admin', password: PLACEHOLDER, pin: [1234], retries: 3, auth: true });
    expect(redact({ credentials: { user: 'admin', pin: 1234 } })).toEqual({
      credentials: { user: PLACEHOLDER, pin: PLACEHOLDER },
    });
  });

  it('a string under a secret-sounding key goes whole when a rule matched part of it, counted once', () => {
    const call: Message = {
      role: 'assistant',
      content: '',
      tool_calls: [
        {
          id: 'c',
          type: 'function',
          function: { name: 'f', arguments: JSON.stringify({ password: `Hunter2Blue ${GH}` }) },
        },
      ],
    };
    const out = apply(call);
    expect(out.session.messages[0]!.tool_calls![0]!.function.arguments).toBe(
      JSON.stringify({ password: PLACEHOLDER }),
    );
    expect(out.redactions).toBe(1);
    const field = apply({ role: 'user', content: 'x', password: `Hunter2Blue ${GH}` } as Message);
    expect(field.session.messages[0]).toMatchObject({ password: PLACEHOLDER });
    expect(field.redactions).toBe(1);
  });
});
