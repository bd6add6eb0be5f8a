// Review s67d: session_search refused JSON null for its optional fields (query, id, limit), both over HTTP (400)
// and inside continue's model turn ({"error"} as the tool result), where OpenAI strict-mode tools and
// many open models send null for every optional parameter they do not use.
import { afterAll, expect, it } from 'vitest';
import { startChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function post(server: RunningServer, path: string, body: unknown) {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

it('POST /v1/session_search with null optional fields answers as without them', async () => {
  const server = await startSatchelServer();
  servers.push(server);
  await post(server, '/v1/sessions', { id: 'n1', task: 'leap day checkout', messages: [] });
  const plain = await post(server, '/v1/session_search', { action: 'list' });
  expect(plain.status).toBe(200);
  expect(plain.json.sessions.map((s: any) => s.id)).toEqual(['n1']);
  // The same call as an OpenAI strict-mode tool call sends it: every property present, unused ones null.
  const nulls = await post(server, '/v1/session_search', {
    action: 'list',
    query: null,
    id: null,
    limit: null,
  });
  expect(nulls.status).toBe(200); // was 400 "query: Invalid input: expected string, received null; …"
});

it("continue's model turn: a session_search call with null optional fields gets its results", async () => {
  const chat = await startChatServer(
    {
      toolCalls: [
        {
          name: 'session_search',
          arguments: { action: 'find', query: 'leap', id: null, limit: null },
        },
      ],
    },
    { reply: 'done' },
  );
  servers.push(chat);
  const server = await startSatchelServer({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' },
  });
  servers.push(server);
  await post(server, '/v1/sessions', { id: 'n1', task: 'leap day checkout', messages: [] });
  const r = await post(server, '/v1/sessions/n1/continue', {
    message: 'what did we do about leap days?',
  });
  expect(r.status).toBe(200);
  const toolResult = chat.requests[1]!.body.messages.find((m) => m.role === 'tool')!;
  expect(JSON.parse(toolResult.content!)).toHaveProperty('sessions'); // was {"error":"session_search takes …"}
});
