import { afterEach, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { continueOnce, makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type ReceivedRequest } from '../support/chat-server.js';

// Review s66l: 3bd1940 cut each request text (as a JSON string) out of a model's error answer before looking for
// an ask for reasoning_content: quadratic in the context (41 s at 1 MiB, the event loop held), a user message that
// IS DeepSeek's sentence hid its real ask (every later continue 502), and an echo spelled as Python's json.dumps
// writes it (\u escapes) still counted. The ask is now looked for in the provider's own message fields only.
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const ASK = 'The reasoning_content in the thinking mode must be passed back to the API.';

type Sent = { role: string; reasoning_content?: string; tool_calls?: unknown[] };
const deepseek = (r: ReceivedRequest) => {
  const messages = r.body.messages as Sent[];
  const called = messages.some((m) => m.tool_calls?.length);
  if (called && messages.some((m) => m.role === 'assistant' && m.reasoning_content === undefined))
    return { status: 400, body: { error: { message: ASK, type: 'invalid_request_error' } } };
  return {
    status: 200,
    body: { choices: [{ message: { role: 'assistant', content: 'ok', reasoning_content: 'r' } }] },
  };
};

it("a user message that is exactly DeepSeek's sentence is no hiding place for its real ask", async () => {
  const chat = await startChatServer(...Array.from({ length: 8 }, () => deepseek));
  servers.push(chat);
  const app = await makeApp({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'deepseek-reasoner' },
  });
  const messages = [
    { role: 'user', content: 'Which cache?' },
    {
      role: 'assistant',
      content: '',
      reasoning_content: 'search first',
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'session_search', arguments: '{"action":"list"}' },
        },
      ],
    },
    { role: 'tool', content: '{}', tool_call_id: 'c1' },
    { role: 'assistant', content: 'LRU.', reasoning_content: 'done' },
  ];
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 't', messages } })).json.id;
  // Control: an ordinary message works (the padded round).
  const ok = await app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: 'and now?' },
  });
  // The user pastes the error their own app got, alone, as the question.
  const pasted = await app.call('POST', `/v1/sessions/${id}/continue`, { body: { message: ASK } });
  const after = await app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: 'thanks, anything else?' },
  });
  expect(ok.status).toBe(200);
  expect(pasted.status, pasted.text).toBe(200);
  expect(after.status, after.text).toBe(200);
});

const raw: Server[] = [];
afterEach(async () => {
  await Promise.all(raw.splice(0).map((s) => new Promise((r) => s.close(r))));
});
type Req = { messages: { role: string; content: string }[] };
const requests: Req[] = [];
async function rawServer(step: (r: Req) => { status: number; raw: string }): Promise<string> {
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const body = JSON.parse(b) as Req;
      requests.push(body);
      const out = step(body);
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(out.raw);
    });
  });
  raw.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Python's json.dumps(ensure_ascii=True) */
const pyDumps = (v: unknown) =>
  JSON.stringify(v).replace(
    /[\u007f-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );

it("an echo in Python's ASCII spelling is no ask for reasoning_content", async () => {
  const question = 'Grüße! Mein Parser sagt reasoning_content is required für DeepSeek; warum?';
  const step = (r: Req) => {
    if (r.messages.some((m) => 'reasoning_content' in m))
      return {
        status: 400,
        raw: JSON.stringify({ error: { message: "property 'reasoning_content' is unsupported" } }),
      };
    const input = r.messages.at(-1)!.content;
    // raw body: a FastAPI/Flask app using json.dumps defaults
    return {
      status: 400,
      raw: pyDumps({
        detail: [
          { type: 'string_too_long', msg: 'String should have at most 40 characters', input },
        ],
      }),
    };
  };
  const url = await rawServer(step);
  const { app, res } = await continueOnce(url, question);
  const logged = app.logs.records.filter((l: { msg?: string }) => l.msg === 'model turn failed');
  expect(res.status).toBe(502);
  expect(requests).toHaveLength(1);
  expect(JSON.stringify(logged)).toContain('string_too_long');
});
