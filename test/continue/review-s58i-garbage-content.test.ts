import { afterEach, describe, expect, it } from 'vitest';
import { parseCompletion } from '../../lib/continue/model.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// A chat completion's message content is a string, an array of parts, or null (with tool calls or a
// refusal). Anything else is not a chat completion: docs/api.md says such an answer is a 502 "your message
// was stored". Until 2026-12-06 (review s58i) a content object or number was read as an empty reply,
// stored as an assistant message "" and answered 200 `reply: ""` (and a repeat with the same key replayed
// that "" without calling the model).
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('a model answer whose content is neither text nor parts', () => {
  for (const content of [{ text: 'the cache is cold' }, 42, true]) {
    it(`parseCompletion refuses content ${JSON.stringify(content)} as invalid`, () => {
      const body = JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] });
      expect(() => parseCompletion(body)).toThrow(expect.objectContaining({ kind: 'invalid' }));
    });
  }

  it('a continue answers 502 (message stored, no reply stored), not 200 with an empty reply', async () => {
    const garbage = () => ({
      status: 200,
      body: { choices: [{ message: { role: 'assistant', content: { text: 'hi' } } }] },
    });
    const chat = await startChatServer(garbage, garbage);
    servers.push(chat);
    const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
    const id = (
      await app.call('POST', '/v1/sessions', {
        body: { task: 't', messages: [{ role: 'system', content: 'sys' }] },
      })
    ).json.id as string;
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'why is the cache cold?' },
      headers: { 'idempotency-key': 'garbage-content-1' },
    });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/your message was stored \(revision 2\)/);
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json.messages;
    expect(stored.at(-1)).toEqual({ role: 'user', content: 'why is the cache cold?' });
  });
});
