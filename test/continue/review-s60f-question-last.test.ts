// Review s60f of cab4e75: appendTurn's questionLast moved the newest message equal to the question, which may be
// another writer's acknowledged append with the same text: that writer's exchange was split. Only a copy
// at or before where the continue stored its question is moved now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let chat: ChatServer;
let server: RunningServer;

const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const stored = async (id: string) => {
  const { messages } = (await (await req('GET', `/v1/sessions/${id}`)).json()) as {
    messages: { role: string; content: string; name?: string }[];
  };
  return messages.map((m) => `${m.role}${m.name ? ` (${m.name})` : ''}: ${m.content}`);
};

beforeAll(async () => {
  chat = await startChatServer(
    // Turn 1 (session s1): while the model runs, another agent appends its own exchange, which
    // happens to start with the same words.
    async () => {
      const res = await req('POST', '/v1/sessions/s1/messages', {
        messages: [
          { role: 'user', content: 'continue', name: 'agent-2' },
          { role: 'assistant', content: 'other agent: step 2 done' },
        ],
      });
      expect(res.status).toBe(200);
      return { reply: 'answer to A' };
    },
  );
  server = await startSatchelServer({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
});
afterAll(async () => {
  await server?.close();
  await chat?.close();
});

describe('a turn moves only its own unanswered question (questionLast)', () => {
  it("leaves another writer's exchange with the same text together", async () => {
    expect((await req('POST', '/v1/sessions', { id: 's1', task: 't' })).status).toBe(201);
    const before = await req('POST', '/v1/sessions/s1/continue', { message: 'continue' });
    expect(before.status).toBe(200);
    const after = await stored('s1');
    // The other agent's append: its user message, then its assistant message, adjacent and in order.
    expect(after).toEqual([
      'user (agent-2): continue',
      'assistant: other agent: step 2 done',
      'user: continue',
      'assistant: answer to A',
    ]);
  });
});
