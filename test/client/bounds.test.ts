import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  SatchelApiError,
  SatchelClient,
  SatchelConnectionError,
  SatchelResponseError,
} from '../../lib/client/index.js';
import { eventually } from '../support/eventually.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { startFlakyProxy, type Action } from './flaky-proxy.js';

/** Timeouts, ambiguity, request-construction errors and answers that are not Satchel's. */
let server: RunningServer;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startSatchelServer();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
afterAll(() => server.close());

/** A node:http server that answers as `handle` says (or not at all). */
const misbehaving = (handle: Parameters<typeof misbehavingServer>[0]) =>
  misbehavingServer(handle, closers);

/** What a promise settles to: 'resolved', the error's name, or 'timed out' after a generous `ms`. */
function outcome(p: Promise<unknown>, ms = 20_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      () => 'resolved',
      (e: Error) => e.name,
    ),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timed out'), ms))),
  ]).finally(() => clearTimeout(timer));
}

const fast = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 };

describe('bounded waits', () => {
  it('an attempt with no answer times out and is retried as a network failure', async () => {
    const s = await misbehaving(() => {
      /* never answers */
    });
    const client = new SatchelClient({ url: s.url, retry: fast, timeoutMs: 200 });
    expect(await outcome(client.health())).toBe('SatchelConnectionError');
    expect(s.hits()).toBe(3);
  });

  it('a 200 whose body stalls after the headers times out', async () => {
    const s = await misbehaving((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"ok",');
    });
    const client = new SatchelClient({ url: s.url, retry: fast, timeoutMs: 200 });
    const err = await client.health().catch((e: unknown) => e);
    expect(SatchelConnectionError.is(err) && err.message).toContain('no answer within 200 ms');
  });

  it('deadlineMs bounds the whole call, retries included', async () => {
    const s = await misbehaving(() => {
      /* never answers */
    });
    const client = new SatchelClient({
      url: s.url,
      retry: { retries: 1000, baseDelayMs: 1, maxDelayMs: 5 },
      timeoutMs: 100,
      deadlineMs: 600,
    });
    expect(await outcome(client.health())).toBe('SatchelConnectionError');
  });

  it('a body that keeps coming is read whole, past timeoutMs and deadlineMs (a large session, a slow link)', async () => {
    const s = await misbehaving((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const pieces = ['{"status":"ok"', ...Array.from({ length: 14 }, () => ',"x":1'), '}'];
      const timer = setInterval(() => {
        res.write(pieces.shift()!);
        if (pieces.length === 0) (clearInterval(timer), res.end());
      }, 50);
      res.on('close', () => clearInterval(timer));
    });
    const client = new SatchelClient({ url: s.url, retry: fast, timeoutMs: 200, deadlineMs: 300 });
    expect(await client.health()).toMatchObject({ status: 'ok' });
    expect(s.hits()).toBe(1);
  });

  it('a continue waits for its model turn (continueTimeoutMs), not the shorter timeoutMs', async () => {
    const s = await misbehaving((req, res) => {
      // A model turn that takes longer than an ordinary attempt may.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 's1', revision: 3, model_turn: true, reply: 'done' }));
      }, 400);
      req.resume();
    });
    const client = new SatchelClient({
      url: s.url,
      retry: fast,
      timeoutMs: 100,
      continueTimeoutMs: 5000,
    });
    const answer = await client.continue('s1', { message: 'go on' });
    expect(answer).toMatchObject({ model_turn: true, reply: 'done' });
    expect(s.hits()).toBe(1);
    // Its own bound still holds.
    const short = new SatchelClient({
      url: s.url,
      retry: fast,
      timeoutMs: 100,
      continueTimeoutMs: 150,
    });
    expect(await outcome(short.continue('s1', { message: 'go on' }))).toBe(
      'SatchelConnectionError',
    );
  });

  it("the caller's abort still ends the call at once, as its own error", async () => {
    await misbehaving(() => {
      /* never answers */
    }).then(async (s) => {
      const client = new SatchelClient({ url: s.url, retry: fast });
      const controller = new AbortController();
      const call = client.health({ signal: controller.signal });
      // Aborted once the server holds the request (a fixed 50 ms could come first on a loaded machine).
      await eventually(async () => s.hits() === 1, 10_000);
      controller.abort();
      expect(await outcome(call)).toBe('AbortError');
      expect(s.hits()).toBe(1); // not retried
    });
  });
});

const busy: Action = {
  status: 503,
  headers: { 'retry-after': '0' },
  body: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'busy' },
};

describe('a retry after an answer is not ambiguous', () => {
  it('delete: a 404 after a 503 is a 404', async () => {
    const p = await startFlakyProxy(server.url, (n) => (n === 0 ? busy : 'forward'));
    closers.push(p.close);
    const err = await new SatchelClient({ url: p.url, retry: fast })
      .delete('never-was')
      .catch((e) => e);
    expect(SatchelApiError.is(err) && err.status).toBe(404);
  });

  it('delete: a 404 after a dropped connection is still success', async () => {
    const p = await startFlakyProxy(server.url, (n) => (n === 0 ? 'drop' : 'forward'));
    closers.push(p.close);
    await expect(new SatchelClient({ url: p.url, retry: fast }).delete('gone-1')).resolves.toBe(
      undefined,
    );
  });

  it('create with a generated id: a 409 after a 503 is the conflict it is', async () => {
    const conflict: Action = {
      status: 409,
      body: { type: 'about:blank', title: 'Conflict', status: 409, detail: 'id taken' },
    };
    // Then forward: a client that took the 409 for its own doing reads the id back, and finds none.
    const p = await startFlakyProxy(server.url, (n) =>
      n === 0 ? busy : n === 1 ? conflict : 'forward',
    );
    closers.push(p.close);
    const err = await new SatchelClient({ url: p.url, retry: fast })
      .create({ task: 'x' })
      .catch((e) => e);
    expect(SatchelApiError.is(err) && err.status).toBe(409);
  });
});

