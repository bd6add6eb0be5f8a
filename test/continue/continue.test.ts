import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeLease, parseLease } from '../../lib/continue/lease.js';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import type { Env } from '../../lib/server/config.js';
import { makeApp } from '../http/helpers.js';
import { createApp } from '../../lib/http/app.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { loadConfig } from '../../lib/server/config.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { captureLogs } from '../support/logs.js';
import { startChatServer, type ChatServer, type Step } from '../support/chat-server.js';

const MODEL_KEY = 'sk-test-model-key-0123456789abcdef';
const RECEIPT_KEYS = [
  'bytes',
  'dropped_groups',
  'episode_untrusted',
  'id',
  'redactions',
  'revision',
  'turns',
  'untrusted_ingested',
  'updated_at',
];
const sys = { role: 'system', content: 'You are a careful engineer.' };
const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const GITHUB_TOKEN = 'ghp_' + rep('Zq8xW3vN5', 36);

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A chat server with `steps`, and an app (or several on one store: separate processes) pointed at it. */
async function setup(steps: Step[], env: Env = {}, objects?: ObjectStore) {
  const chat = await startChatServer(...steps);
  servers.push(chat);
  const store = objects ?? new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-continue-')));
  const modelEnv: Env = {
    SATCHEL_MODEL_URL: chat.url,
    SATCHEL_MODEL: 'test-model',
    SATCHEL_MODEL_KEY: MODEL_KEY,
    ...env,
  };
  const app = await makeApp({ env: modelEnv, objects: store });
  const another = (more: Env = {}) => makeApp({ env: { ...modelEnv, ...more }, objects: store });
  const create = async (body: Record<string, unknown> = {}) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task: 'cache design', messages: [sys], ...body },
      })
    ).json.id as string;
  return { chat, app, call: app.call, store, another, create };
}

describe('continue without a model', () => {
  it('stores the user message only: 200 receipt, model_turn false, no reply', async () => {
    const app = await makeApp();
    const { json } = await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [sys] },
    });
    const res = await app.call('POST', `/v1/sessions/${json.id}/continue`, {
      body: { message: 'hello' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ...pick(res.json, RECEIPT_KEYS), model_turn: false });
    expect(res.json).toMatchObject({ revision: 2, turns: 1 });
    expect((await app.call('GET', `/v1/sessions/${json.id}`)).json.messages).toEqual([
      sys,
      { role: 'user', content: 'hello' },
    ]);
  });

  it('URL without SATCHEL_MODEL is refused at start (continue would never call the model)', async () => {
    await expect(makeApp({ env: { SATCHEL_MODEL_URL: 'http://127.0.0.1:9' } })).rejects.toThrow(
      /SATCHEL_MODEL_URL is set but SATCHEL_MODEL is not/,
    );
  });
});

