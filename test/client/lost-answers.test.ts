// What the client answers when an attempt's answer was lost and the retry met what that attempt did
// (review s50b): a replace's ETag, a pop's replay, a gateway's 503, a continue's own turn under way.
import { afterAll, describe, expect, it } from 'vitest';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { uploadAllowanceMs } from '../../lib/client/client.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer } from '../support/chat-server.js';

const TOKEN = 'tok_alice_laptop_0123456789';
const dropped = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
  });

/**
 * The in-process app behind a client whose `lose`-th request (0-based) reaches the server and takes
 * effect, but is answered by `answer` (a dropped connection unless given): the client retries it.
 * `between` runs after that attempt landed and before the retry (another device's write).
 */
async function lostAnswer(
  lose: number,
  {
    between = async () => undefined,
    answer,
  }: { between?: () => Promise<unknown>; answer?: () => Response } = {},
) {
  const built = await makeApp();
  let n = 0;
  const fetchImpl: typeof fetch = async (input, init) => {
    const res = await built.app.fetch(new Request(input as string, init));
    if (n++ !== lose) return res;
    await res.arrayBuffer();
    await between();
    if (answer) return answer();
    throw dropped();
  };
  const client = new SatchelClient({
    url: 'http://satchel.test',
    token: TOKEN,
    fetch: fetchImpl,
    sleep: async () => undefined,
  });
  return { client, built };
}

const gateway503 = () =>
  new Response('<html><body><h1>503 Service Unavailable</h1>upstream timed out</body></html>', {
    status: 503,
    headers: { 'content-type': 'text/html', 'retry-after': '0' },
  });

describe('a retry after a lost answer answers what the first attempt did', () => {
  it("replace: the ETag is its own write's revision, so a next replace based on it is a 412", async () => {
    // The replay answered the session now with its current ETag: a caller basing its next replace on
    // it overwrote another device's append made in between, with no 412.
    let other: () => Promise<unknown> = async () => undefined;
    const { client, built } = await lostAnswer(1, { between: () => other() }); // 1: the replace
    const { session, etag } = await client.create({
      task: 'notes',
      messages: [{ role: 'user', content: 'a' }],
    });
    other = () =>
      built.call('POST', `/v1/sessions/${session.id}/messages`, {
        body: { messages: [{ role: 'user', content: 'from the phone' }] },
      });
    const mine = [
      { role: 'user' as const, content: 'a' },
      { role: 'user' as const, content: 'b' },
    ];
    const replaced = await client.replace(
      session.id,
      { task: 'notes', messages: mine },
      { ifMatch: etag },
    );
    expect(replaced.etag).toBe('"2"'); // its own write; the phone's append is revision 3
    const next = await client
      .replace(
        session.id,
        { task: 'notes', messages: [...mine, { role: 'user', content: 'c' }] },
        {
          ifMatch: replaced.etag,
        },
      )
      .catch((e: SatchelApiError) => e.status);
    expect(next).toBe(412);
    const stored = (await built.call('GET', `/v1/sessions/${session.id}`)).json;
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual([
      'a',
      'b',
      'from the phone',
    ]);
  });

  it('pop: a replay says it is one (`replayed`), since the popped messages are kept nowhere', async () => {
    const { client, built } = await lostAnswer(2); // 0: create, 1: append, 2: the pop
    const { session } = await client.create({ task: 'undo a turn' });
    await client.append(session.id, {
      messages: [
        { role: 'user', content: 'question' },
        { role: 'assistant', content: 'the reply to take back' },
      ],
    });
    const out = await client.pop(session.id, 1);
    expect(out).toMatchObject({ popped: [], replayed: true, revision: 3 });
    const stored = (await built.call('GET', `/v1/sessions/${session.id}`)).json;
    expect(stored.messages.map((m: { content: string }) => m.content)).toEqual(['question']);
    // A pop answered the first time says nothing of a replay.
    const again = await client.pop(session.id, 1);
    expect(again).not.toHaveProperty('replayed');
    expect(again.popped.map((m) => m.content)).toEqual(['question']);
  });

  it("a gateway's 503 (not Satchel's problem) may have landed: a later 409 or 404 is counted its doing", async () => {
    const generated = await lostAnswer(0, { answer: gateway503 });
    expect((await generated.client.create({ task: 'behind a gateway' })).session.task).toBe(
      'behind a gateway',
    );
    const named = await lostAnswer(0, { answer: gateway503 });
    const err = (await named.client
      .create({ id: 'my-own-id', task: 'x' })
      .catch((e) => e)) as SatchelApiError;
    expect([err.status, err.afterLostAttempt]).toEqual([409, true]);
    const deleting = await lostAnswer(1, { answer: gateway503 });
    const made = await deleting.client.create({ task: 'doomed' });
    await expect(deleting.client.delete(made.session.id)).resolves.toBeUndefined();
    // Satchel's own 503 stores nothing: a 409 after it is not the first attempt's doing.
    const own = await lostAnswer(0, {
      answer: () =>
        new Response(JSON.stringify({ status: 503, title: 'Service Unavailable' }), {
          status: 503,
          headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
        }),
    });
    const mine = (await own.client
      .create({ id: 'named-id', task: 'x' })
      .catch((e) => e)) as SatchelApiError;
    expect([mine.status, mine.afterLostAttempt]).toEqual([409, false]);
  });
});

