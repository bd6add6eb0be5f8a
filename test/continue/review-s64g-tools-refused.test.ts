import { afterEach, describe, expect, it } from 'vitest';
import { chatClient } from '../../lib/continue/model.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type ReceivedRequest } from '../support/chat-server.js';

// Review s64g #1: a default `vllm serve` (no --enable-auto-tool-choice) and an Ollama model without tool
// support refuse any request that offers `tools` with a 400, and continue offered session_search in every
// round: every turn answered 502 "HTTP 400", and the model's own message was in neither the answer nor the
// log. Now such a round runs once more without tools (the turn then has no session_search); nothing is
// remembered (review s64j: a one-off refusal, Groq's tool_use_failed, took session_search away for good), so
// each turn asks again; a 4xx that fails logs the model's answer (its first 200 characters, without the key).
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const VLLM = {
  object: 'error',
  message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
  type: 'BadRequestError',
  param: null,
  code: 400,
};
const OLLAMA = {
  error: {
    message: 'registry.ollama.ai/library/gemma:2b:latest does not support tools',
    type: 'api_error',
    param: null,
    code: null,
  },
};

/** A step that refuses a request offering tools with `refusal`, and answers one without tools. */
const refusesTools = (refusal: unknown) => (request: ReceivedRequest) =>
  request.body.tools?.length
    ? { status: 400, body: refusal }
    : { reply: `reply ${request.body.messages.length}` };

async function setup(steps: ((r: ReceivedRequest) => unknown)[], key?: string) {
  const chat = await startChatServer(...(steps as never[]));
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'gemma:2b',
      ...(key ? { SATCHEL_MODEL_KEY: key } : {}),
    },
  });
  const id = (
    await app.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'system', content: 'You are careful.' }] },
    })
  ).json.id as string;
  const cont = (message: string, k: string) =>
    app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message },
      headers: { 'idempotency-key': k },
    });
  return { chat, app, cont };
}

describe('a model server that refuses tools', () => {
  for (const [name, refusal] of [
    ['vLLM without --enable-auto-tool-choice', VLLM],
    ['an Ollama model without tool support', OLLAMA],
  ] as const) {
    it(`${name}: the round runs again without tools, and each later turn asks again`, async () => {
      const step = refusesTools(refusal);
      const { chat, cont } = await setup([step, step, step, step]);
      const first = await cont('Use UTC in the test.', 'tools-refused-1');
      expect(first.status).toBe(200);
      expect(first.json).toMatchObject({ model_turn: true, reply: 'reply 2' });
      expect(chat.requests.map((r) => r.body.tools?.length ?? 0)).toEqual([1, 0]);
      // Without tools there is no tool_choice either (OpenAI refuses one without tools).
      expect('tools' in chat.requests[1]!.body).toBe(false);
      expect('tool_choice' in chat.requests[1]!.body).toBe(false);
      const second = await cont('And for 29 February?', 'tools-refused-2');
      expect(second.json).toMatchObject({ model_turn: true, reply: 'reply 4' });
      expect(chat.requests.map((r) => r.body.tools?.length ?? 0)).toEqual([1, 0, 1, 0]);
    });
  }

  it('a 400 not about tools is not sent again without them: 502, and the log has its message', async () => {
    const long = `This model's maximum context length is 8 tokens. ${'x'.repeat(300)}`;
    const { chat, app, cont } = await setup([
      () => ({ status: 400, body: { error: { message: long } } }),
      () => ({ status: 400, body: { error: { message: long } } }),
    ]);
    const res = await cont('hello', 'plain-400-1');
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(
      /^the model endpoint answered HTTP 400; your message was stored/,
    );
    expect(chat.requests).toHaveLength(1);
    expect(chat.requests[0]!.body.tools).toHaveLength(1);
    const failed = app.logs.find('model turn failed', 'warn');
    expect(failed).toHaveLength(1);
    const said = JSON.stringify({ error: { message: long } }).slice(0, 200);
    expect(failed[0]).toMatchObject({ kind: 'status', status: 400, said });
    // The next turn still offers the tool.
    await cont('hello again', 'plain-400-2');
    expect(chat.requests[1]!.body.tools).toHaveLength(1);
  });

  // Review s65b: a 429 naming tools (a rate limit per tool-use tier, say) was sent again at once without them.
  it('a 429 that names tools is not sent again at once without them', async () => {
    const chat = await startChatServer();
    servers.push(chat);
    const chatFn = chatClient({ url: chat.url });
    chat.script({
      status: 429,
      body: { error: { message: 'Rate limit reached for tool calls; try again in 20s' } },
    });
    const request = {
      model: 'm',
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [{ type: 'function' }],
    };
    await expect(chatFn(request, new AbortController().signal)).rejects.toMatchObject({
      status: 429,
    });
    expect(chat.requests).toHaveLength(1);
  });

  it("a model's 4xx that echoes the key: the log has its message without the key", async () => {
    const key = 'lm-studio'; // a local server's any-value key: no key shape for the redactor to see
    const { app, cont } = await setup(
      [() => ({ status: 401, body: { error: { message: `the key ${key} is not valid here` } } })],
      key,
    );
    expect((await cont('hello', 'key-echo-1')).status).toBe(502);
    const [failed] = app.logs.find('model turn failed', 'warn');
    const said = JSON.stringify({ error: { message: 'the key  is not valid here' } });
    expect(failed).toMatchObject({ status: 401, said });
    expect(JSON.stringify(app.logs.records)).not.toContain(key);
  });

  it("a one-off refusal naming tools (Groq's tool_use_failed) leaves the next round its tools (review s64j)", async () => {
    const chat = await startChatServer();
    servers.push(chat);
    const chatFn = chatClient({ url: chat.url });
    const signal = new AbortController().signal;
    const request = {
      model: 'm',
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [{ type: 'function' }],
    };
    chat.script(
      {
        status: 400,
        body: { error: { message: 'Failed to call a function', code: 'tool_use_failed' } },
      },
      { reply: 'without' },
      { reply: 'with tools' },
    );
    expect((await chatFn(request, signal)).content).toBe('without');
    expect((await chatFn(request, signal)).content).toBe('with tools');
    expect(chat.requests.map((r) => r.body.tools?.length ?? 0)).toEqual([1, 0, 1]);
  });
});
