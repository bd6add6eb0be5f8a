import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { importOdekFile } from '../../lib/odek/transfer.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { holders } from '../support/holders.js';
import { makeApp, settleAll, TOKENS } from './helpers.js';

// Review s61d, finding 1: tool-call arguments whose JSON repeats a key were stored as sent when the value
// JSON.parse keeps (the last) held nothing to redact, with the earlier value's secret in them: in the
// session object, the lexical index records, and search snippets; from every writer of tool calls (create,
// append, PUT, an import, a model's own tool call). The earlier values are stored as the placeholder now.

const GH = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const PASSWORD = 'hunter2hunter2';
const MINE = 'myownsecretvalue42';
const R = PLACEHOLDER;

type App = Awaited<ReturnType<typeof makeApp>>;

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** An assistant message calling `f` with `args`, and its tool result. */
function callWith(args: string, id = 'c1') {
  return [
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: args } }],
    },
    { role: 'tool', tool_call_id: id, content: 'ok' },
  ];
}

/** Where `secret` is left once the app has settled: files in its folder, and what a search for it shows. */
async function leaks(app: App, secret: string): Promise<string[]> {
  await settleAll(app);
  const found = holders(app.dir, [secret]);
  for (const query of [secret, secret.slice(0, 12)]) {
    const res = await app.call('POST', '/v1/session_search', { body: { action: 'search', query } });
    if (res.text.includes(secret)) found.push(`search ${query}: ${res.text}`);
  }
  return found;
}

/** The arguments of the stored session's first tool call. */
async function storedArguments(app: App, id: string): Promise<string> {
  const got = await app.call('GET', `/v1/sessions/${id}`);
  const call = (got.json.messages as { tool_calls?: { function: { arguments: string } }[] }[]).find(
    (m) => m.tool_calls,
  );
  return call!.tool_calls![0]!.function.arguments;
}

