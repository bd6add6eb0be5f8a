import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SatchelClient } from '../../lib/client/index.js';
import { VERSION } from '../../lib/cli/main.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

// One namespace per area, so tests do not see each other's sessions.
const TOKENS = {
  list: 'tok_cli_list_0123456789',
  show: 'tok_cli_show_0123456789',
  edit: 'tok_cli_edit_0123456789',
  cont: 'tok_cli_cont_0123456789',
  search: 'tok_cli_search_012345678',
  cleanup: 'tok_cli_cleanup_01234567',
  readonly: 'tok_cli_readonly_0123456',
  empty: 'tok_cli_empty_012345678',
  append: 'tok_cli_append_01234567',
};

let server: RunningServer;
let bare: RunningServer;
let chat: ChatServer;

beforeAll(async () => {
  chat = await startChatServer();
  const tokens = Object.entries(TOKENS)
    .map(([ns, tok]) => (ns === 'readonly' ? `list/ci=${tok}:ro` : `${ns}/laptop=${tok}`))
    .join(',');
  server = await startSatchelServer({
    env: { SATCHEL_TOKENS: tokens, SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
  });
  // A server without tokens or a model: the open local mode.
  bare = await startSatchelServer();
});
afterAll(async () => {
  await server.close();
  await bare.close();
  await chat.close();
});

const env = (ns: keyof typeof TOKENS) => ({ SATCHEL_URL: server.url, SATCHEL_TOKEN: TOKENS[ns] });
const client = (ns: keyof typeof TOKENS) =>
  new SatchelClient({ url: server.url, token: TOKENS[ns] });

describe('help', () => {
  const commands = [
    'session list',
    'session show',
    'session create',
    'session append',
    'session delete',
    'session trim',
    'session cleanup',
    'continue',
    'search',
    'import',
    'export',
  ];

  it.each(commands)('satchel %s --help', async (command) => {
    const r = await satchel([...command.split(' '), '--help'], {});
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^Usage: satchel ${command}`));
    // Help needs no server: nothing is contacted (no SATCHEL_URL given, none running at the default).
  });

  it('lists the commands, the environment and the exit codes', async () => {
    const r = await satchel(['--help'], {});
    expect(r.code).toBe(0);
    for (const command of commands) expect(r.stdout).toContain(`  ${command} `);
    expect(r.stdout).toContain('SATCHEL_URL');
    expect(r.stdout).toContain('SATCHEL_TOKEN');
    expect(r.stdout).toMatch(/Exit codes: 0 done · 1 .* 2 .* 3 server unreachable/);
    const none = await satchel([], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: satchel <command>');
    const group = await satchel(['session'], {});
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('session trim');
    expect((await satchel(['session', '--help'], {})).code).toBe(0);
  });
});

describe('session list', () => {
  it("prints odek's table, newest first, 20 unless --limit", async () => {
    const c = client('list');
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const { session } = await c.create({
        task: `task number ${i}\nsecond line`,
        ...(i % 2 ? { model: 'gpt-4o' } : {}),
        messages: [{ role: 'user', content: 'hi' }],
      });
      ids.push(session.id);
    }
    const r = await satchel(['session', 'list'], env('list'));
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID {2,}Turns {2}Model {2,}Task$/);
    expect(lines).toHaveLength(21);
    // Newest first: the last created is on top, model and one-line task in their columns.
    expect(lines[1]).toMatch(new RegExp(`^${ids[21]} +1 +gpt-4o +task number 21 second line$`));
    expect(lines[2]).toMatch(new RegExp(`^${ids[20]} +1 +- +task number 20 second line$`));
    const limited = await satchel(['session', 'list', '--limit', '2'], env('list'));
    expect(limited.stdout.trimEnd().split('\n')).toHaveLength(3);
    const more = await satchel(['session', 'list', '-n', '30', '--json'], env('list'));
    const parsed = JSON.parse(more.stdout);
    expect(parsed.sessions.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
    expect(parsed.sessions[0]).toMatchObject({ id: ids[21], turns: 1, model: 'gpt-4o' });
  });

  it('cuts long tasks to the terminal width', async () => {
    await client('list').create({ task: 'x'.repeat(300) });
    const r = await satchel(['session', 'list', '--limit', '1'], env('list'), {
      tty: true,
      columns: 80,
    });
    const row = r.stdout.split('\n')[1]!;
    expect([...row].length).toBeLessThanOrEqual(80);
    expect(row.endsWith('…')).toBe(true);
  });

  it('refuses a bad --limit and stray arguments', async () => {
    for (const args of [['--limit', '0'], ['--limit', 'ten'], ['extra']]) {
      const r = await satchel(['session', 'list', ...args], env('list'));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^satchel: session list: /);
    }
  });

  it('a negative number is named as one, not as an unknown option (first-hour review)', async () => {
    for (const argv of [
      ['session', 'cleanup', '-1'],
      ['session', 'list', '--limit', '-5'],
    ]) {
      const r = await satchel(argv, env('list'));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('is a negative number');
      expect(r.stderr).not.toContain('Unknown option');
    }
  });
});

describe('session show', () => {
  it('prints a readable transcript with tool calls and results set apart; the latest without an id', async () => {
    const c = client('show');
    const { session } = await c.create({
      task: 'read the config',
      model: 'gpt-4o',
      provider: 'openai',
      external_refs: [
        { kind: 'github_issue', uri: 'https://github.com/acme/app/issues/1', read_only: true },
      ],
      messages: [
        { role: 'system', content: 'You are careful.' },
        { role: 'user', content: 'What is in config.ts?' },
        {
          role: 'assistant',
          content: 'Reading it.',
          reasoning_content: 'need the file',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path": "config.ts"}' },
            },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: 'export const port = 8787;\nexport const host = "::";',
        },
        { role: 'assistant', content: 'It sets port and host.' },
      ],
    });
    const r = await satchel(['session', 'show'], env('show'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `Session ${session.id}`,
        'Task:     read the config',
        'Model:    gpt-4o (openai)',
        'Turns:    1 · 5 messages · revision 1',
        `Created:  ${session.created_at} · updated ${session.updated_at}`,
        'Ref:      github_issue https://github.com/acme/app/issues/1 (laptop, read-only)',
        '',
        '── system ──',
        'You are careful.',
        '',
        '── user ──',
        'What is in config.ts?',
        '',
        '── assistant ──',
        '  (reasoning) need the file',
        'Reading it.',
        '  → tool call read_file #call_1',
        '      {"path":"config.ts"}',
        '',
        '── tool result read_file #call_1 ──',
        '    export const port = 8787;',
        '    export const host = "::";',
        '',
        '── assistant ──',
        'It sets port and host.',
        '',
      ].join('\n'),
    );
    const byId = await satchel(['session', 'show', session.id], env('show'));
    expect(byId.stdout).toBe(r.stdout);
    const json = await satchel(['session', 'show', session.id, '--json'], env('show'));
    expect(JSON.parse(json.stdout)).toEqual((await c.get(session.id)).session);
  });

  it('cuts long tool results unless --full', async () => {
    const c = client('show');
    const { session } = await c.create({
      task: 'long output',
      messages: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c', type: 'function', function: { name: 'shell', arguments: 'seq 30' } },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'c',
          content: Array.from({ length: 30 }, (_, i) => String(i + 1)).join('\n'),
        },
      ],
    });
    const cut = await satchel(['session', 'show', session.id], env('show'));
    expect(cut.stdout).toContain('    20\n    … 10 more lines (--full shows all)');
    expect(cut.stdout).toContain('  → tool call shell #c\n      seq 30');
    const full = await satchel(['session', 'show', session.id, '--full'], env('show'));
    expect(full.stdout).toContain('    29\n    30\n');
  });
});

describe('create, trim, delete', () => {
  it('creates with a system prompt, model and external refs, and prints the id', async () => {
    const r = await satchel(
      [
        'session',
        'create',
        'fix the flaky test',
        '--system',
        'Be brief.',
        '--model',
        'gpt-4o',
        '--external-ref',
        'github_issue=https://github.com/acme/app/issues/9?x=1',
        '--external-ref',
        'kind=doc,uri=https://wiki/a,b=c,line=42,created_by=alice,read_only=true',
      ],
      env('edit'),
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const id = r.stdout.trim();
    expect(id).toMatch(/^\d{8}-[0-9a-f]{32}$/);
    const { session } = await client('edit').get(id);
    expect(session).toMatchObject({
      task: 'fix the flaky test',
      model: 'gpt-4o',
      messages: [{ role: 'system', content: 'Be brief.' }],
    });
    expect(session.external_refs).toMatchObject([
      {
        kind: 'github_issue',
        uri: 'https://github.com/acme/app/issues/9?x=1',
        created_by: 'cli',
        read_only: false,
      },
      // `,line=` is two edits from `kind`: a uri's pair, not a misspelled field (review).
      { kind: 'doc', uri: 'https://wiki/a,b=c,line=42', created_by: 'alice', read_only: true },
    ]);
    const json = await satchel(
      ['session', 'create', 'with id', '--id', 'my-own.id', '--json'],
      env('edit'),
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      id: 'my-own.id',
      task: 'with id',
      revision: 1,
    });
  });

  it.each([
    ['noequals', /--external-ref "noequals": expected kind=uri/],
    ['BAD=https://x', /--external-ref "BAD=https:\/\/x": kind must be 1-64 of \[a-z0-9_-\]/],
    ['doc=', /--external-ref "doc=": uri is missing/],
    ['kind=doc,uri=x,read_only=yes', /read_only must be true or false/],
    ['kind=doc,uri=x,created_by=', /created_by/],
    ['kind=doc,uri=a\u0001b', /control characters/],
    // A misspelled field was folded into the uri (read_only lost) or the kind (review, 2026-12-05).
    ['kind=jira,uri=https://j/1,readonly=true', /readonly is not a field \(kind, uri, /],
    ['kind=github,url=https://g/1', /url is not a field/],
    ['kind=doc,uri=x,created-by=me', /created-by is not a field/],
  ])('refuses --external-ref %j, naming the flag (exit 2)', async (value, message) => {
    const r = await satchel(['session', 'create', 'x', '--external-ref', value], env('edit'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    const c = await satchel(['continue', 'x', '--external-ref', value], env('edit'));
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--external-ref');
  });

  it('trims and says what it dropped', async () => {
    const c = client('edit');
    const { session } = await c.create({
      task: 'long chat',
      messages: [
        { role: 'system', content: 's' },
        ...Array.from({ length: 5 }, (_, i) => ({
          role: i % 2 ? ('assistant' as const) : ('user' as const),
          content: `m${i}`,
        })),
      ],
    });
    const r = await satchel(['session', 'trim', session.id, '3'], env('edit'));
    expect(r).toEqual({
      code: 0,
      stdout: `Trimmed session ${session.id}: 6 → 3 messages (3 dropped)\n`,
      stderr: '',
    });
    const again = await satchel(['session', 'trim', session.id, '3', '--json'], env('edit'));
    expect(JSON.parse(again.stdout)).toEqual({
      id: session.id,
      before: 3,
      after: 3,
      dropped: 0,
      dropped_groups: 0,
    });
    expect((await satchel(['session', 'trim', session.id, '1'], env('edit'))).code).toBe(2);
    expect((await satchel(['session', 'trim', session.id], env('edit'))).code).toBe(2);
    const missing = await satchel(['session', 'trim', 'no-such-session', '3'], env('edit'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('satchel: Not Found: session no-such-session does not exist\n');
  });

  it('deletes', async () => {
    const { session } = await client('edit').create({ task: 'doomed' });
    const r = await satchel(['session', 'delete', session.id], env('edit'));
    expect(r).toEqual({ code: 0, stdout: `Deleted session ${session.id}\n`, stderr: '' });
    const again = await satchel(['session', 'delete', session.id, '--json'], env('edit'));
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ status: 404, title: 'Not Found' });
  });
});

describe('session cleanup', () => {
  it('deletes what is older than the days given; 0 deletes everything', async () => {
    const c = client('cleanup');
    for (let i = 0; i < 3; i++) await c.create({ task: `old ${i}` });
    const keep = await satchel(['session', 'cleanup', '30'], env('cleanup'));
    expect(keep).toEqual({
      code: 0,
      stdout: 'Deleted 0 sessions not updated in 30 days\n',
      stderr: '',
    });
    const all = await satchel(['session', 'cleanup', '0'], env('cleanup'));
    expect(all).toEqual({ code: 0, stdout: 'Deleted 3 sessions\n', stderr: '' });
    expect((await satchel(['session', 'list'], env('cleanup'))).stdout).toBe('No sessions.\n');
    expect(
      JSON.parse((await satchel(['session', 'cleanup', '1', '--json'], env('cleanup'))).stdout),
    ).toEqual({ deleted: 0 });
    expect((await satchel(['session', 'cleanup', '-3'], env('cleanup'))).code).toBe(2);
    expect((await satchel(['session', 'cleanup'], env('cleanup'))).code).toBe(2);
  });
});

describe('continue', () => {
  it('prints the reply of the model turn, on the latest session or --id', async () => {
    const c = client('cont');
    const first = (
      await c.create({
        task: 'cache design',
        messages: [{ role: 'system', content: 'You design caches.' }],
      })
    ).session;
    const second = (await c.create({ task: 'other work' })).session;
    chat.script({ reply: 'An LRU of 256 MiB.' }, { reply: 'Evict the oldest first.' });
    const r = await satchel(
      [
        'continue',
        '--id',
        first.id,
        'what',
        'did',
        'we',
        'decide?',
        '--external-ref',
        'doc=https://wiki/cache',
      ],
      env('cont'),
    );
    expect(r).toEqual({ code: 0, stdout: 'An LRU of 256 MiB.\n', stderr: '' });
    const stored = (await c.get(first.id)).session;
    expect(stored.messages.slice(1).map((m) => [m.role, m.content])).toEqual([
      ['user', 'what did we decide?'],
      ['assistant', 'An LRU of 256 MiB.'],
    ]);
    expect(stored.external_refs).toMatchObject([
      { kind: 'doc', uri: 'https://wiki/cache', created_by: 'cli' },
    ]);
    // Without --id: the latest, which is now `first` (it was just updated).
    const latest = await satchel(['continue', 'and eviction?', '--json'], env('cont'));
    expect(JSON.parse(latest.stdout)).toMatchObject({
      id: first.id,
      model_turn: true,
      reply: 'Evict the oldest first.',
      turns: 2,
    });
    expect((await c.get(second.id)).session.messages).toEqual([]);
    expect(chat.requests.at(-1)!.body.model).toBe('test-model');
  });

  it('says when no model turn ran', async () => {
    const bareEnv = { SATCHEL_URL: bare.url };
    const created = await satchel(['session', 'create', 'no model here'], bareEnv);
    const id = created.stdout.trim();
    const r = await satchel(['continue', 'hello'], bareEnv);
    expect(r).toEqual({
      code: 0,
      stdout: `Stored in session ${id} (revision 2); no model turn: the server has no model configured\n`,
      stderr: '',
    });
    expect((await satchel(['continue'], bareEnv)).code).toBe(2);
    const missing = await satchel(['continue', '--id', 'nope', 'hi'], bareEnv);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Not Found');
  });
});

describe('continue: what to do next', () => {
  it('in an empty namespace, says how to make a session', async () => {
    const r = await satchel(['continue', 'hello'], env('empty'));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'satchel: Not Found: there are no sessions in this namespace\n' +
        'There are no sessions in this namespace yet: create one with `satchel session create "task"`, or import odek\'s with `satchel import ~/.odek/sessions`.\n',
    );
    const show = await satchel(['session', 'show'], env('empty'));
    expect(show.stderr).toContain('create one with `satchel session create "task"`');
  });

  it('after a failed model turn, prints the command that runs it again with the same key, and that rerun stores the message once', async () => {
    const c = client('cont');
    const { session } = await c.create({ task: 'flaky model' });
    chat.script({ status: 500, body: { error: { message: 'overloaded' } } });
    const r = await satchel(
      ['continue', '--id', session.id, "what's next?", '--idempotency-key', 'retry-me-1'],
      env('cont'),
    );
    expect(r.code).toBe(1);
    const [problem, advice, command] = r.stderr.trimEnd().split('\n');
    expect(problem).toMatch(
      /^satchel: Bad Gateway: the model endpoint answered HTTP 500; your message was stored \(revision 2\) and no reply was stored\.$/,
    );
    expect(advice).toBe(
      'To run the turn when the model is reachable again without storing the message twice:',
    );
    expect(command).toBe(
      `  satchel continue --id ${session.id} --idempotency-key retry-me-1 'what'\\''s next?'`,
    );
    chat.script({ reply: 'Ship it.' });
    const again = await satchel(
      ['continue', '--id', session.id, "what's next?", '--idempotency-key', 'retry-me-1'],
      env('cont'),
    );
    expect(again).toEqual({ code: 0, stdout: 'Ship it.\n', stderr: '' });
    const stored = (await c.get(session.id)).session;
    expect(stored.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', "what's next?"],
      ['assistant', 'Ship it.'],
    ]);
  });

  it('refuses an --idempotency-key the server would refuse', async () => {
    for (const key of ['7f3c…', 'has space', '']) {
      const r = await satchel(['continue', 'x', '--idempotency-key', key], env('cont'));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--idempotency-key must be 1-255 visible ASCII characters');
    }
  });
});