describe('continue with a model', () => {
  it('stores the user message before calling the model, then the reply; answers receipt + reply', async () => {
    let seenByModel: unknown;
    const { chat, call, create } = await setup([
      async (request) => {
        // While the model "thinks", the user's message is already in the session, through the API.
        const got = await call('GET', `/v1/sessions/${sessionId}`);
        seenByModel = got.json.messages.at(-1);
        expect(request.body.messages.at(-1)).toEqual({
          role: 'user',
          content: 'which cache did we pick?',
        });
        return { reply: 'An LRU of 256 MiB.' };
      },
    ]);
    const sessionId = await create();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'which cache did we pick?' },
    });
    expect(res.status).toBe(200);
    expect(seenByModel).toEqual({ role: 'user', content: 'which cache did we pick?' });
    expect(Object.keys(res.json).sort()).toEqual([...RECEIPT_KEYS, 'model_turn', 'reply'].sort());
    expect(res.json).toMatchObject({
      id: sessionId,
      revision: 3,
      turns: 1,
      model_turn: true,
      reply: 'An LRU of 256 MiB.',
    });
    expect(res.headers.get('etag')).toBe('"3"');
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const session = (await call('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session.messages).toEqual([
      sys,
      { role: 'user', content: 'which cache did we pick?' },
      { role: 'assistant', content: 'An LRU of 256 MiB.' },
    ]);
    expect(session.revision).toBe(3);
    expect(res.json.bytes).toBeGreaterThan(0);
    // What the model got: the configured model, the bearer key, the conversation and the tool.
    expect(chat.requests).toHaveLength(1);
    expect(chat.requests[0]!.authorization).toBe(`Bearer ${MODEL_KEY}`);
    expect(chat.requests[0]!.body.model).toBe('test-model');
    expect(chat.requests[0]!.body.messages).toEqual([
      sys,
      { role: 'user', content: 'which cache did we pick?' },
    ]);
    expect(chat.requests[0]!.body.tools!.map((t) => t.function.name)).toEqual(['session_search']);
    // The audit log records both writes as continue.
    const audit = (await call('GET', `/v1/sessions/${sessionId}/audit`)).json.records;
    expect(
      audit.map((r: { op: string; messages_added: number }) => [r.op, r.messages_added]),
    ).toEqual([
      ['create', 1],
      ['continue', 1],
      ['continue', 1],
    ]);
  });

  it('a long reply is stored once: its write record keeps only a digest, and the cap counts it once', async () => {
    const cap = 16_000;
    const reply = 'r'.repeat(4000);
    const { app, call, create } = await setup([{ reply }], {
      SATCHEL_MAX_SESSION_BYTES: String(cap),
    });
    const older = [1, 2, 3].map((i) => ({ role: 'assistant', content: String(i).repeat(3000) }));
    const id = await create({ messages: [sys, { role: 'user', content: 'first' }, ...older] });
    const res = await call('POST', `/v1/sessions/${id}/continue`, { body: { message: 'go on' } });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe(reply);
    // The messages fit, and the record adds no copy of the reply (until 2026-12-05 it did, and the cap
    // dropped older groups to make room for it).
    expect(res.json.dropped_groups).toBe(0);
    const object = (await app.objects.get(keys.session('alice', id)))!.body;
    expect(res.json.bytes).toBe(object.byteLength);
    expect(object.byteLength).toBeLessThanOrEqual(cap);
    expect(new TextDecoder().decode(object).split(reply)).toHaveLength(2);
    const session = (await call('GET', `/v1/sessions/${id}`)).json;
    expect(session.messages.at(-1)).toEqual({ role: 'assistant', content: reply });
  });

  it('a reply the cap cannot hold: 413 that says the message was stored and no reply was', async () => {
    // The reply alone does not fit under the cap.
    const cap = 16_000;
    const { call, create } = await setup([{ reply: 'r'.repeat(17_000) }], {
      SATCHEL_MAX_SESSION_BYTES: String(cap),
    });
    const id = await create();
    const res = await call('POST', `/v1/sessions/${id}/continue`, { body: { message: 'go on' } });
    expect(res.status).toBe(413);
    expect(res.json.detail).toContain('cannot be stored in a session of at most 16000 bytes');
    expect(res.json.detail).toMatch(
      /\(SATCHEL_MAX_SESSION_BYTES\): your message was stored \(revision 2\) and no reply was stored$/,
    );
    expect(res.json.detail).not.toMatch(/nothing was written/);
    const session = (await call('GET', `/v1/sessions/${id}`)).json;
    expect(session.revision).toBe(2);
    expect(session.messages).toEqual([sys, { role: 'user', content: 'go on' }]);
  });

  it('runs session_search server-side and feeds the result back; search already sees this turn', async () => {
    const { chat, call, create } = await setup([
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'session_search',
            arguments: { action: 'search', query: 'zebracache eviction' },
          },
        ],
      },
      { reply: 'Both sessions talk about zebracache.' },
    ]);
    const older = await create({
      task: 'older work',
      messages: [sys, { role: 'user', content: 'zebracache eviction policy is LRU' }],
    });
    const sessionId = await create();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'remind me of the zebracache eviction rule' },
    });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe('Both sessions talk about zebracache.');
    expect(chat.requests).toHaveLength(2);
    const second = chat.requests[1]!.body.messages;
    expect(second.at(-2)).toMatchObject({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', function: { name: 'session_search' } }],
    });
    const toolMessage = second.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    const result = JSON.parse(toolMessage.content!) as { results: { id: string }[] };
    // The older session, and this very session: its user message was stored before the model ran.
    expect(result.results.map((r) => r.id).sort()).toEqual([older, sessionId].sort());
    const stored = (await call('GET', `/v1/sessions/${sessionId}`)).json;
    expect(stored.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(stored.messages[2].tool_calls[0]).toMatchObject({
      id: 'call_1',
      type: 'function',
      function: { name: 'session_search' },
    });
    expect(stored.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(JSON.parse(stored.messages[3].content)).toEqual(result);
    // One write for the whole turn: create, user message, turn.
    expect(stored.revision).toBe(3);
    // session_search crosses the trust boundary (odek's rule), so the episode is flagged.
    expect(res.json.episode_untrusted).toBe(true);
  });

  it('an unknown tool gets an error result and the loop goes on', async () => {
    const { chat, call, create } = await setup([
      { toolCalls: [{ id: 'c9', name: 'shell', arguments: { cmd: 'rm -rf /' } }] },
      { reply: 'I cannot run shell here.' },
    ]);
    const sessionId = await create();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'clean up' },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(chat.requests[1]!.body.messages.at(-1)!.content!)).toEqual({
      error: expect.stringMatching(/unknown tool "shell"/),
    });
  });

  it('the model sees the redacted message; a secret in the reply is stored and answered redacted', async () => {
    const { chat, call, create } = await setup([{ reply: `use ${GITHUB_TOKEN} for that` }]);
    const sessionId = await create();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: `my token is ${GITHUB_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(chat.requests[0]!.body)).not.toContain(GITHUB_TOKEN);
    expect(chat.requests[0]!.body.messages.at(-1)!.content).toContain('[REDACTED]');
    expect(res.json.reply).toBe('use [REDACTED] for that');
    expect(res.json.redactions).toBe(2);
    expect(JSON.stringify((await call('GET', `/v1/sessions/${sessionId}`)).json)).not.toContain(
      GITHUB_TOKEN,
    );
  });

  it('a reply echoing SATCHEL_MODEL_KEY (of no known shape) is stored and answered redacted', async () => {
    const key = 'team-gateway-key-4815162342';
    const { call, create } = await setup(
      [(req) => ({ reply: `ok ${String(req.authorization).slice(7)} done` })],
      { SATCHEL_MODEL_KEY: key },
    );
    const sessionId = await create();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'hi' },
    });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe('ok [REDACTED] done');
    expect(res.json.redactions).toBe(1);
    expect((await call('GET', `/v1/sessions/${sessionId}`)).text).not.toContain(key);
  });

  it('continue works on latest', async () => {
    const { call, create } = await setup([{ reply: 'ok' }]);
    await create();
    const newest = await create({ task: 'newest' });
    const res = await call('POST', '/v1/sessions/latest/continue', { body: { message: 'hi' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: newest, model_turn: true, reply: 'ok' });
  });

  it('bad input is a 400 and never reaches the model', async () => {
    const { chat, call, create } = await setup([]);
    const sessionId = await create();
    for (const body of [
      { message: '' },
      { message: 1 },
      { text: 'x' },
      { message: 'x', extra: true },
    ]) {
      const res = await call('POST', `/v1/sessions/${sessionId}/continue`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    expect(
      (await call('POST', '/v1/sessions/nope/continue', { body: { message: 'x' } })).status,
    ).toBe(404);
    expect(chat.requests).toHaveLength(0);
  });
});

describe('continue: model failures', () => {
  for (const [name, step] of [
    ['HTTP 500', { status: 500 }],
    [
      'HTTP 401 whose body echoes the key',
      { status: 401, body: { error: { message: `Incorrect API key provided: ${MODEL_KEY}` } } },
    ],
    ['a body that is not a completion', { status: 200, body: { nothing: true } }],
  ] as [string, Step][]) {
    it(`${name}: 502 problem that says the message was stored; no assistant message`, async () => {
      const { app, call, create } = await setup([step]);
      const sessionId = await create();
      const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
        body: { message: 'are you there?' },
      });
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.json).toMatchObject({ status: 502, title: 'Bad Gateway' });
      expect(res.json.detail).toMatch(
        /your message was stored \(revision 2\) and no reply was stored/,
      );
      expect(res.text).not.toContain(MODEL_KEY);
      const session = (await call('GET', `/v1/sessions/${sessionId}`)).json;
      expect(session.messages).toEqual([sys, { role: 'user', content: 'are you there?' }]);
      expect(session.revision).toBe(2);
      // The operator sees the failure's class, never the key the model echoed.
      expect(app.logs.find('model turn failed', 'warn')).toEqual([
        expect.objectContaining({
          kind: 'status' in step && step.status !== 200 ? 'status' : 'invalid',
        }),
      ]);
      expect(JSON.stringify(app.logs.records)).not.toContain(MODEL_KEY);
    });
  }

  it('a model that hangs times out: 502, message stored, the lease released for the next continue', async () => {
    const { chat, call, create, store } = await setup([{ hang: true }, { reply: 'back again' }], {
      SATCHEL_MODEL_TIMEOUT_MS: '300',
    });
    const sessionId = await create();
    const started = Date.now();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'slow?' },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/did not answer in time.*your message was stored/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(
      (await call('GET', `/v1/sessions/${sessionId}`)).json.messages.map(
        (m: { role: string }) => m.role,
      ),
    ).toEqual(['system', 'user']);
    expect(await store.get(keys.lease('alice', sessionId))).toBeNull();
    const next = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'now?' },
    });
    expect(next.status).toBe(200);
    expect(next.json.reply).toBe('back again');
    expect(chat.requests).toHaveLength(2);
  });

  it('an unreachable model endpoint is a 502 too', async () => {
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: 'http://127.0.0.1:1', SATCHEL_MODEL: 'm' },
    });
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 't' } });
    const res = await app.call('POST', `/v1/sessions/${json.id}/continue`, {
      body: { message: 'x' },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/could not be reached.*your message was stored/);
    expect(app.logs.find('model turn failed', 'warn')).toEqual([
      expect.objectContaining({ kind: 'network' }),
    ]);
  });
});

describe('continue: one model turn at a time per session (the lease)', () => {
  it('two concurrent continues from two processes: one turn at a time, both messages and both replies stored', async () => {
    const slow = (reply: string): Step => ({ reply, delayMs: 300 });
    const { chat, call, create, another } = await setup([
      slow('first reply'),
      slow('second reply'),
    ]);
    const other = await another();
    const sessionId = await create();
    const [a, b] = await Promise.all([
      call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'question A' } }),
      other.call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'question B' } }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(chat.maxConcurrent).toBe(1);
    expect(chat.requests).toHaveLength(2);
    const stored = (await call('GET', `/v1/sessions/${sessionId}`)).json;
    const contents = stored.messages.map((m: { content: string }) => m.content);
    expect(contents).toEqual(
      expect.arrayContaining(['question A', 'question B', 'first reply', 'second reply']),
    );
    expect(stored.messages).toHaveLength(5);
    expect(stored.turns).toBe(2);
    // Each turn's conversation ends with its own question; the second one has seen the first answer.
    const [first, second] = chat.requests.map((r) => r.body.messages);
    expect(first!.at(-1)!.role).toBe('user');
    expect(second!.at(-1)!.role).toBe('user');
    expect(second!.at(-1)!.content).not.toBe(first!.at(-1)!.content);
    expect(second!.map((m) => m.content)).toContain('first reply');
    expect([a.json.reply, b.json.reply].sort()).toEqual(['first reply', 'second reply']);
  });

  it('a live lease held elsewhere: the continue waits its bound, then 409 with Retry-After; its message is stored', async () => {
    const { chat, call, create, store } = await setup([], { SATCHEL_CONTINUE_WAIT_MS: '300' });
    const sessionId = await create();
    await store.put(
      keys.lease('alice', sessionId),
      encodeLease({ owner: 'another-function', expiresAt: Date.now() + 60_000 }),
      { ifNoneMatch: '*' },
    );
    const started = Date.now();
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'my turn?' },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(5);
    expect(res.json.detail).toMatch(/your message was stored \(revision 2\)/);
    expect((await call('GET', `/v1/sessions/${sessionId}`)).json.messages.at(-1)).toEqual({
      role: 'user',
      content: 'my turn?',
    });
    expect(chat.requests).toHaveLength(0);
    // The other holder's lease is untouched.
    expect(parseLease((await store.get(keys.lease('alice', sessionId)))!.body)!.owner).toBe(
      'another-function',
    );
  });

  it('a lease left by a crashed function expires: the next continue takes it over and runs', async () => {
    const { call, create, store } = await setup([{ reply: 'recovered' }], {
      SATCHEL_CONTINUE_WAIT_MS: '0',
    });
    const sessionId = await create();
    await store.put(
      keys.lease('alice', sessionId),
      encodeLease({ owner: 'crashed-lambda', expiresAt: Date.now() - 1000 }),
      { ifNoneMatch: '*' },
    );
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'still there?' },
    });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe('recovered');
    expect(await store.get(keys.lease('alice', sessionId))).toBeNull();
  });

  it('leases are per session: a held lease on one session does not block another', async () => {
    const { call, create, store } = await setup([{ reply: 'fine' }], {
      SATCHEL_CONTINUE_WAIT_MS: '0',
    });
    const busy = await create();
    const free = await create();
    await store.put(
      keys.lease('alice', busy),
      encodeLease({ owner: 'x', expiresAt: Date.now() + 60_000 }),
      { ifNoneMatch: '*' },
    );
    expect(
      (await call('POST', `/v1/sessions/${free}/continue`, { body: { message: 'hi' } })).status,
    ).toBe(200);
  });
});

describe('continue: exactly once with Idempotency-Key', () => {
  it('a repeat returns the first answer and never calls the model again', async () => {
    const { chat, call, create } = await setup([{ reply: 'only once' }]);
    const sessionId = await create();
    const send = () =>
      call('POST', `/v1/sessions/${sessionId}/continue`, {
        body: { message: 'hello' },
        headers: { 'idempotency-key': 'cont-1' },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.json.reply).toBe('only once');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(chat.requests).toHaveLength(1);
    const stored = (await call('GET', `/v1/sessions/${sessionId}`)).json;
    expect(stored.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
    ]);
  });

  it('the repeat is answered from the bucket: another process, after later writes and without the reply in the messages', async () => {
    const { chat, call, create, another } = await setup([
      { reply: 'the first reply' },
      { reply: 'a later reply' },
    ]);
    const sessionId = await create();
    const first = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'q1' },
      headers: { 'idempotency-key': 'k-1' },
    });
    await call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'q2' } });
    const other = await another();
    const repeat = () =>
      other.call('POST', `/v1/sessions/${sessionId}/continue`, {
        body: { message: 'q1' },
        headers: { 'idempotency-key': 'k-1' },
      });
    const again = await repeat();
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.json.reply).toBe('the first reply');
    // Trim the first turn away: the repeat still answers the turn's receipt (the model is not called
    // again), without the reply, which no object holds any more.
    expect(
      (await call('POST', `/v1/sessions/${sessionId}/trim`, { body: { keep: 2 } })).status,
    ).toBe(200);
    const trimmed = await repeat();
    expect(trimmed.status).toBe(200);
    const { reply: _, ...receipt } = first.json;
    expect(trimmed.json).toEqual(receipt);
    expect(trimmed.headers.get('idempotent-replayed')).toBe('true');
    expect(chat.requests).toHaveLength(2);
  });

  it('the same key with a different message is 422', async () => {
    const { call, create } = await setup([{ reply: 'x' }]);
    const sessionId = await create();
    await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'one' },
      headers: { 'idempotency-key': 'k' },
    });
    const res = await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'two' },
      headers: { 'idempotency-key': 'k' },
    });
    expect(res.status).toBe(422);
  });

  it('a repeat after a failed turn stores nothing twice and runs the missing turn', async () => {
    const { chat, call, create } = await setup([{ status: 503 }, { reply: 'second try worked' }]);
    const sessionId = await create();
    const send = () =>
      call('POST', `/v1/sessions/${sessionId}/continue`, {
        body: { message: 'hello' },
        headers: { 'idempotency-key': 'retry-me' },
      });
    expect((await send()).status).toBe(502);
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.json.reply).toBe('second try worked');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const third = await send();
    expect(third.json).toEqual(retry.json);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect(chat.requests).toHaveLength(2);
    const stored = (await call('GET', `/v1/sessions/${sessionId}`)).json;
    expect(stored.messages).toEqual([
      sys,
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'second try worked' },
    ]);
  });

  it('the same request sent twice at once (two processes): one model turn, the same answer twice', async () => {
    const { chat, call, create, another } = await setup([{ reply: 'just one', delayMs: 200 }]);
    const other = await another();
    const sessionId = await create();
    const init = { body: { message: 'dup' }, headers: { 'idempotency-key': 'dup-1' } };
    const [a, b] = await Promise.all([
      call('POST', `/v1/sessions/${sessionId}/continue`, init),
      other.call('POST', `/v1/sessions/${sessionId}/continue`, init),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json).toEqual(b.json);
    expect(chat.requests).toHaveLength(1);
    expect((await call('GET', `/v1/sessions/${sessionId}`)).json.messages).toHaveLength(3);
  });

  it('append: a repeated key from another process is a no-op that returns the first receipt', async () => {
    const { call, create, another } = await setup([]);
    const sessionId = await create();
    const body = { messages: [{ role: 'user', content: 'once' }] };
    const first = await call('POST', `/v1/sessions/${sessionId}/messages`, {
      body,
      headers: { 'idempotency-key': 'ap-1' },
    });
    const other = await another();
    const again = await other.call('POST', `/v1/sessions/${sessionId}/messages`, {
      body,
      headers: { 'idempotency-key': 'ap-1' },
    });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await call('GET', `/v1/sessions/${sessionId}`)).json.messages).toHaveLength(2);
  });
});

describe('continue: storage failing after the message is stored (found by review)', () => {
  it('answers 503 saying the message was stored, and a retry with the key runs the turn once', async () => {
    // The lease's PUT fails: the message is stored, no turn ran. A plain 503 invited a retry that, without
    // the key, stores the message again.
    let failLease = true;
    class FailLease extends PassThrough {
      override put(key: string, body: Uint8Array, options?: PutOptions) {
        if (failLease && key.includes('/lease/'))
          return Promise.reject(new StorageUnavailableError('storage refused'));
        return this.inner.put(key, body, options);
      }
    }
    const store = new FailLease(new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-continue-'))));
    const { call, create, chat } = await setup([{ reply: 'the answer' }], {}, store);
    const id = await create();
    const headers = { 'Idempotency-Key': 'ask-1' };
    const first = await call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'what now?' },
      headers,
    });
    expect(first.status).toBe(503);
    expect(first.json.detail).toMatch(/your message was stored \(revision 2\)/);
    expect(chat.requests).toHaveLength(0);
    failLease = false;
    const again = await call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'what now?' },
      headers,
    });
    expect(again.status).toBe(200);
    expect(again.json.reply).toBe('the answer');
    const session = (await call('GET', `/v1/sessions/${id}`)).json;
    expect(
      session.messages.filter((m: { content: string }) => m.content === 'what now?'),
    ).toHaveLength(1);
  });
});

describe('continue: the turn write gives up at the contention deadline (found by review)', () => {
  it('answers 503 saying the message was stored, at which revision, and to retry with the key', async () => {
    // Process A's commit of the turn is slow; process B appends meanwhile. A's retry comes after its
    // contention deadline (1 s here, 30 s by default): the write loop's "too many concurrent writers; try
    // again" alone invited a retry that, without the key, stores the message again.
    const TOKEN = 'tok_alice_turn_0123456789';
    let hold = false;
    class SlowTurn extends PassThrough {
      override async put(key: string, body: Uint8Array, options?: PutOptions) {
        if (hold && key.startsWith('ns/alice/sessions/')) {
          hold = false;
          await new Promise((r) => setTimeout(r, 2500));
        }
        return this.inner.put(key, body, options);
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'satchel-continue-'));
    const chat = await startChatServer(() => {
      hold = true; // the model has answered; the bucket is slow to take the turn's commit
      return { reply: 'reply to A' };
    });
    servers.push(chat);
    const env = { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' };
    const config = await loadConfig({ ...env, SATCHEL_TOKENS: `alice=${TOKEN}` }, 'local');
    const objects = new SlowTurn(new LocalStore(dir));
    const pipeline = defaultPipeline({ maxSessionBytes: config.maxSessionBytes });
    const sessions = new SessionStore(objects, { pipeline, maxContentionMs: 1000 });
    const a = createApp({ config, objects, sessions, log: captureLogs(), shortLived: true });
    const b = await makeApp({ env, objects: new LocalStore(dir) });
    const call = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      a.app.fetch(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            ...headers,
          },
          body: JSON.stringify(body),
        }),
      );
    const key = { 'Idempotency-Key': 'k1' };
    const id = (
      (await (await call('/v1/sessions', { task: 't', messages: [sys] })).json()) as { id: string }
    ).id;
    const first = call(`/v1/sessions/${id}/continue`, { message: 'question A' }, key);
    await expect.poll(() => chat.requests.length).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    const note = { messages: [{ role: 'user', content: 'a note from the phone' }] };
    expect((await b.call('POST', `/v1/sessions/${id}/messages`, { body: note })).status).toBe(200);
    const res = await first;
    expect(res.status).toBe(503);
    const detail = ((await res.json()) as { detail: string }).detail;
    expect(detail).toMatch(
      /^too many concurrent writers on this session; your message was stored \(revision 2\)/,
    );
    expect(detail).toMatch(/Retry with the same Idempotency-Key/);
    const stored = (await b.call('GET', `/v1/sessions/${id}`)).json;
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual([
      sys.content,
      'question A',
      'a note from the phone',
    ]);
    // The retry it asks for: the turn runs once, the message is not stored again.
    chat.script({ reply: 'reply to A, again' });
    const again = await call(`/v1/sessions/${id}/continue`, { message: 'question A' }, key);
    expect(again.status).toBe(200);
    const after = (await b.call('GET', `/v1/sessions/${id}`)).json;
    // The question moves to just before its reply (review s60e).
    expect(after.messages.map((m: { content: string }) => m.content)).toEqual([
      sys.content,
      'a note from the phone',
      'question A',
      'reply to A, again',
    ]);
  });
});

describe('continue: model and provider', () => {
  it('a session without a model gets the configured one and the provider (the URL host, or SATCHEL_MODEL_PROVIDER)', async () => {
    const { call, create } = await setup([{ reply: 'a' }]);
    const sessionId = await create();
    await call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'hi' } });
    expect((await call('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({
      model: 'test-model',
      provider: '127.0.0.1',
    });

    const named = await setup([{ reply: 'b' }], { SATCHEL_MODEL_PROVIDER: 'local-vllm' });
    const id2 = await named.create();
    await named.call('POST', `/v1/sessions/${id2}/continue`, { body: { message: 'hi' } });
    expect((await named.call('GET', `/v1/sessions/${id2}`)).json).toMatchObject({
      model: 'test-model',
      provider: 'local-vllm',
    });
    expect((await named.call('GET', '/v1/sessions?limit=1')).json.sessions[0]).toMatchObject({
      model: 'test-model',
      provider: 'local-vllm',
    });
  });

  it("a session's own model and provider are used and kept, even when the server's default changes", async () => {
    const { chat, call, create, another } = await setup([{ reply: 'one' }, { reply: 'two' }]);
    const sessionId = await create({ model: 'session-model-7b', provider: 'acme' });
    await call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'hi' } });
    const other = await another({ SATCHEL_MODEL: 'a-newer-default' });
    await other.call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'again' } });
    expect(chat.requests.map((r) => r.body.model)).toEqual([
      'session-model-7b',
      'session-model-7b',
    ]);
    expect((await call('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({
      model: 'session-model-7b',
      provider: 'acme',
    });
  });

  it('the model recorded by a first turn is restored on the next continue', async () => {
    const { chat, call, create, another } = await setup([{ reply: 'one' }, { reply: 'two' }]);
    const sessionId = await create();
    await call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'hi' } });
    const other = await another({ SATCHEL_MODEL: 'changed-default' });
    await other.call('POST', `/v1/sessions/${sessionId}/continue`, { body: { message: 'again' } });
    expect(chat.requests.map((r) => r.body.model)).toEqual(['test-model', 'test-model']);
  });
});

describe('continue: context budget', () => {
  it('the model gets the system message and the newest messages within SATCHEL_MODEL_CONTEXT_BYTES', async () => {
    const { chat, call, create } = await setup([{ reply: 'ok' }], {
      SATCHEL_MODEL_CONTEXT_BYTES: '2048',
    });
    const history = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} `.padEnd(100, '.'),
    }));
    const sessionId = await create({ messages: [sys, ...history] });
    await call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'the newest question' },
    });
    const sent = chat.requests[0]!.body.messages;
    expect(sent[0]).toEqual(sys);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'the newest question' });
    expect(sent.length).toBeLessThan(history.length);
    expect(JSON.stringify(sent).length).toBeLessThanOrEqual(2048 + sent.length);
    expect(sent.at(-2)!.content).toBe(history.at(-1)!.content);
  });
});

