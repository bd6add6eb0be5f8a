import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startFlakyProxy } from '../client/flaky-proxy.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

/** The CLI against servers that misbehave, and environments that hold mistakes (or secrets). */
let server: RunningServer;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startSatchelServer();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
afterAll(() => server.close());

const misbehaving = async (handle: Parameters<typeof misbehavingServer>[0]) =>
  (await misbehavingServer(handle, closers)).url;

async function proxy(script: Parameters<typeof startFlakyProxy>[1]) {
  const p = await startFlakyProxy(server.url, script);
  closers.push(p.close);
  return p;
}

describe('secrets in the environment', () => {
  it('a SATCHEL_TOKEN with a line break: exit 2, the token not printed', async () => {
    const r = await satchel(['session', 'list'], {
      SATCHEL_URL: server.url,
      SATCHEL_TOKEN: 'tok_SECRETVALUE_123\ntok_other',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SATCHEL_TOKEN is not a valid token');
    expect(r.stderr).not.toContain('SECRETVALUE');
  });

  it('a SATCHEL_URL with a password: exit 2, the password not printed', async () => {
    const url = server.url.replace('http://', 'http://me:pw_SECRETVALUE@');
    const r = await satchel(['session', 'list', '--json'], { SATCHEL_URL: url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SATCHEL_URL must not hold a user name or password');
    expect(r.stderr).not.toContain('SECRETVALUE');
  });
});

describe('a SATCHEL_URL that is not a Satchel server', () => {
  it('a 200 HTML page: exit 3 with a clear message', async () => {
    const url = await misbehaving((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>Welcome to nginx!</p>');
    });
    const r = await satchel(['session', 'list'], { SATCHEL_URL: url });
    expect(r).toEqual({
      code: 3,
      stdout: '',
      stderr:
        `satchel: the answer from ${url}/v1/sessions?limit=20 is not Satchel JSON: ` +
        'is SATCHEL_URL a Satchel server?\n',
    });
  });

  it('one that accepts and never answers: exit 3 within the default deadline', async () => {
    const url = await misbehaving(() => {
      /* never answers */
    });
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      satchel(['session', 'list'], { SATCHEL_URL: url }),
      new Promise<'timed out'>(
        (resolve) => (timer = setTimeout(() => resolve('timed out'), 60_000)),
      ),
    ]).finally(() => clearTimeout(timer));
    expect(r).toMatchObject({ code: 3 });
  }, 90_000);
});

describe('an empty id', () => {
  it.each([
    [['session', 'show', '']],
    [['session', 'show', '', '--json']],
    [['session', 'delete', '']],
    [['session', 'trim', '', '3']],
    [['session', 'append', '', 'hi']],
    [['session', 'create', 'task', '--id', '']],
    [['continue', '--id', '', 'hi']],
    [['export', '', 'some-folder']],
  ])('satchel %j: exit 2', async (args) => {
    const r = await satchel(args, { SATCHEL_URL: server.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('must not be empty');
    expect(r.stdout).toBe('');
  });
});

describe('a keyed write whose every answer was lost', () => {
  it.each([
    ['continue', (id: string) => ['continue', '--id', id, 'stored though']],
    [
      'session append',
      (id: string) => ['session', 'append', id, 'stored though', '--role', 'assistant'],
    ],
  ])('%s: exit 3, says it may be stored, prints the rerun with its key', async (_name, argv) => {
    const direct = new SatchelClient({ url: server.url });
    const { session } = await direct.create({ task: 'lost answers' });
    const p = await proxy(() => 'forward-then-drop');
    const r = await satchel(argv(session.id), { SATCHEL_URL: p.url });
    const stored = (await direct.get(session.id)).session.messages;
    expect(stored.map((m) => m.content)).toEqual(['stored though']);
    const key = p.seen[0]!.headers['idempotency-key'] as string;
    expect(new Set(p.seen.map((s) => s.headers['idempotency-key']))).toEqual(new Set([key]));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('may have been stored');
    expect(r.stderr).not.toContain('Is the server running?');
    const again = r.stderr.trim().split('\n').at(-1)!.trim();
    expect(again).toContain(`--idempotency-key ${key}`);
    // The printed command, run against the server, stores nothing twice.
    const words = argv(session.id).concat('--idempotency-key', key);
    expect((await satchel(words, { SATCHEL_URL: server.url })).code).toBe(0);
    expect((await direct.get(session.id)).session.messages).toHaveLength(1);
  });
});

describe('writes whose first answer was lost', () => {
  it('session trim: every answer lost is exit 3 with the rerun, which prints the landed counts', async () => {
    const direct = new SatchelClient({ url: server.url });
    const { session } = await direct.create({
      task: 'trim lost',
      messages: [{ role: 'system', content: 'be brief' }],
    });
    for (const n of [1, 2, 3])
      await direct.append(session.id, { messages: [{ role: 'user', content: `turn ${n}` }] });
    const p = await proxy(() => 'forward-then-drop');
    const r = await satchel(['session', 'trim', session.id, '2'], { SATCHEL_URL: p.url });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('may have been stored');
    const again = r.stderr.trim().split('\n').at(-1)!.trim().split(' ');
    expect(again.slice(0, 5)).toEqual(['satchel', 'session', 'trim', session.id, '2']);
    const rerun = await satchel(again.slice(1), { SATCHEL_URL: server.url });
    expect(rerun.stdout).toBe(`Trimmed session ${session.id}: 4 → 2 messages (2 dropped)\n`);
  });

  it('session create --id: a 409 after a lost attempt says the session may be its own', async () => {
    const p = await proxy((n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    const r = await satchel(['session', 'create', 'mine', '--id', 'cli-lost-create'], {
      SATCHEL_URL: p.url,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('may have created it');
    expect(r.stderr).toContain('satchel session show cli-lost-create');
    const taken = await satchel(['session', 'create', 'mine', '--id', 'cli-lost-create'], {
      SATCHEL_URL: server.url,
    });
    expect(taken.code).toBe(1);
    expect(taken.stderr).not.toContain('may have created it');
  });
});

describe('keyed writes that certainly did not land, or cannot', () => {
  it('a refused connection: exit 3, "is the server running", no rerun command (nothing was sent)', async () => {
    // First-hour review: it printed "ECONNREFUSED. The write may have been stored".
    const closed = await misbehaving(() => undefined);
    while (closers.length) await closers.pop()!(); // the port is now closed
    const r = await satchel(['session', 'append', 'some-id', 'hello'], { SATCHEL_URL: closed });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stderr).toContain('Is the server running?');
    expect(r.stderr).not.toContain('may have been stored');
  });

  it('a key reused for another message: exit 1, saying what to do', async () => {
    const direct = new SatchelClient({ url: server.url });
    const { session } = await direct.create({ task: 'reused key' });
    const env = { SATCHEL_URL: server.url };
    const args = ['session', 'append', session.id, '--idempotency-key', 'note-1'];
    expect((await satchel([...args, 'first'], env)).code).toBe(0);
    const r = await satchel([...args, 'second'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Give a new --idempotency-key');
  });
});

describe('a retried delete', () => {
  it('of an id that never existed is a 404 (exit 1) even after a 503 first', async () => {
    const p = await proxy((n) =>
      n === 0
        ? {
            status: 503,
            headers: { 'retry-after': '0' },
            body: {
              type: 'about:blank',
              title: 'Service Unavailable',
              status: 503,
              detail: 'busy',
            },
          }
        : 'forward',
    );
    const r = await satchel(['session', 'delete', 'never-existed-1'], { SATCHEL_URL: p.url });
    expect(r.stdout).toBe('');
    expect(r.code).toBe(1);
  });
});