describe('session append', () => {
  it('appends one message, and a repeat with the same key stores nothing', async () => {
    const c = client('append');
    const { session } = await c.create({ task: 'notes' });
    const r = await satchel(
      ['session', 'append', session.id, 'first note', '--idempotency-key', 'note-1'],
      env('append'),
    );
    expect(r).toEqual({
      code: 0,
      stdout: `Appended 1 message to session ${session.id} (revision 2, 1 turn)\n`,
      stderr: '',
    });
    const again = await satchel(
      ['session', 'append', session.id, 'first note', '--idempotency-key', 'note-1', '--json'],
      env('append'),
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ id: session.id, revision: 2, turns: 1 });
    const other = await satchel(
      ['session', 'append', session.id, 'another note', '--idempotency-key', 'note-1'],
      env('append'),
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^satchel: Unprocessable (Entity|Content): /);
    await satchel(
      ['session', 'append', session.id, 'I am the model', '--role', 'assistant'],
      env('append'),
    );
    expect((await c.get(session.id)).session.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first note'],
      ['assistant', 'I am the model'],
    ]);
    expect(
      (await satchel(['session', 'append', session.id, 'x', '--role', 'robot'], env('append')))
        .code,
    ).toBe(2);
    expect((await satchel(['session', 'append', session.id], env('append'))).code).toBe(2);
    expect(
      (
        await satchel(
          ['session', 'append', session.id, 'x', '--idempotency-key', '7f3c…'],
          env('append'),
        )
      ).code,
    ).toBe(2);
  });
});

