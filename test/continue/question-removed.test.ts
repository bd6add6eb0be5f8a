// A continue's turn answers the message it stored: when a pop, trim or replace removed that message while
// the model ran, the reply is not stored after whatever the session then holds (it answered nothing there;
// helper-107's variant, left at stop 49), and the answer says so (409). A write that keeps the message (a
// rename by GET and PUT) does not stop the turn, and a model or provider it set stays.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type App = Awaited<ReturnType<typeof makeApp>>;

/** An app with a model whose turn runs `during` (on another app, same folder) before it answers. */
async function setUp(during: (other: App, id: string) => Promise<void>) {
  let other!: App;
  let id = '';
  const chat = await startChatServer(async () => {
    await during(other, id);
    return { reply: 'the reply' };
  });
  servers.push(chat);
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
  other = await makeApp({ objects: new LocalStore(app.dir) });
  const created = await app.call('POST', '/v1/sessions', {
    body: {
      task: 't',
      messages: [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: 'ok' },
      ],
    },
  });
  id = created.json.id as string;
  return { app, id };
}

describe('a continue whose message goes while the model runs', () => {
  it('a pop of the message: the reply is not stored, and the answer is 409 saying so', async () => {
    const { app, id } = await setUp(async (other, sid) => {
      const popped = await other.call('POST', `/v1/sessions/${sid}/pop`, { body: { count: 1 } });
      expect(popped.json.popped.map((m: { content: string }) => m.content)).toEqual([
        'the question',
      ]);
    });
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'the question' },
    });
    expect(res.status).toBe(409);
    expect(res.json.detail).toMatch(/removed .* while the model ran.*not stored/);
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json;
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual(['earlier', 'ok']);
  });

  it('a PUT of another model while the model ran: the turn keeps it (review s50f: it put back the old one)', async () => {
    const { app, id } = await setUp(async (other, sid) => {
      const got = await other.call('GET', `/v1/sessions/${sid}`);
      const put = await other.call('PUT', `/v1/sessions/${sid}`, {
        body: { ...got.json, model: 'gpt-new', provider: 'new-provider' },
        headers: { 'if-match': got.headers.get('etag')! },
      });
      expect(put.status).toBe(200);
    });
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'the question' },
    });
    expect(res.status).toBe(200);
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json;
    expect([stored.model, stored.provider, stored.messages.at(-1).content]).toEqual([
      'gpt-new',
      'new-provider',
      'the reply',
    ]);
  });

  it('a rename by GET and PUT keeps the message: the reply is stored after it', async () => {
    const { app, id } = await setUp(async (other, sid) => {
      const got = await other.call('GET', `/v1/sessions/${sid}`);
      const put = await other.call('PUT', `/v1/sessions/${sid}`, {
        body: { ...got.json, task: 'renamed' },
        headers: { 'if-match': got.headers.get('etag')! },
      });
      expect(put.status).toBe(200);
    });
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'the question' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model_turn: true, reply: 'the reply' });
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json;
    expect(stored.task).toBe('renamed');
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual([
      'earlier',
      'ok',
      'the question',
      'the reply',
    ]);
  });
});
