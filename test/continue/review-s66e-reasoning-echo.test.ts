import { afterEach, expect, it } from 'vitest';
import { continueOnce, makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type ReceivedRequest } from '../support/chat-server.js';

// Review s66e F2 (the residual of s65i F7): a validation error that echoes the user's own words "reasoning_content
// is required" (vLLM, LiteLLM and other FastAPI servers give the input back) was read as the model asking for the
// field: the round went again with it, and the error logged was the provider's refusal of the field.
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it("an error echoing the request's own text is no ask for reasoning_content", async () => {
  const question =
    'My parser says reasoning_content is required for "DeepSeek";\n' + 'x'.repeat(50);
  // A Groq-like endpoint (it refuses reasoning_content) whose first answer echoes the input, JSON-escaped.
  const step = (r: ReceivedRequest) => {
    if (r.body.messages.some((m) => 'reasoning_content' in m))
      return {
        status: 400,
        body: { error: { message: "property 'reasoning_content' is unsupported" } },
      };
    const input = r.body.messages.at(-1)!.content;
    return {
      status: 400,
      body: { detail: [{ type: 'string_too_long', msg: 'String should have at most 40', input }] },
    };
  };
  const chat = await startChatServer(step, step);
  servers.push(chat);
  const { app, res } = await continueOnce(chat.url, question);
  expect(res.status).toBe(502);
  expect(chat.requests).toHaveLength(1);
  const logged = app.logs.records.filter((l: { msg?: string }) => l.msg === 'model turn failed');
  expect(JSON.stringify(logged)).toContain('string_too_long');
});

it("DeepSeek's ask is still seen when the user's message holds part of its words", async () => {
  const words = 'Missing reasoning_content field';
  const step = (r: ReceivedRequest) => {
    const messages = r.body.messages as { role: string; reasoning_content?: string }[];
    if (messages.some((m) => m.role === 'assistant' && m.reasoning_content === undefined))
      return {
        status: 400,
        body: { error: { message: `${words} in the assistant message at message index 1.` } },
      };
    return { status: 200, body: { choices: [{ message: { role: 'assistant', content: 'ok' } }] } };
  };
  const chat = await startChatServer(step, step);
  servers.push(chat);
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
  const messages = [
    { role: 'user', content: words },
    { role: 'assistant', content: 'Which API says that?' },
  ];
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 't', messages } })).json.id;
  const res = await app.call('POST', `/v1/sessions/${id}/continue`, { body: { message: words } });
  expect(res.status, res.text).toBe(200);
  expect(chat.requests).toHaveLength(2);
});
