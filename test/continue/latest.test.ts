import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

// `POST /v1/sessions/latest/continue` with an Idempotency-Key: a repeat goes to the session the first
// request chose, even when another session has become the latest since (the first answer was lost).
const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('continue on latest with Idempotency-Key', () => {
  for (const withModel of [false, true]) {
    it(`a repeat after latest moved on is answered by the first session, and stores nothing (${withModel ? 'with' : 'without'} a model)`, async () => {
      const chat = withModel ? await startChatServer({ reply: 'first and only' }) : undefined;
      if (chat) servers.push(chat);
      const app = await makeApp({
        env: chat ? { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } : {},
      });
      const a = (await app.call('POST', '/v1/sessions', { body: { task: 'a' } })).json.id as string;
      const send = () =>
        app.call('POST', '/v1/sessions/latest/continue', {
          body: { message: 'deploy?' },
          headers: { 'idempotency-key': 'lat-1' },
        });
      const first = await send();
      expect(first.status).toBe(200);
      expect(first.json.id).toBe(a);
      // Another device starts a session: it is now the latest.
      const b = (await app.call('POST', '/v1/sessions', { body: { task: 'b' } })).json.id as string;
      expect((await app.call('GET', '/v1/sessions/latest')).json.id).toBe(b);
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.json).toEqual(first.json);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await app.call('GET', `/v1/sessions/${b}`)).json.messages).toHaveLength(0);
      expect(
        (await app.call('GET', `/v1/sessions/${a}`)).json.messages.filter(
          (m: { role: string }) => m.role === 'user',
        ),
      ).toHaveLength(1);
      if (chat) expect(chat.requests).toHaveLength(1);
      // Another key follows latest as usual.
      const other = await app.call('POST', '/v1/sessions/latest/continue', {
        body: { message: 'and now?' },
        headers: { 'idempotency-key': 'lat-2' },
      });
      expect(other.status).toBe(withModel ? 502 : 200);
      expect((await app.call('GET', `/v1/sessions/${b}`)).json.messages[0]).toEqual({
        role: 'user',
        content: 'and now?',
      });
    });
  }
});