describe('a retry after a lost answer says what the lost attempt did', () => {
  /** A session of a system message and four turns, on the real server. */
  async function fiveMessages(direct: SatchelClient) {
    const { session } = await direct.create({
      task: 'trim me',
      messages: [{ role: 'system', content: 'be brief' }],
    });
    for (const n of [1, 2, 3, 4])
      await direct.append(session.id, { messages: [{ role: 'user', content: `turn ${n}` }] });
    return session.id;
  }

  it("trim: the retry answers the landed trim's counts, not a second trim's", async () => {
    const direct = new SatchelClient({ url: server.url });
    const id = await fiveMessages(direct);
    const p = await startFlakyProxy(server.url, (n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    closers.push(p.close);
    const out = await new SatchelClient({ url: p.url, retry: fast }).trim(id, 2);
    expect(out).toEqual({ id, before: 5, after: 2, dropped: 3, dropped_groups: 0 });
    expect(p.seen).toHaveLength(2);
    expect(p.seen[1]!.headers['idempotency-key']).toBe(p.seen[0]!.headers['idempotency-key']);
    expect((await direct.get(id)).session.messages).toHaveLength(2);
  });

  it("cleanup: the count of the retry is marked as missing the lost attempt's", async () => {
    const p = await startFlakyProxy(server.url, (n, req) =>
      // Only the cleanup's first attempt is lost; it deletes nothing here (a future cutoff of 0 days
      // would delete this test file's other sessions), so the retry's answer is what counts.
      n === 0 && req.url === '/v1/sessions/cleanup' ? 'forward-then-drop' : 'forward',
    );
    closers.push(p.close);
    const out = await new SatchelClient({ url: p.url, retry: fast }).cleanup(3650);
    expect(out).toEqual({ deleted: 0, uncounted: true });
    const plain = await new SatchelClient({ url: server.url }).cleanup(3650);
    expect(plain).toEqual({ deleted: 0 });
  });

  it("create with the caller's id: a 409 after a lost attempt is marked as maybe its own", async () => {
    const p = await startFlakyProxy(server.url, (n) => (n === 0 ? 'forward-then-drop' : 'forward'));
    closers.push(p.close);
    const err = await new SatchelClient({ url: p.url, retry: fast })
      .create({ id: 'lost-create-1', task: 'x' })
      .catch((e: unknown) => e);
    expect(SatchelApiError.is(err) && [err.status, err.afterLostAttempt]).toEqual([409, true]);
    const taken = await new SatchelClient({ url: server.url })
      .create({ id: 'lost-create-1', task: 'x' })
      .catch((e: unknown) => e);
    expect(SatchelApiError.is(taken) && [taken.status, taken.afterLostAttempt]).toEqual([
      409,
      false,
    ]);
  });
});

describe('requests fetch refuses to build', () => {
  it('a token with a line break fails at once, not retried, its value not in the message', async () => {
    const s = await misbehaving((_req, res) => res.end('{}'));
    const client = new SatchelClient({ url: s.url, token: 'tok_SECRET\nx', retry: fast });
    const err = (await client.health().catch((e) => e)) as Error;
    expect(err.name).toBe('TypeError');
    expect(err.message).toContain('authorization');
    expect(err.message).not.toContain('tok_SECRET');
    expect(s.hits()).toBe(0);
  });

  it('a URL with credentials is refused, without echoing them', () => {
    expect(() => new SatchelClient({ url: 'http://me:pw_SECRET@127.0.0.1:1' })).toThrow(
      /must not hold a user name or password/,
    );
    try {
      new SatchelClient({ url: 'http://me:pw_SECRET@127.0.0.1:1' });
    } catch (err) {
      expect((err as Error).message).not.toContain('pw_SECRET');
    }
  });
});

describe('answers that are not Satchel', () => {
  it('a 200 HTML page is a SatchelResponseError naming the URL', async () => {
    const s = await misbehaving((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>Welcome to nginx!</p>');
    });
    const err = await new SatchelClient({ url: s.url }).list().catch((e) => e);
    expect(SatchelResponseError.is(err)).toBe(true);
    expect((err as Error).message).toBe(`the answer from ${s.url}/v1/sessions is not Satchel JSON`);
  });

  it('an empty id is refused before anything is sent', async () => {
    const s = await misbehaving((_req, res) => res.end('{"sessions":[]}'));
    const client = new SatchelClient({ url: s.url });
    for (const call of [client.get(''), client.delete(''), client.append('', { messages: [] })]) {
      await expect(call).rejects.toThrow('a session id must not be empty');
    }
    expect(s.hits()).toBe(0);
  });
});

describe('keys without crypto.randomUUID (plain-http browser pages)', () => {
  it('append still sends a v4-UUID key', async () => {
    const client = new SatchelClient({ url: server.url });
    const { session } = await client.create({ task: 'insecure page' });
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const receipt = await client.append(session.id, {
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(receipt.revision).toBe(2);
    } finally {
      delete (crypto as { randomUUID?: unknown }).randomUUID;
    }
    expect(typeof crypto.randomUUID).toBe('function');
  });
});