describe('tool-call arguments with a repeated key, through the API (review s61d)', () => {
  const cases: [string, string, string, string][] = [
    ['a token in the first of two', `{"a":"${GH}","a":"x"}`, GH, `{"a":"${R}","a":"x"}`],
    [
      'a secret-sounding key, the first of two',
      `{"password":"${PASSWORD}","password":""}`,
      PASSWORD,
      `{"password":"${R}","password":""}`,
    ],
    ['nested', `{"cmd":{"env":"${GH}","env":"x"}}`, GH, `{"cmd":{"env":"${R}","env":"x"}}`],
  ];
  for (const [name, args, secret, stored] of cases) {
    it(`create, ${name}: not stored, indexed or found by search`, async () => {
      const app = await makeApp();
      const res = await app.call('POST', '/v1/sessions', {
        body: {
          id: 'dups',
          task: 't',
          messages: [{ role: 'user', content: 'run' }, ...callWith(args)],
        },
      });
      expect(res.status).toBe(201);
      expect(res.text).not.toContain(secret);
      expect(Number(res.headers.get('satchel-redactions'))).toBeGreaterThan(0);
      expect(await storedArguments(app, 'dups')).toBe(stored);
      expect(await leaks(app, secret)).toEqual([]);
    });
  }

  it("create: a request's own secret (Satchel-Secrets) in the first of two", async () => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/sessions', {
      headers: { 'satchel-secrets': Buffer.from(JSON.stringify([MINE])).toString('base64') },
      body: {
        id: 'mine',
        task: 't',
        messages: [{ role: 'user', content: 'x' }, ...callWith(`{"x":"${MINE}","x":1}`)],
      },
    });
    expect(res.status).toBe(201);
    expect(await storedArguments(app, 'mine')).toBe(`{"x":"${R}","x":1}`);
    expect(await leaks(app, MINE)).toEqual([]);
  });

  it('append', async () => {
    const app = await makeApp();
    await app.call('POST', '/v1/sessions', {
      body: { id: 'ap', task: 't', messages: [{ role: 'user', content: 'x' }] },
    });
    const res = await app.call('POST', '/v1/sessions/ap/messages', {
      body: { messages: callWith(`{"q":"${GH}","q":"deploy"}`) },
    });
    expect(res.status).toBe(200);
    expect(res.json.redactions).toBe(1);
    expect(await storedArguments(app, 'ap')).toBe(`{"q":"${R}","q":"deploy"}`);
    expect(await leaks(app, GH)).toEqual([]);
  });

  it('PUT', async () => {
    const app = await makeApp();
    await app.call('POST', '/v1/sessions', {
      body: { id: 'pt', task: 't', messages: [{ role: 'user', content: 'x' }] },
    });
    const res = await app.call('PUT', '/v1/sessions/pt', {
      headers: { 'if-match': '"1"' },
      body: {
        task: 't',
        messages: [
          { role: 'user', content: 'x' },
          ...callWith(`{"password":"${PASSWORD}","password":""}`),
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('satchel-redactions')).toBe('1');
    expect(await storedArguments(app, 'pt')).toBe(`{"password":"${R}","password":""}`);
    expect(await leaks(app, PASSWORD)).toEqual([]);
  });

  it('an import of an odek file (satchel import)', async () => {
    const app = await makeApp();
    const client = new SatchelClient({
      url: 'http://localhost',
      token: TOKENS.laptop,
      fetch: (input, init) =>
        app.app.fetch(new Request(input as string, init)) as Promise<Response>,
      retry: { retries: 0 },
    });
    const file = {
      id: 'odek-run',
      created_at: '2025-01-10T08:00:00Z',
      updated_at: '2025-01-10T09:30:00Z',
      task: 't',
      external_refs: [],
      messages: [{ role: 'user', content: 'x' }, ...callWith(`{"env":{"T":"${GH}","T":"x"}}`)],
    };
    const r = await importOdekFile(client, 'odek-run.json', JSON.stringify(file));
    expect(r.status).toBe('created');
    expect(await storedArguments(app, 'odek-run')).toBe(`{"env":{"T":"${R}","T":"x"}}`);
    expect(await leaks(app, GH)).toEqual([]);
    // The same file again: what is stored is the file with its secret redacted, so nothing changed.
    const again = await importOdekFile(client, 'odek-run.json', JSON.stringify(file));
    expect(again.status).toBe('unchanged');
  });

  it("continue: the model's own tool call", async () => {
    const chat = await startChatServer(
      {
        toolCalls: [
          {
            name: 'session_search',
            arguments: `{"query":"${GH}","query":"deploy","action":"search"}`,
            id: 't1',
          },
        ],
      },
      { reply: 'done' },
    );
    servers.push(chat);
    const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm1' } });
    await app.call('POST', '/v1/sessions', {
      body: { id: 'm', task: 't', messages: [{ role: 'user', content: 'hi' }] },
    });
    const res = await app.call('POST', '/v1/sessions/m/continue', { body: { message: 'search' } });
    expect(res.status).toBe(200);
    expect(res.json.redactions).toBeGreaterThan(0);
    expect(await storedArguments(app, 'm')).toBe(
      `{"query":"${R}","query":"deploy","action":"search"}`,
    );
    expect(await leaks(app, GH)).toEqual([]);
  });

  it('a session stored with such arguments under an older scan is cleaned by its next write', async () => {
    const app = await makeApp();
    await app.call('POST', '/v1/sessions', {
      body: {
        id: 'old',
        task: 't',
        messages: [{ role: 'user', content: 'x' }, ...callWith('{"a":"x"}')],
      },
    });
    await settleAll(app);
    // As a version before the fix stored it: the arguments as sent, under another rule version's scan record
    // (the fix changed WALK, so every stored session is scanned again on its next write).
    const file = join(app.dir, 'ns/alice/sessions/old.json');
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    stored.messages[1].tool_calls[0].function.arguments = `{"a":"${GH}","a":"x"}`;
    stored.satchel.scan.v = 'older';
    writeFileSync(file, JSON.stringify(stored));
    const later = await makeApp({ objects: app.objects });
    const res = await later.call('POST', '/v1/sessions/old/messages', {
      body: { messages: [{ role: 'user', content: 'more' }] },
    });
    expect(res.status).toBe(200);
    expect(await storedArguments(later, 'old')).toBe(`{"a":"${R}","a":"x"}`);
    expect(holders(app.dir, [GH]).filter((h) => h.includes('/sessions/'))).toEqual([]);
  });
});
