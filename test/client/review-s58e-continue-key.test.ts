// Review s58e, 3: a failed continue could not be repeated without storing the user message twice. After
// the model fails the server has stored the message and answers 502 "your message was stored … Retry with
// the same Idempotency-Key"; but the client made that key up inside the call and gave it to nobody (its
// errors had no key), so the only repeat a caller could make carried a new key and stored the message a
// second time. Now SatchelApiError and SatchelConnectionError of a keyed call carry `idempotencyKey`,
// which the call's `idempotencyKey` option takes back.
import { afterAll, describe, expect, it } from 'vitest';
import { SatchelApiError, SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { startChatServer } from '../support/chat-server.js';

const chat = await startChatServer(
  { status: 500, body: { error: 'overloaded' } },
  { reply: 'Use UTC.' },
);
afterAll(() => chat.close());

async function clientOf(fetchImpl?: typeof fetch) {
  const built = await makeApp({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model' },
  });
  return new SatchelClient({
    url: 'http://satchel.test',
    token: TOKENS.laptop,
    sleep: async () => undefined,
    fetch:
      fetchImpl ?? (async (input, init) => built.app.fetch(new Request(input as string, init))),
  });
}

describe('review s58e: the errors of keyed calls carry their Idempotency-Key', () => {
  it('a continue repeated with the key of its 502 stores the user message once', async () => {
    const client = await clientOf();
    const { session } = await client.create({ task: 'leap days' });
    const body = { message: 'The checkout test fails on 29 February.' };
    const first = await client.continue(session.id, body).catch((e: unknown) => e);
    expect(SatchelApiError.is(first) && first.status).toBe(502);
    const key = (first as SatchelApiError).idempotencyKey;
    // Before the fix: undefined, and the repeat below stored the message a second time.
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const second = await client.continue(session.id, body, { idempotencyKey: key! });
    expect(second).toMatchObject({ model_turn: true, reply: 'Use UTC.' });
    const stored = (await client.get(session.id)).session.messages;
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ['user', body.message],
      ['assistant', 'Use UTC.'],
    ]);
  });

  it("a caller's own key is the one on the error; unkeyed calls carry none", async () => {
    const client = await clientOf();
    const { session } = await client.create({ task: 'keys' });
    const missing = await client
      .append(
        'no-such-session',
        { messages: [{ role: 'user', content: 'x' }] },
        {
          idempotencyKey: 'my-key-1',
        },
      )
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, idempotencyKey: 'my-key-1' });
    const trimmed = await client.trim('no-such-session', 1).catch((e: unknown) => e);
    expect((trimmed as SatchelApiError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const stale = await client
      .replace(session.id, { task: 'keys', messages: [] }, { ifMatch: 7 })
      .catch((e: unknown) => e);
    expect(stale).toMatchObject({ status: 412, idempotencyKey: expect.any(String) });
    const read = await client.get('no-such-session').catch((e: unknown) => e);
    expect(SatchelApiError.is(read) && read.idempotencyKey).toBeUndefined();
  });

  it('a keyed write whose attempts all got no answer says its key too', async () => {
    const dropped = () =>
      Promise.reject(
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
        }),
      );
    const client = await clientOf(dropped);
    const err = await client
      .append('s', { messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(SatchelConnectionError.is(err) && err.mayHaveLanded).toBe(true);
    expect((err as SatchelConnectionError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });
});
