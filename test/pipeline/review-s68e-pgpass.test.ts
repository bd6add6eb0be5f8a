// Review s68e, F2: "every .pgpass entry" stopped at a CRLF line end (Windows `pgpass.conf`) or a blank line
// between entries: the passwords after it were stored in clear.
import { describe, expect, it } from 'vitest';
import { redact } from './review-s63f-stored.js';
import { storedSecrets } from './review-s68a-stored.js';

const PW = ['Pw1aQz8vR3kP9mLw', 'Pw2bTn4rL9xLm2Wz', 'Pw3cXk7pQ2vN8rYt'];

/** A session whose tool printed `output` (a pgpass file). */
const session = (command: string, output: string) => ({
  task: 'why does psql ask for a password',
  messages: [
    { role: 'user', content: 'psql keeps asking for a password' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'bash', arguments: JSON.stringify({ command }) },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: output },
  ],
});

describe('.pgpass, CRLF and blank lines', () => {
  it('every password of a CRLF pgpass.conf reaches no stored object', async () => {
    const type = 'type %APPDATA%\\postgresql\\pgpass.conf';
    const output =
      `C:\\> ${type}\r\n` +
      `localhost:5432:app:alice:${PW[0]}\r\n` +
      `# staging\r\n` +
      `db2.internal:5432:app:bob:${PW[1]}\r\n` +
      `*:*:*:postgres:${PW[2]}\r\n`;
    expect(await storedSecrets(session(type, output), PW)).toEqual([]);
  });

  it('every password after blank lines reaches no stored object', async () => {
    const output =
      `$ cat ~/.pgpass\n# prod\nlocalhost:5432:app:alice:${PW[0]}\n\n` +
      `# staging\ndb2.internal:5432:app:bob:${PW[1]}\n \t\n\n*:*:*:postgres:${PW[2]}\n`;
    expect(await storedSecrets(session('cat ~/.pgpass', output), PW)).toEqual([]);
  });

  it('each entry keeps its host, port, database, user and line ends', () => {
    expect(
      redact(`pgpass.conf\r\nh1:5432:app:alice:${PW[0]}\r\n\r\nh2:5432:app:bob:${PW[1]}\r\n`),
    ).toBe('pgpass.conf\r\nh1:5432:app:alice:[REDACTED]\r\n\r\nh2:5432:app:bob:[REDACTED]\r\n');
  });

  it('prose after a blank line is not an entry', () => {
    const text =
      'chmod 600 ~/.pgpass\n\nThen: 12:30:00:00:done, and http://localhost:8080:/api:x:y';
    expect(redact(text)).toBe(text);
  });
});
