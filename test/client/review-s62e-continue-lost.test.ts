// Review s62e, 2: a continue whose first attempt lost its connection while the server ran its (long)
// model turn retried with its key and met that turn under way (409 + Retry-After) each time; those 409s
// counted against the 4 transient retries, so the call threw "this request ran no turn for it" long
// before its deadline while its own turn still ran (and was stored afterwards). Now a turn-busy 409
// after a lost attempt is waited for (Retry-After) for as long as the call's deadline allows.
import { afterAll, describe, expect, it } from 'vitest';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { startChatServer } from '../support/chat-server.js';
import { startSatchelServer } from '../support/satchel-server.js';

const servers: { close: () => Promise<void> }[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

const reset = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
  });

/**
 * A real server whose model takes `turnMs`, and a fetch whose first continue reaches it and then loses
 * its connection (closed for real) after 300 ms. Each answer's status is recorded.
 */
async function lostFirstAttempt(turnMs: number) {
  const chat = await startChatServer({ reply: 'the long answer', delayMs: turnMs });
  // A short server-side wait for the lease keeps each 409 quick (the default is 5 s).
  const server = await startSatchelServer({
    env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', SATCHEL_CONTINUE_WAIT_MS: '200' },
  });
  servers.push(chat, server);
  const statuses: (number | 'reset')[] = [];
  let continues = 0;
  const fetchImpl: typeof fetch = async (input, init) => {
    if (!String(input).endsWith('/continue') || continues++ > 0) {
      const res = await fetch(input, init);
      if (String(input).endsWith('/continue')) statuses.push(res.status);
      return res;
    }
    const drop = new AbortController();
    const sent = fetch(input, { ...init, signal: drop.signal });
    sent.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    drop.abort();
    statuses.push('reset');
    throw reset();
  };
  return { chat, server, statuses, fetchImpl };
}

describe('review s62e: a continue retried after a lost attempt waits out its own turn', () => {
  it('keeps retrying turn-busy 409s past the retry limit and answers its turn', async () => {
    const { chat, server, statuses, fetchImpl } = await lostFirstAttempt(5000);
    const waits: number[] = [];
    const client = new SatchelClient({
      url: server.url,
      fetch: fetchImpl,
      // The waits asked for are recorded; each is served in 300 ms so that the 5 s turn meets many retries.
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setTimeout(r, 300));
      },
    });
    await client.create({ id: 's', task: 't' });
    const out = await client
      .continue('s', { message: 'a question that needs a long answer' })
      .catch((e: unknown) => e);
    // Before the fix: a SatchelApiError 409 "this request ran no turn for it" after 4 retries (~3 s).
    expect(SatchelApiError.is(out) ? `${out.status} ${out.detail}` : out).toMatchObject({
      model_turn: true,
      reply: 'the long answer',
    });
    const busy = statuses.filter((s) => s === 409).length;
    expect(busy).toBeGreaterThan(4);
    // Each 409's wait is its Retry-After (the server's 5 s), not a backoff.
    expect(waits.slice(1).every((ms) => ms >= 5000)).toBe(true);
    await server.drain();
    const stored = (await client.get('s')).session.messages;
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ['user', 'a question that needs a long answer'],
      ['assistant', 'the long answer'],
    ]);
    expect(chat.requests).toHaveLength(1);
  });

  it("another call's turn under way (no lost attempt) still gives up after the 4 retries", async () => {
    const { server, statuses, fetchImpl } = await lostFirstAttempt(4000);
    const quick = async () => void (await new Promise((r) => setTimeout(r, 100)));
    const mine = new SatchelClient({ url: server.url, fetch: fetchImpl, sleep: quick });
    await mine.create({ id: 's', task: 't' });
    // The first continue's connection drops; its retries, on their own turn, go on past the limit.
    const running = mine.continue('s', { message: 'first' });
    await new Promise((r) => setTimeout(r, 600));
    let tries = 0;
    const counted: typeof fetch = (input, init) => (tries++, fetch(input, init));
    const other = new SatchelClient({ url: server.url, fetch: counted, sleep: quick });
    const err = await other.continue('s', { message: 'second' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409, afterLostAttempt: false });
    expect(tries).toBe(5);
    expect(await running).toMatchObject({ reply: 'the long answer' });
    expect(statuses.filter((s) => s === 409).length).toBeGreaterThan(4);
  });
});