describe('continue: a large session in a process that does not hold it', () => {
  it('stores the message and the turn on the delta alone, and the model still sees the whole context', async () => {
    const { chat, call, create, another } = await setup([{ reply: 'the answer is in message 0' }]);
    // Over 256 KiB: stored as base and delta after its next write.
    const history = Array.from({ length: 300 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} `.padEnd(1000, '.'),
    }));
    const sessionId = await create({ messages: [sys, ...history] });
    await call('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { messages: [{ role: 'user', content: 'split now' }] },
    });
    // A new process: its writes are partial copies, its model context a whole read.
    const other = await another({ SATCHEL_MODEL_CONTEXT_BYTES: String(1024 * 1024) });
    const res = await other.call('POST', `/v1/sessions/${sessionId}/continue`, {
      body: { message: 'where is the answer?' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model_turn: true, reply: 'the answer is in message 0' });
    expect(res.json.turns).toBe(150 + 1 + 1); // the history's user messages, "split now", the question
    const sent = chat.requests[0]!.body.messages;
    expect(sent[1]!.content).toBe(history[0]!.content);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'where is the answer?' });
    const got = (await (await another()).call('GET', `/v1/sessions/${sessionId}`)).json;
    expect(got.messages).toHaveLength(1 + 300 + 1 + 2);
    expect(got.messages.slice(-2)).toEqual([
      { role: 'user', content: 'where is the answer?' },
      { role: 'assistant', content: 'the answer is in message 0' },
    ]);
    expect(got.messages.every((m: { content?: unknown }) => typeof m.content === 'string')).toBe(
      true,
    );
  });
});

function pick(o: Record<string, unknown>, names: string[]) {
  return Object.fromEntries(names.map((n) => [n, o[n]]));
}
