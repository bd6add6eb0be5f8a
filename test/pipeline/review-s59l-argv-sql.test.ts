// Review s59l. Two ways a password or token in an agent's session was stored as typed:
// 1. Tool-call arguments holding a command line as an argv array (`{"command": ["mysql", "-u", "root",
//    "-p…"]}`, Codex-style shell tools, subprocess-style calls) or headers as [name, value] pairs (fetch's
//    HeadersInit): each string was redacted alone, so a flag and its value, or a header's name and value,
//    never met a rule. The same command as one string, or the headers as an object, were redacted. Now the
//    JSON walk reads an array of strings as a command line (each string after the ones before it) and a
//    pair in a `…headers` array as its header line.
// 2. SQL that sets a password names it with a keyword and a blank (`IDENTIFIED BY '…'`, `WITH PASSWORD
//    '…'`), not `=` or `:`: no rule saw it. Now the rules `sql-identified-by` and `sql-password-literal` do.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { redactArguments } from '../../lib/pipeline/save.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
const redact = (s: string) => pipeline.redactText(s);
const PW = 'Hq7pZ2xWv9Q';
const TOKEN = 'Qm9vT3pLx8Zr2Wc7Yh1Nf5Kd4Bv6Gt0Js3Ua9Ie8Po';

/** Creates a session with `messages` on a local store; the files that hold one of `secrets` afterwards. */
async function storedHolders(messages: unknown[], secrets: string[]): Promise<string[]> {
  const app = await makeApp();
  const res = await app.call('POST', '/v1/sessions', { body: { task: 't', id: 's1', messages } });
  expect(res.status).toBe(201);
  await settleAll(app);
  return holders(app.dir, secrets);
}

const call = (args: unknown) => [
  { role: 'user', content: 'run it' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'shell', arguments: JSON.stringify(args) } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'ok' },
];

describe('argv arrays and header pairs in tool-call arguments', () => {
  const cases = [
    [{ command: ['mysql', '-u', 'root', '-p' + PW] }, ['mysql', '-u', 'root', '-p' + PLACEHOLDER]],
    [{ command: ['mycli', '--password', PW] }, ['mycli', '--password', PLACEHOLDER]],
    [
      { command: ['deploy', '--token', TOKEN, '--env', 'prod'] },
      ['deploy', '--token', PLACEHOLDER, '--env', 'prod'],
    ],
    [
      { command: ['sqlcmd', '-S', 'db', '-U', 'sa', '-P', PW] },
      ['sqlcmd', '-S', 'db', '-U', 'sa', '-P', PLACEHOLDER],
    ],
  ] as const;

  it('a flag and its value are read together: the value goes, the rest stays', () => {
    for (const [args, command] of cases)
      expect(JSON.parse(redactArguments(JSON.stringify(args), redact))).toEqual({ command });
  });

  it('a [name, value] pair in a headers array is read as its header line', () => {
    const args = {
      url: 'https://api.example.com',
      headers: [
        ['X-Api-Key', TOKEN],
        ['Accept', 'application/json'],
      ],
    };
    expect(JSON.parse(redactArguments(JSON.stringify(args), redact))).toEqual({
      ...args,
      headers: [
        ['X-Api-Key', PLACEHOLDER],
        ['Accept', 'application/json'],
      ],
    });
  });

  it('arrays where nothing is found stay byte for byte', () => {
    for (const args of [
      { command: ['git', 'commit', '-m', 'fix the password form'] },
      { command: ['ls', '-la', '/tmp'], env: ['A', 'B'] },
      { command: ['deploy', '--token', '$DEPLOY_TOKEN'] },
      { headers: [['Accept', 'application/json']], tags: ['token', 'password'] },
    ]) {
      const sent = JSON.stringify(args);
      expect(redactArguments(sent, redact)).toBe(sent);
    }
  });

  for (const args of [
    ...cases.map((c) => c[0]),
    { url: 'https://x.example', headers: [['X-Api-Key', TOKEN]] },
  ])
    it(`${JSON.stringify(args).replace(PW, '<pw>').replace(TOKEN, '<token>')}: not stored`, async () => {
      expect(await storedHolders(call(args), [PW, TOKEN])).toEqual([]);
    });
});

describe('passwords in SQL statements', () => {
  const statements = [
    `CREATE USER 'app'@'%' IDENTIFIED BY '${PW}';`,
    `ALTER USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY '${PW}';`,
    `ALTER USER app WITH PASSWORD '${PW}';`,
    `CREATE ROLE app LOGIN PASSWORD '${PW}';`,
    `CREATE ROLE app WITH LOGIN SUPERUSER ENCRYPTED PASSWORD "${PW}";`,
    `ALTER ROLE app PASSWORD '${PW}' VALID UNTIL 'infinity';`,
    `ALTER ROLE app VALID UNTIL '2030-01-01' PASSWORD '${PW}';`,
    `CREATE USER app CONNECTION LIMIT 5 PASSWORD '${PW}';`,
  ];

  it('the literal goes, the statement stays', () => {
    for (const sql of statements) expect(redact(sql)).toBe(sql.replace(PW, PLACEHOLDER));
  });

  it('prose, placeholders and parameters stay', () => {
    for (const kept of [
      `the password 'field' is required`,
      `Enter the password "twice" to confirm.`,
      `Set the password 'field' as required.`,
      `CREATE USER app IDENTIFIED BY '\${DB_PASSWORD}';`,
      `ALTER USER app WITH PASSWORD '<password>';`,
      `ALTER USER app WITH PASSWORD '%s';`,
    ])
      expect(redact(kept)).toBe(kept);
  });

  for (const sql of statements.slice(0, 4))
    it(`${sql.replace(PW, '…')}: not stored`, async () => {
      const messages = [
        { role: 'user', content: 'make the app user' },
        { role: 'assistant', content: 'Running:\n' + sql },
      ];
      expect(await storedHolders(messages, [PW])).toEqual([]);
    });
});
