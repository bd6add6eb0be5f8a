import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  DEFAULT_RETRY,
  delayAfterAnswer,
  isRetryableStatus,
  parseRetryAfter,
} from '../../lib/client/retry.js';
import { SatchelClient } from '../../lib/client/client.js';
import { SatchelConnectionError } from '../../lib/client/errors.js';

describe('retry policy', () => {
  it('retries only 429 and 503', () => {
    const retryable = [
      400, 401, 403, 404, 409, 412, 413, 415, 422, 428, 429, 500, 502, 503, 504,
    ].filter(isRetryableStatus);
    expect(retryable).toEqual([429, 503]);
  });

  it.each([
    [0, 1, 250],
    [1, 1, 500],
    [2, 1, 1000],
    [5, 1, 8000],
    [10, 1, 8000],
    [3, 0, 0],
    [3, 0.5, 1000],
  ])(
    'backoff at attempt %i with random %f is %i ms (full jitter, doubling, capped)',
    (attempt, random, expected) => {
      expect(backoffDelay(attempt, DEFAULT_RETRY, () => random)).toBe(expected);
    },
  );

  it.each([
    ['0', 0],
    ['2', 2000],
    [' 7 ', 7000],
    ['Wed, 21 Oct 2015 07:28:10 GMT', 5000],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    [null, undefined],
  ])('Retry-After %j is %j ms', (header, expected) => {
    expect(parseRetryAfter(header, Date.parse('Wed, 21 Oct 2015 07:28:05 GMT'))).toBe(expected);
  });

  it('waits what Retry-After asks (plus a little jitter), the backoff without it, and gives up on a long one', () => {
    const policy = { ...DEFAULT_RETRY, maxRetryAfterMs: 10_000 };
    expect(delayAfterAnswer(0, '3', policy, () => 0)).toBe(3000);
    const jittered = delayAfterAnswer(0, '3', policy, () => 0.999)!;
    expect(jittered).toBeGreaterThan(3000);
    expect(jittered).toBeLessThanOrEqual(3000 + policy.baseDelayMs);
    expect(delayAfterAnswer(2, null, policy, () => 1)).toBe(1000);
    expect(delayAfterAnswer(0, '11', policy, () => 0)).toBeUndefined();
  });
});

describe('an abort during a retry wait', () => {
  it('ends the call with the abort, and no further attempt is made (review)', async () => {
    let calls = 0;
    const busy = async () => {
      calls++;
      return new Response('{"status":503}', { status: 503, headers: { 'retry-after': '20' } });
    };
    // A wait that never ends on its own: only the abort can end the call.
    const client = new SatchelClient({
      url: 'http://satchel.test',
      fetch: busy as typeof fetch,
      sleep: () => new Promise<void>(() => undefined),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(
      client.append(
        's',
        { messages: [{ role: 'user', content: 'x' }] },
        { signal: controller.signal },
      ),
    ).rejects.toThrow('stop');
    expect(calls).toBe(1);
  }, 10_000);
});

describe('a connection that drops while an answer is read', () => {
  const dropping = (status: number) => async () =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"id":"s","mess'));
          controller.error(new TypeError('terminated'));
        },
      }),
      { status, headers: { 'content-type': 'application/json' } },
    );
  it('is a SatchelConnectionError for a success, and the status for an error answer (review)', async () => {
    let calls = 0;
    const ok = new SatchelClient({
      url: 'http://satchel.test',
      fetch: (() => (calls++, dropping(200)())) as typeof fetch,
      sleep: async () => {},
    });
    await expect(ok.get('s')).rejects.toBeInstanceOf(SatchelConnectionError);
    expect(calls).toBe(DEFAULT_RETRY.retries + 1); // each attempt's answer dropped
    const gone = new SatchelClient({
      url: 'http://satchel.test',
      fetch: dropping(404) as typeof fetch,
    });
    await expect(gone.get('s')).rejects.toMatchObject({ status: 404 });
    const refused = new SatchelClient({
      url: 'http://satchel.test',
      fetch: dropping(409) as typeof fetch,
    });
    await expect(refused.create({ task: 't' })).rejects.toMatchObject({ status: 409 });
  });

  it('is retried: a read, and a keyed append, whose second attempt answers', async () => {
    const session = { id: 's', revision: 3, messages: [] };
    const receipt = { id: 's', revision: 4 };
    const sent: { method: string; key: string | null }[] = [];
    const client = new SatchelClient({
      url: 'http://satchel.test',
      fetch: (async (_url: string, init: RequestInit) => {
        const headers = new Headers(init.headers);
        sent.push({ method: init.method!, key: headers.get('idempotency-key') });
        if (sent.length % 2 === 1) return dropping(200)();
        return Response.json(init.method === 'GET' ? session : receipt, {
          headers: { etag: '"3"' },
        });
      }) as typeof fetch,
      sleep: async () => {},
    });
    expect(await client.get('s')).toEqual({ session, etag: '"3"' });
    expect(await client.append('s', { messages: [{ role: 'user', content: 'hi' }] })).toEqual(
      receipt,
    );
    expect(sent.map((s) => s.method)).toEqual(['GET', 'GET', 'POST', 'POST']);
    // The retry carries the first attempt's key: a write that landed is answered, not made twice.
    expect(sent[2]!.key).toBeTruthy();
    expect(sent[3]!.key).toBe(sent[2]!.key);
  });
});