describe('continue: a retry that meets its own turn under way', () => {
  const servers: { close: () => Promise<void> }[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it('waits Retry-After and answers the turn that ran, not 409', async () => {
    const chat = await startChatServer({ reply: 'the answer', delayMs: 1500 });
    servers.push(chat);
    const built = await makeApp({
      env: {
        SATCHEL_MODEL_URL: chat.url,
        SATCHEL_MODEL: 'test-model',
        SATCHEL_CONTINUE_WAIT_MS: '200',
      },
    });
    const id = (await built.call('POST', '/v1/sessions', { body: { task: 'chat' } })).json
      .id as string;
    const waits: number[] = [];
    let n = 0;
    const fetchImpl: typeof fetch = async (input, init) => {
      const req = new Request(input as string, init);
      if (n++ > 0) return built.app.fetch(req);
      // The request reaches the server and its turn starts; the connection then drops.
      void Promise.resolve(built.app.fetch(req)).then((r) => r.arrayBuffer());
      await new Promise((r) => setTimeout(r, 200));
      throw dropped();
    };
    const client = new SatchelClient({
      url: 'http://satchel.test',
      token: TOKEN,
      fetch: fetchImpl,
      // The waits are recorded; each lasts long enough for the turn to end (1.5 s) by the third.
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setTimeout(r, 700));
      },
    });
    const out = await client.continue(id, { message: 'hello' });
    expect(out).toMatchObject({ model_turn: true, reply: 'the answer' });
    expect(waits.some((ms) => ms >= 1000)).toBe(true); // a Retry-After (seconds) was waited for
    await built.background.drain();
    const s = (await built.call('GET', `/v1/sessions/${id}`)).json;
    expect(s.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.requests).toHaveLength(1);
  });
});

describe('the upload allowance', () => {
  it('counts the UTF-8 bytes sent, not characters: 768 KiB of CJK text gets 3 s, as of ASCII', () => {
    expect(uploadAllowanceMs('a'.repeat(3 * 262_144))).toBe(3000);
    expect(uploadAllowanceMs('語'.repeat(262_144))).toBe(3000);
    expect(uploadAllowanceMs('😀'.repeat(65_536))).toBe(1000); // 4 bytes each
    expect(uploadAllowanceMs(undefined)).toBe(0);
  });
});

// Review s53c's follow-up (2026-12-06): the server now answers a write that storage did not confirm
// with a 503 saying it may have been stored. A create retried after one met its own session (409), which
// the client threw at the caller: the session it created looked like someone else's.
it("a create retried after Satchel's may-have-been-stored 503 gives the session it made", async () => {
  const maybe = () =>
    new Response(
      JSON.stringify({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail:
          'storage did not confirm this create: session x may have been stored; read it first',
      }),
      { status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } },
    );
  const { client } = await lostAnswer(0, { answer: maybe });
  const { session } = await client.create({
    task: 'notes',
    messages: [{ role: 'user', content: 'a' }],
  });
  expect(session.task).toBe('notes');
  expect((await client.list()).sessions.map((s) => s.id)).toEqual([session.id]);
});