describe('search', () => {
  it('ranks sessions by their content', async () => {
    const c = client('search');
    const hit = (
      await c.create({
        task: 'flaky payment test',
        messages: [
          {
            role: 'user',
            content: 'The checkout test fails on leap days because of the timezone offset.',
          },
        ],
      })
    ).session;
    await c.create({
      task: 'unrelated',
      messages: [{ role: 'user', content: 'Write the release notes for version 2.' }],
    });
    const r = await satchel(['search', 'checkout timezone'], env('search'));
    expect(r.code).toBe(0);
    const [top, snippet] = r.stdout.split('\n');
    expect(top).toMatch(new RegExp(`^${hit.id}  \\d\\.\\d{3}  flaky payment test$`));
    expect(snippet).toMatch(/^ {4}.*timezone/);
    expect(r.stdout).not.toContain('unrelated');
    const json = JSON.parse(
      (await satchel(['search', 'checkout', 'timezone', '--json', '--limit', '1'], env('search')))
        .stdout,
    );
    expect(json.results).toHaveLength(1);
    expect(json.results[0]).toMatchObject({ id: hit.id, task: 'flaky payment test' });
    expect((await satchel(['search', 'zebra quantum'], env('search'))).stdout).toBe(
      'No matching sessions.\n',
    );
    expect((await satchel(['search'], env('search'))).code).toBe(2);
    expect((await satchel(['search', 'x', '--limit', '21'], env('search'))).code).toBe(2);
  });
});

