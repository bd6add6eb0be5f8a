import { describe, expect, it } from 'vitest';
import { PreconditionFailedError, StorageUnavailableError } from '../../lib/storage/port.js';
import { probe, withRetry } from '../../lib/storage/retry.js';

const policy = { attempts: 4, baseMs: 10, maxMs: 40 };
const noSleep = async () => undefined;

describe('withRetry', () => {
  it('retries transient failures, then succeeds', async () => {
    let calls = 0;
    const out = await withRetry(
      'op',
      async () => (++calls < 3 ? Promise.reject(new Error('503')) : 'ok'),
      () => true,
      policy,
      noSleep,
    );
    expect(out).toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up after the bounded number of attempts with StorageUnavailableError', async () => {
    let calls = 0;
    const err = await withRetry(
      'op',
      async () => Promise.reject(new Error(`fail ${++calls}`)),
      () => true,
      policy,
      noSleep,
    ).catch((e) => e);
    expect(calls).toBe(4);
    expect(err.name).toBe('StorageUnavailableError');
  });

  it('never retries a precondition failure or a permanent error', async () => {
    let calls = 0;
    await expect(
      withRetry(
        'op',
        async () => Promise.reject(new PreconditionFailedError(`k${++calls}`)),
        () => true,
        policy,
        noSleep,
      ),
    ).rejects.toSatisfy(PreconditionFailedError.is);
    await expect(
      withRetry(
        'op',
        async () => Promise.reject(new Error(`403 ${++calls}`)),
        () => false,
        policy,
        noSleep,
      ),
    ).rejects.toThrow('403');
    expect(calls).toBe(2);
  });

  it('backs off with growing, capped delays', async () => {
    const delays: number[] = [];
    await withRetry(
      'op',
      async () => Promise.reject(new Error('x')),
      () => true,
      policy,
      async (ms) => void delays.push(ms),
    ).catch(() => undefined);
    expect(delays).toHaveLength(3);
    delays.forEach((d, i) => expect(d).toBeLessThanOrEqual(Math.min(40, 10 * 2 ** i)));
  });

  it('abandons an attempt that never answers at its timeout, aborts its signal, and stops at the deadline', async () => {
    const signals: AbortSignal[] = [];
    const started = Date.now();
    const err = await withRetry(
      'hang',
      ({ signal }) => {
        signals.push(signal);
        return new Promise<never>(() => undefined);
      },
      () => false,
      { attempts: 10, baseMs: 1, maxMs: 1, deadlineMs: 300, attemptTimeoutMs: 100 },
    ).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(StorageUnavailableError.is(err)).toBe(true);
    expect((err as Error).message).toMatch(/no answer within/);
    // A correctness bound, not a speed target: the deadline holds even though the op never settles.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2000);
    expect(signals.length).toBeGreaterThanOrEqual(2);
    expect(signals.length).toBeLessThanOrEqual(4);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });

  it('extend gives a slow-but-moving transfer more time', async () => {
    const out = await withRetry(
      'slow',
      async (ctx) => {
        ctx.extend(400);
        await new Promise((r) => setTimeout(r, 200));
        return 'done';
      },
      () => true,
      { attempts: 1, baseMs: 1, maxMs: 1, deadlineMs: 100, attemptTimeoutMs: 100 },
    );
    expect(out).toBe('done');
  });

  it('a write whose earlier attempt got no answer reports a later precondition failure as afterLostAnswer', async () => {
    const policy = { attempts: 3, baseMs: 1, maxMs: 1, attemptTimeoutMs: 50 };
    const run = (write: boolean, first: () => Promise<never>) => {
      let calls = 0;
      return withRetry(
        'PUT k',
        () => (++calls === 1 ? first() : Promise.reject(new PreconditionFailedError('k'))),
        () => true,
        policy,
        undefined,
        { write },
      ).catch((e: unknown) => e as PreconditionFailedError);
    };
    const hang = () => new Promise<never>(() => undefined);
    const reset = () =>
      Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const refused = () =>
      Promise.reject(Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }));
    expect((await run(true, hang)).afterLostAnswer).toBe(true);
    expect((await run(true, reset)).afterLostAnswer).toBe(true);
    // An error answer may have reached storage too, but the backend answered: not a silence (noAnswer),
    // unless a gateway answered for it (502, 504).
    const status = (code: number) => () =>
      Promise.reject(
        Object.assign(new Error(`status ${code}`), { $metadata: { httpStatusCode: code } }),
      );
    expect(await run(true, hang)).toMatchObject({ afterLostAnswer: true, noAnswer: true });
    expect(await run(true, reset)).toMatchObject({ afterLostAnswer: true, noAnswer: true });
    expect(await run(true, status(500))).toMatchObject({ afterLostAnswer: true, noAnswer: false });
    expect(await run(true, status(503))).toMatchObject({ afterLostAnswer: true, noAnswer: false });
    expect(await run(true, status(502))).toMatchObject({ afterLostAnswer: true, noAnswer: true });
    expect(await run(true, status(504))).toMatchObject({ afterLostAnswer: true, noAnswer: true });
    // A refused connection never reached the server, so the precondition failure is someone else's write.
    expect((await run(true, refused)).afterLostAnswer).toBe(false);
    expect((await run(false, hang)).afterLostAnswer).toBe(false);
    const direct = await withRetry(
      'PUT k',
      () => Promise.reject(new PreconditionFailedError('k')),
      () => true,
      policy,
      undefined,
      { write: true },
    ).catch((e: unknown) => e as PreconditionFailedError);
    expect(PreconditionFailedError.is(direct) && direct.afterLostAnswer).toBe(false);
  });

  it('a failed write says whether it may have landed', async () => {
    const policy = { attempts: 2, baseMs: 1, maxMs: 1, attemptTimeoutMs: 30 };
    const timedOut = await withRetry(
      'PUT k',
      () => new Promise<never>(() => undefined),
      () => true,
      policy,
      undefined,
      { write: true },
    ).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(timedOut) && timedOut.mayHaveLanded).toBe(true);
    const refused = await withRetry(
      'PUT k',
      () => Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })),
      () => true,
      policy,
      undefined,
      {
        write: true,
      },
    ).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(refused) && refused.mayHaveLanded).toBe(false);
    const read = await withRetry(
      'GET k',
      () => new Promise<never>(() => undefined),
      () => true,
      policy,
    ).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(read) && read.mayHaveLanded).toBe(false);
  });

  it('a write refused for good after an attempt that got no answer still says it may have landed', async () => {
    const policy = { attempts: 3, baseMs: 1, maxMs: 1, attemptTimeoutMs: 30 };
    const expired = Object.assign(new Error('The provided token has expired.'), {
      name: 'ExpiredToken',
      // S3 answers an expired session token 400, not 403 (HADOOP-18353; review s64g).
      $metadata: { httpStatusCode: 400 },
    });
    const isTransient = (err: unknown) => err !== expired;
    let calls = 0;
    // The first attempt times out (it may have been stored), the retry is refused with a 400.
    const lost = await withRetry(
      'PUT k',
      () => (calls++ === 0 ? new Promise<never>(() => undefined) : Promise.reject(expired)),
      isTransient,
      policy,
      undefined,
      { write: true },
    ).catch((e: unknown) => e);
    expect(calls).toBe(2);
    expect(StorageUnavailableError.is(lost)).toBe(true);
    expect(lost).toMatchObject({ mayHaveLanded: true, noAnswer: true, cause: expired });
    // After an error answer (a 500) the write most likely did not land, but it may have: flagged, not unanswered.
    calls = 0;
    const answered = await withRetry(
      'PUT k',
      () =>
        Promise.reject(
          calls++ === 0
            ? Object.assign(new Error('internal'), { $metadata: { httpStatusCode: 500 } })
            : expired,
        ),
      isTransient,
      policy,
      undefined,
      { write: true },
    ).catch((e: unknown) => e);
    expect(answered).toMatchObject({ mayHaveLanded: true, noAnswer: false });
    // Refused at once, or a read: the error as it came.
    calls = 0;
    const first = await withRetry(
      'PUT k',
      () => Promise.reject(expired),
      isTransient,
      policy,
      undefined,
      {
        write: true,
      },
    ).catch((e: unknown) => e);
    expect(first).toBe(expired);
    const read = await withRetry(
      'GET k',
      () => (calls++ === 0 ? new Promise<never>(() => undefined) : Promise.reject(expired)),
      isTransient,
      policy,
    ).catch((e: unknown) => e);
    expect(read).toBe(expired);
  });
});

describe('probe', () => {
  it('answers ok, a described failure, or a timeout at the deadline, and never throws', async () => {
    expect(
      await probe(
        100,
        async () => 'x',
        () => ({ reason: 'error', error: 'x' }),
      ),
    ).toMatchObject({ ok: true });
    expect(
      await probe(
        100,
        () => Promise.reject(Object.assign(new Error('no'), { status: 403 })),
        () => ({ reason: 'denied', error: 'HTTP 403' }),
      ),
    ).toMatchObject({ ok: false, reason: 'denied', error: 'HTTP 403' });
    let aborted = false;
    const started = Date.now();
    const slow = await probe(
      80,
      (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
      () => ({ reason: 'error', error: 'wrong' }),
    );
    expect(slow).toMatchObject({ ok: false, reason: 'timeout' });
    expect(aborted).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(
      await probe(
        50,
        () => {
          throw new Error('sync');
        },
        () => ({ reason: 'unreachable', error: 'E' }),
      ),
    ).toMatchObject({ ok: false, reason: 'unreachable' });
  });
});
