import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import {
  deepseekThinking as deepseek,
  startChatServer,
  type ChatServer,
  type ReceivedRequest,
  type SentMessage as Sent,
} from '../support/chat-server.js';

// DeepSeek's thinking mode (on by default since V4) answers 400 "Missing reasoning_content field in the assistant
// message at message index N" (or "The reasoning_content in the thinking mode must be passed back to the API")
// to a request whose assistant messages lack reasoning_content once tools were called; continue sent none, so
// the round after a session_search call failed: 502 (review s64e, suspected then). Groq (400 "property
// 'reasoning_content' is unsupported") and Mistral (422 extra_forbidden) refuse the field, so it is sent only
// to a model that asks for it: the round again with each assistant message's, "" where none was stored
// (review s65h: sending it always made every continue of such a session fail there).
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const sentOf = (r: ReceivedRequest) => r.body.messages as Sent[];

/** Groq's check: no assistant message may carry reasoning_content. */
const groq = (answer: unknown) => (request: ReceivedRequest) => {
  const at = sentOf(request).findIndex((m) => 'reasoning_content' in m);
  if (at >= 0)
    return {
      status: 400,
      body: {
        error: {
          message:
            `'messages.${at}' : for 'role:assistant' the following must be satisfied` +
            `[('messages.${at}' : property 'reasoning_content' is unsupported)]`,
        },
      },
    };
  return { status: 200, body: { choices: [{ message: answer }] } };
};

const CALL = {
  role: 'assistant',
  content: '',
  reasoning_content: 'The user asks about an earlier decision; I should search the sessions.',
  tool_calls: [
    {
      id: 'c1',
      type: 'function',
      function: { name: 'session_search', arguments: '{"action":"list"}' },
    },
  ],
};
const ANSWER = (text: string) => ({
  role: 'assistant',
  content: text,
  reasoning_content: `Thinking: ${text}`,
});

async function session(chat: ChatServer, messages: unknown[] = []) {
  servers.push(chat);
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 'cache', messages } })).json
    .id as string;
  const cont = (message: string) =>
    app.call('POST', `/v1/sessions/${id}/continue`, { body: { message } });
  return { app, cont };
}

describe("a thinking model's reasoning_content", () => {
  it('DeepSeek: sent back when the model asks for it, within the turn and in later turns', async () => {
    const step1 = deepseek(CALL);
    const step2 = deepseek(ANSWER('We chose LRU.'));
    const step3 = deepseek(ANSWER('Yes, still LRU.'));
    const chat = await startChatServer(step1, step2, step2, step3, step3);
    const { cont } = await session(chat);
    const first = await cont('Which cache?');
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.reply).toBe('We chose LRU.');
    const second = await cont('Still?');
    expect(second.status, JSON.stringify(second.json)).toBe(200);
    // Each round after the call: refused without it, then sent with the stored reasoning of each message.
    expect(chat.requests.map((r) => sentOf(r).some((m) => 'reasoning_content' in m))).toEqual([
      false,
      false,
      true,
      false,
      true,
    ]);
    const last = sentOf(chat.requests[4]!).filter((m) => m.role === 'assistant');
    expect(last.map((m) => m.reasoning_content)).toEqual([
      CALL.reasoning_content,
      'Thinking: We chose LRU.',
    ]);
  });

  it('DeepSeek: a tool call stored without reasoning (a client wrote it) gets "" (review s65h)', async () => {
    const stored = [
      { role: 'user', content: 'Find the cache decision.' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'x1', type: 'function', function: { name: 'grep', arguments: '{}' } }],
      },
      { role: 'tool', content: 'LRU', tool_call_id: 'x1' },
    ];
    const step = deepseek(ANSWER('LRU.'));
    const chat = await startChatServer(step, step);
    const { cont } = await session(chat, stored);
    const res = await cont('And why?');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(sentOf(chat.requests[1]!).find((m) => m.tool_calls?.length)?.reasoning_content).toBe('');
  });

  it('Groq: a stored reasoning_content beside tool calls is never sent (review s65h)', async () => {
    const stored = [
      { role: 'user', content: 'Which cache?' },
      CALL,
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
    ];
    const chat = await startChatServer(groq(ANSWER('LRU.')));
    const { cont } = await session(chat, stored);
    const res = await cont('And why?');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(chat.requests).toHaveLength(1);
  });

  // Review s65i: an error that quotes the user's text naming the field is no request for it.
  it('a 400 quoting text that names reasoning_content is not sent again with it', async () => {
    const chat = await startChatServer({
      status: 400,
      body: {
        error: {
          message: 'messages.0.content: string too long: "explain reasoning_content to me …"',
        },
      },
    });
    const { cont } = await session(chat);
    const res = await cont('explain reasoning_content to me');
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/answered HTTP 400/);
    expect(chat.requests).toHaveLength(1);
  });

  // Review s65j: a gateway's long prefix pushed DeepSeek's words past the 200 characters of the log's `said`.
  it('DeepSeek behind a gateway whose error prefix is long: still asked for', async () => {
    const step = (r: ReceivedRequest) => {
      const answer = deepseek(ANSWER('LRU.'))(r);
      if (answer.status === 200) return answer;
      const message = `Provider returned error (upstream ${'x'.repeat(220)}): ${answer.body.error!.message}`;
      return { status: 400, body: { error: { message } } };
    };
    const stored = [
      { role: 'user', content: 'Which cache?' },
      CALL,
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
    ];
    const chat = await startChatServer(step, step);
    const { cont } = await session(chat, stored);
    const res = await cont('And why?');
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(chat.requests).toHaveLength(2);
  });
});