describe('errors and exit codes', () => {
  it('1: the problem title and detail, validation errors listed; --json prints the problem', async () => {
    const unauthorized = await satchel(['session', 'list'], {
      SATCHEL_URL: server.url,
      SATCHEL_TOKEN: 'wrong',
    });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toBe(
      "satchel: Unauthorized: the token is not known. SATCHEL_TOKEN is not one of the server's tokens (its SATCHEL_TOKENS); check it, and that SATCHEL_URL is the server you mean.\n",
    );
    const tokenless = await satchel(['session', 'list'], { SATCHEL_URL: server.url });
    expect(tokenless.stderr).toBe(
      'satchel: Unauthorized: this server needs a token. Set SATCHEL_TOKEN to one of its tokens (its SATCHEL_TOKENS).\n',
    );
    const forbidden = await satchel(['session', 'create', 'x'], env('readonly'));
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^satchel: Forbidden: /);
    const invalid = await satchel(['session', 'create', 'x', '--id', '.hidden'], env('edit'));
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^satchel: Bad Request: .*\n {2}id: /);
    const json = await satchel(['session', 'show', 'nope', '--json'], env('show'));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      type: 'https://satchel.dev/problems/404',
      title: 'Not Found',
      status: 404,
      detail: 'session nope does not exist',
    });
    expect(json.stdout).toBe('');
  });

  it('--version prints the version of the satchel package', async () => {
    const pkg = JSON.parse(readFileSync('packages/client/package.json', 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
    for (const flag of ['--version', '-V', 'version']) {
      const r = await satchel([flag], {});
      expect(r).toEqual({ code: 0, stdout: `satchel ${pkg.version}\n`, stderr: '' });
    }
  });

  it('2: unknown commands and options, bad SATCHEL_URL', async () => {
    const unknown = await satchel(['sessions', 'list'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "sessions"');
    expect((await satchel(['session', 'frobnicate'], {})).stderr).toContain(
      'unknown command "session frobnicate"',
    );
    const option = await satchel(['session', 'list', '--colour'], env('list'));
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/Unknown option '--colour'/);
    expect(option.stderr).toContain('Usage: satchel session list');
    const url = await satchel(['session', 'list'], { SATCHEL_URL: 'not a url' });
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('SATCHEL_URL is not a URL');
    // A host and port without the scheme parse as the scheme `localhost:`: the URL meant is shown.
    const bare = await satchel(['session', 'list'], { SATCHEL_URL: 'localhost:8787' });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain(
      'SATCHEL_URL needs its scheme: http://localhost:8787 (or https://localhost:8787)',
    );
    const ftp = await satchel(['session', 'list'], { SATCHEL_URL: 'ftp://example.com' });
    expect(ftp.stderr).toContain('SATCHEL_URL must be http or https, not ftp:');
    const json = await satchel(['session', 'trim', 'x', '--json'], env('edit'));
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'usage' });
  });

  it('3: nothing listening at SATCHEL_URL', async () => {
    const closed = await startSatchelServer();
    const url = closed.url;
    await closed.close();
    const r = await satchel(['session', 'list'], { SATCHEL_URL: url });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `satchel: cannot reach ${url}: ECONNREFUSED. Is the server running? Start one with \`npm start\`, or set SATCHEL_URL.\n`,
    );
  });
});
