// A continue whose user message is stored by a write that drops older groups under the cap, and whose
// reply the cap then cannot hold: the 413 said the message was stored, but not that storing it removed
// two acknowledged message groups, and that write's receipt (dropped_groups: 2) reached nobody (review
// s54c; until 2026-12-06). Nothing acknowledged is dropped without the answer saying so.
import { afterEach, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { makeApp } from '../http/helpers.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it('a continue 413 (reply over the cap) tells the groups its stored message dropped', async () => {
  const chat = await startChatServer({ reply: 'r'.repeat(7000) });
  servers.push(chat);
  const app = await makeApp({
    env: {
      SATCHEL_MODEL_URL: chat.url,
      SATCHEL_MODEL: 'm',
      SATCHEL_MODEL_KEY: 'sk-test-model-key-0123456789abcdef',
      SATCHEL_MAX_SESSION_BYTES: '6000',
    },
  });
  const older = [1, 2, 3, 4].map((i) => ({ role: 'assistant', content: String(i).repeat(1200) }));
  const made = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'c',
      task: 't',
      messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'u' }, ...older],
    },
  });
  expect(made.status).toBe(201);
  const res = await app.call('POST', '/v1/sessions/c/continue', {
    body: { message: 'm'.repeat(2500) },
  });
  expect(res.status).toBe(413);
  expect(res.json.detail).toMatch(
    /your message was stored \(revision 2; the size cap removed 2 older/,
  );
  const stored = (await app.call('GET', '/v1/sessions/c')).json;
  // Storing the message removed two of the older groups (the marker counts them) ...
  expect(stored.messages[2].content).toMatch(/^\[satchel\] 2 message groups were removed/);
  // ... and the answer says so.
  expect(res.json.detail).toMatch(/2 older message groups/);
  await app.sessions.settled();
});
