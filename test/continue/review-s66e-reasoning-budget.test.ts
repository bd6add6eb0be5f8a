import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import {
  deepseekThinking as deepseek,
  startChatServer,
  type ChatServer,
  type ReceivedRequest,
  type SentMessage as Sent,
} from '../support/chat-server.js';

// Review s66e F1: the round sent again with reasoning_content (DeepSeek's thinking mode asks for it once tools were
// called) added every kept assistant message's stored reasoning after the context was fitted without it: with
// SATCHEL_MODEL_CONTEXT_BYTES=16384 a 15,654 B request became 192,197 B. DeepSeek wants the reasoning of user turns
// that called tools back (its thinking-mode guide), but its check is only that the field is there: "" will do.
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const sentOf = (r: ReceivedRequest) => r.body.messages as Sent[];
const bytesOf = (r: ReceivedRequest) => Buffer.byteLength(JSON.stringify(r.body.messages));

const call = (id: string, reasoning: string) => ({
  role: 'assistant',
  content: '',
  reasoning_content: reasoning,
  tool_calls: [
    { id, type: 'function', function: { name: 'session_search', arguments: '{"action":"list"}' } },
  ],
});
const ANSWER = { role: 'assistant', content: 'ok', reasoning_content: 'r' };

async function continueWith(chat: ChatServer, messages: unknown[], budget: number) {
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'm',
      SATCHEL_MODEL_CONTEXT_BYTES: String(budget),
    },
  });
  const created = await app.call('POST', '/v1/sessions', { body: { task: 't', messages } });
  expect(created.status, created.text).toBe(201);
  return app.call('POST', `/v1/sessions/${created.json.id}/continue`, {
    body: { message: 'next?' },
  });
}

describe('the round sent again with reasoning_content (review s66e F1)', () => {
  it('stays within SATCHEL_MODEL_CONTEXT_BYTES, but for the "" each assistant message gets', async () => {
    const BUDGET = 16_384;
    // What a DeepSeek session becomes through continue: one tool call, then 40 turns of ~4 KB reasoning each.
    const messages: unknown[] = [
      { role: 'user', content: 'start' },
      call('c1', 'think '.repeat(600)),
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
    ];
    for (let i = 0; i < 40; i++) {
      messages.push({ role: 'user', content: `question ${i} ` + 'q'.repeat(150) });
      messages.push({
        role: 'assistant',
        content: `answer ${i} ` + 'a'.repeat(150),
        reasoning_content: `thought ${i} `.repeat(400),
      });
    }
    const chat = await startChatServer(deepseek(ANSWER), deepseek(ANSWER));
    const res = await continueWith(chat, messages, BUDGET);
    expect(res.status, res.text).toBe(200);
    expect(chat.requests).toHaveLength(2);
    const [first, padded] = chat.requests as [ReceivedRequest, ReceivedRequest];
    expect(bytesOf(first)).toBeLessThanOrEqual(BUDGET);
    const assistants = sentOf(padded).filter((m) => m.role === 'assistant');
    expect(assistants.every((m) => typeof m.reasoning_content === 'string')).toBe(true);
    // Was 192,197 B: every stored reasoning on top of the fitted request.
    const blank = Buffer.byteLength(',"reasoning_content":""');
    expect(bytesOf(padded)).toBeLessThanOrEqual(BUDGET + blank * assistants.length);
  });

  it("with room, sends this turn's tool loop's reasoning and every older turn's", async () => {
    const stored = [
      { role: 'user', content: 'Which cache?' },
      call('c1', 'OLD TOOL TURN'),
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
      { role: 'assistant', content: 'LRU.', reasoning_content: 'OLD TOOL TURN ANSWER' },
      { role: 'user', content: 'Thanks.' },
      { role: 'assistant', content: 'You are welcome.', reasoning_content: 'PLAIN TURN' },
    ];
    const chat = await startChatServer(
      deepseek(call('c2', 'THIS TURN')),
      deepseek(call('c2', 'THIS TURN')),
      deepseek(ANSWER),
      deepseek(ANSWER),
    );
    const res = await continueWith(chat, stored, 262_144);
    expect(res.status, res.text).toBe(200);
    expect(chat.requests).toHaveLength(4);
    const last = sentOf(chat.requests[3]!).filter((m) => m.role === 'assistant');
    // DeepSeek wants a tool-calling turn's reasoning back in every later request (its thinking-mode guide); with
    // tools offered, its template keeps every turn's.
    expect(last.map((m) => m.reasoning_content)).toEqual([
      'OLD TOOL TURN',
      'OLD TOOL TURN ANSWER',
      'PLAIN TURN',
      'THIS TURN',
    ]);
  });

  it('with little room left, the newest tool loop\'s reasoning goes first, older ones get ""', async () => {
    const stored = [
      { role: 'user', content: 'Which cache?' },
      call('c1', 'old '.repeat(1000)),
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
      { role: 'assistant', content: 'LRU.' },
    ];
    const chat = await startChatServer(
      deepseek(call('c2', 'new '.repeat(200))),
      deepseek(call('c2', 'new '.repeat(200))),
      deepseek(ANSWER),
      deepseek(ANSWER),
    );
    const BUDGET = 3000;
    const res = await continueWith(chat, stored, BUDGET);
    expect(res.status, res.text).toBe(200);
    const padded = chat.requests[3]!;
    const last = sentOf(padded).filter((m) => m.role === 'assistant');
    expect(last.map((m) => m.reasoning_content)).toEqual(['', '', 'new '.repeat(200)]);
    expect(bytesOf(padded)).toBeLessThanOrEqual(BUDGET);
  });
});
