// Review s64e, 2: the client's default continue budget (180 s an attempt, 195 s a call) was shorter than the
// model turn a server may run (SATCHEL_MODEL_TIMEOUT_MS at most 300000, after up to SATCHEL_CONTINUE_WAIT_MS
// of waiting for the session's turn, then the turn's storage). A turn of 195 to 300 s failed the call with
// "cannot reach … no answer" while the server stored the message and, later, the reply.
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_CONTINUE_TIMEOUT_MS,
  DEFAULT_DEADLINE_MS,
  DEFAULT_TIMEOUT_MS,
  SatchelClient,
} from '../../lib/client/index.js';
import { ConfigError, loadConfig } from '../../lib/server/config.js';
import { startChatServer } from '../support/chat-server.js';
import { startSatchelServer } from '../support/satchel-server.js';

const closers: { close: () => Promise<void> }[] = [];
afterAll(() => Promise.all(closers.map((s) => s.close())));
afterEach(() => void vi.useRealTimers());

/** The largest value the server takes for a model variable (loadConfig refuses one more). */
async function largest(name: string, from: number): Promise<number> {
  const model = { SATCHEL_MODEL_URL: 'http://127.0.0.1:1', SATCHEL_MODEL: 'm' };
  const config = await loadConfig({ ...model, [name]: String(from) }, 'local');
  await expect(loadConfig({ ...model, [name]: String(from + 1) }, 'local')).rejects.toBeInstanceOf(
    ConfigError,
  );
  return name === 'SATCHEL_MODEL_TIMEOUT_MS' ? config.model!.timeoutMs : config.model!.waitMs;
}

const answer = () =>
  new Response(JSON.stringify({ id: 's1', revision: 2, model_turn: true, reply: 'slow' }), {
    headers: { 'content-type': 'application/json' },
  });

describe('review s64e: the default continue budget covers the longest turn a server allows', () => {
  it('an attempt outlasts the largest model timeout and lease wait, with room to store the turn', async () => {
    const turn = await largest('SATCHEL_MODEL_TIMEOUT_MS', 300_000);
    const wait = await largest('SATCHEL_CONTINUE_WAIT_MS', 60_000);
    // 30 s: the lease's margin beyond the model timeout (lib/continue/continue.ts LEASE_MARGIN_MS).
    expect(DEFAULT_CONTINUE_TIMEOUT_MS).toBeGreaterThanOrEqual(turn + wait + 30_000);
  });

  it('with the defaults, a continue answered after 385 s (a 300 s turn behind a 60 s wait) is answered', async () => {
    vi.useFakeTimers();
    let attempts = 0;
    const client = new SatchelClient({
      url: 'http://satchel.test',
      // The server's answer: held back 385 s (simulated), or never when the attempt is aborted first.
      fetch: (_input, init) => {
        attempts++;
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve(answer()), 385_000);
          init?.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(init.signal!.reason);
          });
        });
      },
    });
    const call = client.continue('s1', { message: 'a question for a slow model' }).then(
      (a) => a.reply,
      (e: Error) => e.message,
    );
    await vi.advanceTimersByTimeAsync(400_000);
    expect(await call).toBe('slow');
    expect(attempts).toBe(1);
  });

  // Node's fetch gives up on an answer's headers after 300 s (undici's headersTimeout): the retry, with
  // the call's key, meets the turn still under way (409 + Retry-After) until it is stored, then its answer.
  it("with the defaults, Node fetch's 300 s give-up is followed by the turn's answer at 385 s", async () => {
    vi.useFakeTimers();
    const start = Date.now();
    const statuses: (number | string)[] = [];
    const busy = () =>
      new Response(
        JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'turn' }),
        {
          status: 409,
          headers: { 'content-type': 'application/problem+json', 'retry-after': '5' },
        },
      );
    const client = new SatchelClient({
      url: 'http://satchel.test',
      fetch: async () => {
        if (statuses.length > 0) {
          const r = Date.now() - start >= 385_000 ? answer() : busy();
          statuses.push(r.status);
          return r;
        }
        await new Promise((r) => setTimeout(r, 300_000));
        statuses.push('headers timeout');
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('Headers Timeout Error'), {
            code: 'UND_ERR_HEADERS_TIMEOUT',
          }),
        });
      },
    });
    const call = client.continue('s1', { message: 'a question for a slow model' }).then(
      (a) => a.reply,
      (e: Error) => e.message,
    );
    await vi.advanceTimersByTimeAsync(420_000);
    expect(await call).toBe('slow');
    expect(statuses[0]).toBe('headers timeout');
    expect(statuses.at(-1)).toBe(200);
  });

  // The same relation on a real server at 1/50 of the scale: its model timeout 300000/50 = 6000 ms, a
  // model that answers in 5000 ms, and a client whose options are its defaults / 50. With the old default
  // (180000/50 = 3600 ms an attempt, 3900 ms a call) the call threw "no answer".
  it('a real continue whose turn is within the server model timeout is answered (scaled 1/50)', async () => {
    const chat = await startChatServer({ reply: 'the slow answer', delayMs: 5000 });
    closers.push(chat);
    const server = await startSatchelServer({
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'm', SATCHEL_MODEL_TIMEOUT_MS: '6000' },
    });
    closers.push(server);
    const { session } = await new SatchelClient({ url: server.url }).create({ task: 't' });
    const client = new SatchelClient({
      url: server.url,
      timeoutMs: DEFAULT_TIMEOUT_MS / 50,
      deadlineMs: DEFAULT_DEADLINE_MS / 50,
      continueTimeoutMs: DEFAULT_CONTINUE_TIMEOUT_MS / 50,
    });
    const r = await client.continue(session.id, { message: 'a question for a slow model' });
    expect(r).toMatchObject({ model_turn: true, reply: 'the slow answer' });
  }, 30_000);
});
