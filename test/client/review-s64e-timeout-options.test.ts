// Review s64e, 3: a `timeoutMs` above `deadlineMs + continueTimeoutMs` (300 s for a slow link) made every
// continue's call deadline lie in the past, so it threw "no answer within 180000 ms" at once while the
// server stored its message and turn; `Infinity` for any timeout (the usual "no limit") reached setTimeout,
// which runs such a delay after 1 ms, so every call failed. 0, negatives and NaN were taken as they came.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let chat: ChatServer;
let server: RunningServer;
let sessionId: string;
beforeAll(async () => {
  chat = await startChatServer();
  server = await startSatchelServer({ env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm' } });
  sessionId = (await new SatchelClient({ url: server.url }).create({ task: 't' })).session.id;
});
afterAll(async () => {
  await server.close();
  await chat.close();
});

/** A get, an append and a continue (whose model answers after 300 ms) with these options. */
async function threeCalls(options: Record<string, number>) {
  chat.script({ reply: 'an answer', delayMs: 300 });
  const client = new SatchelClient({ url: server.url, ...options });
  const get = await client.get(sessionId);
  const append = await client.append(sessionId, { messages: [{ role: 'user', content: 'x' }] });
  const turn = await client.continue(sessionId, { message: 'a question' });
  return { get: get.session.id, append: append.id, reply: turn.reply };
}

const ok = () => ({ get: sessionId, append: sessionId, reply: 'an answer' });

describe('review s64e: timeout options', () => {
  it('timeoutMs above deadlineMs + continueTimeoutMs (a slow link): every call, continue too, works', async () => {
    expect(await threeCalls({ timeoutMs: 300_000 })).toEqual(ok());
    expect(
      await threeCalls({ timeoutMs: 5000, deadlineMs: 2000, continueTimeoutMs: 1000 }),
    ).toEqual(ok());
  });

  it.each(['timeoutMs', 'deadlineMs', 'continueTimeoutMs'])(
    '%s: Infinity is no limit, and setTimeout is never given more than 2^31-1 ms',
    async (name) => {
      const spy = vi.spyOn(globalThis, 'setTimeout');
      try {
        expect(await threeCalls({ [name]: Infinity })).toEqual(ok());
        const delays = spy.mock.calls.map((c) => c[1] ?? 0);
        expect(delays.every((d) => d <= 2 ** 31 - 1)).toBe(true);
      } finally {
        spy.mockRestore();
      }
    },
  );

  it.each([
    ['timeoutMs', 0],
    ['deadlineMs', -1],
    ['continueTimeoutMs', NaN],
    ['timeoutMs', '5000'],
  ])('%s: %s is a TypeError at construction', (name, value) => {
    expect(() => new SatchelClient({ url: server.url, [name]: value })).toThrow(TypeError);
    expect(() => new SatchelClient({ url: server.url, [name]: value })).toThrow(name);
  });
});
