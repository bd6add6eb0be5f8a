// Review s66d F2: a call whose attempts all got no answer threw "no answer within <ms>" with the last
// attempt's share of the deadline ("no answer within 14894 ms" after a continue waited 405 s, "4562 ms"
// after a `session list` waited 25 s): a reader looked for a 5 s or 15 s timeout that does not exist. The
// message now names the whole wait and the attempts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { satchel } from '../cli/run.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (closers.length) await closers.pop()!();
});

/** A server that takes every request and never answers. */
const silent = () =>
  misbehavingServer((req) => {
    req.resume();
  }, closers);

const fast = { retries: 5, baseDelayMs: 1, maxDelayMs: 5 };

async function failure(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(SatchelConnectionError.is(err)).toBe(true);
  return (err as Error).message;
}

describe('the connection error of a call that timed out', () => {
  it('names the whole wait and the attempts when the deadline ran out', async () => {
    const s = await silent();
    const client = new SatchelClient({ url: s.url, retry: fast, timeoutMs: 200, deadlineMs: 500 });
    const message = await failure(client.health());
    // 200 + 200 ms and the deadline's last ~100 ms: three attempts, 0.5 s in all.
    expect(message).toMatch(
      new RegExp(`^cannot reach ${s.url}: no answer \\(3 attempts in 0\\.[5-7] s\\)$`),
    );
    expect(s.hits()).toBe(3);
  });

  it("a continue's: its turn's attempt and the rest of its deadline", async () => {
    const s = await silent();
    const client = new SatchelClient({
      url: s.url,
      retry: fast,
      timeoutMs: 100,
      deadlineMs: 200,
      continueTimeoutMs: 300,
    });
    // The call's deadline: 200 + 300 - 100 ms.
    const message = await failure(client.continue('s1', { message: 'go on' }));
    expect(message).toMatch(
      new RegExp(`^cannot reach ${s.url}: no answer \\(2 attempts in 0\\.[4-6] s\\)$`),
    );
  });

  it("names each attempt's own limit when the retries ran out first", async () => {
    const s = await silent();
    const client = new SatchelClient({
      url: s.url,
      retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 },
      timeoutMs: 150,
    });
    const message = await failure(client.health());
    expect(message).toMatch(
      new RegExp(
        `^cannot reach ${s.url}: no answer within 150 ms \\(3 attempts in 0\\.[4-7] s\\)$`,
      ),
    );
  });

  it('satchel continue: exit 3 after 405 s, "no answer (2 attempts in 405.x s)"', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const start = Date.now();
    // A network that takes the request and never answers (fake time cannot run a real socket's wait).
    const hung = ((_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
      })) as typeof fetch;
    let ended: { code: number; stderr: string; at: number } | undefined;
    void satchel(
      ['continue', '--id', 'cli-demo', 'Use UTC in the test.'],
      { SATCHEL_URL: 'http://127.0.0.1:9' },
      { fetch: hung },
    ).then((r) => (ended = { code: r.code, stderr: r.stderr, at: Date.now() - start }));
    await vi.advanceTimersByTimeAsync(500_000);
    expect(ended?.code).toBe(3);
    expect(Math.round(ended!.at / 1000)).toBe(405);
    expect(ended!.stderr).toContain(
      'satchel: cannot reach http://127.0.0.1:9: no answer (2 attempts in 405.',
    );
  });

  it('satchel session list: "no answer (3 attempts in 25.0 s)"', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const hung = ((_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
      })) as typeof fetch;
    let stderr: string | undefined;
    void satchel(['session', 'list'], { SATCHEL_URL: 'http://127.0.0.1:9' }, { fetch: hung }).then(
      (r) => (stderr = r.stderr),
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(stderr).toContain(
      'satchel: cannot reach http://127.0.0.1:9: no answer (3 attempts in 25.0 s). ',
    );
  });
});
