// A continue's turn is keyed `K turn` (with a space, which no client key holds); it was `K#turn`, a key a
// client may send (review s50f): a continue keyed `K#turn` after one keyed `K` was answered as that turn
// (its question never stored, the model asked without it), and an append keyed `K#turn` swallowed the
// reply of a later continue keyed `K`.
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

async function appWithModel(url: string) {
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: url, SATCHEL_MODEL: 'test-model' } });
  const create = async () =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task: 'cache design', messages: [{ role: 'system', content: 'You help.' }] },
      })
    ).json.id as string;
  return { ...app, create };
}

const servers: ChatServer[] = [];
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))));

const contents = async (app: Awaited<ReturnType<typeof appWithModel>>, id: string) =>
  ((await app.call('GET', `/v1/sessions/${id}`)).json.messages as { content: string }[]).map(
    (m) => m.content,
  );

describe('Idempotency-Keys ending in #turn', () => {
  it('a continue keyed K#turn after a continue keyed K stores its question', async () => {
    const chat = await startChatServer({ reply: 'first answer' }, { reply: 'second answer' });
    servers.push(chat);
    const app = await appWithModel(chat.url);
    const id = await app.create();
    const a = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'first question' },
      headers: { 'idempotency-key': 'job-7' },
    });
    expect(a.status).toBe(200);
    const b = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'second question' },
      headers: { 'idempotency-key': 'job-7#turn' },
    });
    expect(b.status).toBe(200);
    expect(b.json.turns).toBe(2);
    expect(await contents(app, id)).toEqual([
      'You help.',
      'first question',
      'first answer',
      'second question',
      'second answer',
    ]);
    // The model was asked the second question.
    expect(chat.requests[1]!.body.messages.at(-1)!.content).toBe('second question');
  });

  it('an append keyed K#turn does not swallow the reply of a later continue keyed K', async () => {
    const chat = await startChatServer({ reply: 'the answer' });
    servers.push(chat);
    const app = await appWithModel(chat.url);
    const id = await app.create();
    const note = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'a note' }] },
      headers: { 'idempotency-key': 'k1#turn' },
    });
    expect(note.status).toBe(200);
    const res = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: 'question' },
      headers: { 'idempotency-key': 'k1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.json.reply).toBe('the answer');
    expect(await contents(app, id)).toEqual(['You help.', 'a note', 'question', 'the answer']);
  });
});
