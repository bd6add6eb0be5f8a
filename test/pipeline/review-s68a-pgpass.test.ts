// Review s68a, F3: `cat ~/.pgpass` of several entries kept every password after the first.
import { describe, expect, it } from 'vitest';
import { redact } from './review-s63f-stored.js';
import { storedSecrets } from './review-s68a-stored.js';

const PW = ['Hk7qPz2mWx9Lr4Tn', 'q9ZkT3vR8mW2xY7n', 'Tn4rL9xLm2Wz7pQ8'];
const output =
  `$ cat ~/.pgpass\n` +
  `db.staging.internal:5432:app:app:${PW[0]}\n` +
  `# the primary\n` +
  `db.prod.internal:5432:app:app:${PW[1]}\n` +
  `*:*:*:postgres:${PW[2]}\n`;

describe('.pgpass', () => {
  it('every entry password reaches no stored object', async () => {
    const body = {
      task: 'why does psql ask for a password',
      messages: [
        { role: 'user', content: 'psql keeps asking for a password on prod' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'bash', arguments: '{"command":"cat ~/.pgpass"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: output },
      ],
    };
    expect(await storedSecrets(body, PW)).toEqual([]);
  });

  it('each entry keeps its host, port, database and user', () => {
    expect(redact(output)).toBe(
      `$ cat ~/.pgpass\n` +
        `db.staging.internal:5432:app:app:[REDACTED]\n` +
        `# the primary\n` +
        `db.prod.internal:5432:app:app:[REDACTED]\n` +
        `*:*:*:postgres:[REDACTED]\n`,
    );
  });
});
