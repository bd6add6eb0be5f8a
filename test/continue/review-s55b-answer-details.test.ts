// Review s55b, finding 7: three continue answers said what was not so.
// - A repeat (same Idempotency-Key) while the first request's turn still ran answered 409 "your message was
//   stored … but no turn ran for it": a turn for that very message was running, and was then stored.
// - A 502 (or 409, 503) to a continue sent without an Idempotency-Key said "Retry with the same
//   Idempotency-Key": there is none, and a retry without one stores the message again.
// - A continue whose session was deleted and created again under its id while the model ran answered 404
//   "session X does not exist": it exists (the new one).
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type ChatServer, type Step } from '../support/chat-server.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setUp(steps: Step[]) {
  const chat = await startChatServer(...steps);
  servers.push(chat);
  const app = await makeApp({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', SATCHEL_CONTINUE_WAIT_MS: '200' },
  });
  const create = async (id?: string) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { ...(id ? { id } : {}), task: 't', messages: [{ role: 'system', content: 'sys' }] },
      })
    ).json.id as string;
  const ask = (id: string, message: string, key?: string) =>
    app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message },
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
  return { chat, app, create, ask };
}

describe('review s55b: continue details that are true', () => {
  it('a repeat while its first request runs the turn does not say that no turn ran for the message', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { chat, app, create, ask } = await setUp([
      async () => {
        await gate;
        return { reply: 'slow answer' };
      },
    ]);
    const id = await create();
    const first = ask(id, 'q', 'slow-1');
    await expect.poll(() => chat.requests.length).toBe(1);
    const repeat = await ask(id, 'q', 'slow-1');
    expect(repeat.status).toBe(409);
    expect(repeat.json.detail).not.toMatch(/no turn ran for it/);
    expect(repeat.json.detail).toBe(
      `another continue is running a model turn on session ${id}; your message was stored ` +
        '(revision 2); this request ran no turn for it. Retry with the same Idempotency-Key after Retry-After.',
    );
    release();
    expect((await first).status).toBe(200);
    // The retry it asks for answers the first request's turn; the model ran once.
    const again = await ask(id, 'q', 'slow-1');
    expect([again.status, again.json.reply]).toEqual([200, 'slow answer']);
    expect(chat.requests).toHaveLength(1);
    const stored = (await app.call('GET', `/v1/sessions/${id}`)).json.messages;
    expect(stored.map((m: { content: string }) => m.content)).toEqual(['sys', 'q', 'slow answer']);
  });

  it('without an Idempotency-Key, a 502 and a 409 do not ask for "the same" key', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { chat, create, ask } = await setUp([
      { status: 503 },
      async () => {
        await gate;
        return { reply: 'later' };
      },
    ]);
    const id = await create();
    const failed = await ask(id, 'q');
    expect(failed.status).toBe(502);
    expect(failed.json.detail).toBe(
      'the model endpoint answered HTTP 503; your message was stored (revision 2) and no reply was ' +
        'stored. Without an Idempotency-Key, a retry stores the message again.',
    );
    const running = ask(id, 'q2');
    await expect.poll(() => chat.requests.length).toBe(2);
    const busy = await ask(id, 'q3');
    expect(busy.status).toBe(409);
    expect(busy.json.detail).not.toMatch(/same Idempotency-Key/);
    expect(busy.json.detail).toMatch(/\(revision 4\); this request ran no turn for it\. /);
    expect(busy.json.detail).toMatch(
      / Without an Idempotency-Key, a retry stores the message again\.$/,
    );
    release();
    expect((await running).status).toBe(200);
  });

  it('a session deleted and created again while the model ran: the 404 does not say it does not exist', async () => {
    let app!: Awaited<ReturnType<typeof makeApp>>;
    const s = await setUp([
      async () => {
        expect((await app.call('DELETE', '/v1/sessions/plan-a')).status).toBe(204);
        await app.background.drain();
        const again = await app.call('POST', '/v1/sessions', {
          body: {
            id: 'plan-a',
            task: 'second life',
            messages: [{ role: 'system', content: 'new' }],
          },
        });
        expect(again.status).toBe(201);
        return { reply: 'an answer to a deleted question' };
      },
    ]);
    app = s.app;
    await s.create('plan-a');
    const res = await s.ask('plan-a', 'q1');
    expect(res.status).toBe(404);
    expect(res.json.detail).toBe(
      'session plan-a was deleted since your message was stored; the reply was not stored',
    );
    const now = await app.call('GET', '/v1/sessions/plan-a');
    expect(now.status).toBe(200); // it exists: the new one, without the reply
    expect(now.json.messages).toEqual([{ role: 'system', content: 'new' }]);
  });
});
