import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type ReceivedRequest } from '../support/chat-server.js';

// DeepSeek's thinking mode (on by default since V4) answers 400 "The reasoning_content in the thinking mode must
// be passed back to the API" to a request holding an assistant message with tool calls but without the
// reasoning_content that came with them, in that turn's later rounds and in every later request. continue
// sent no reasoning_content at all, so the round after a session_search call failed: 502 (review s64e,
// suspected then). A reasoning beside a plain answer is not sent (Groq refuses the field).
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Sent = ReceivedRequest['body']['messages'][number] & { reasoning_content?: string };

/** DeepSeek's check: each assistant message with tool calls carries its reasoning_content. */
const deepseek = (answer: unknown) => (request: ReceivedRequest) => {
  const missing = (request.body.messages as Sent[]).findIndex(
    (m) => m.role === 'assistant' && m.tool_calls?.length && !m.reasoning_content,
  );
  if (missing >= 0)
    return {
      status: 400,
      body: {
        error: {
          message: `Missing reasoning_content field in the assistant message at message index ${missing}`,
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
  reasoning_content: `Thinking about ${text}`,
});

describe("a thinking model's reasoning before its tool calls", () => {
  it("goes back with the calls, within the turn and in later turns; a plain answer's does not", async () => {
    const chat = await startChatServer(
      deepseek(CALL),
      deepseek(ANSWER('We chose LRU.')),
      deepseek(ANSWER('Yes, still LRU.')),
    );
    servers.push(chat);
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'deepseek-v4-flash' },
    });
    const id = (await app.call('POST', '/v1/sessions', { body: { task: 'cache' } })).json
      .id as string;
    const first = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'Which cache?' },
    });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.reply).toBe('We chose LRU.');
    const second = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'Still?' },
    });
    expect(second.status, JSON.stringify(second.json)).toBe(200);
    const last = chat.requests[2]!.body.messages as Sent[];
    expect(last.filter((m) => m.reasoning_content).map((m) => m.reasoning_content)).toEqual([
      CALL.reasoning_content,
    ]);
  });
});
