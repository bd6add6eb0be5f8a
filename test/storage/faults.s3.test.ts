import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  PreconditionFailedError,
  StorageUnavailableError,
  text,
  utf8,
} from '../../lib/storage/port.js';
import { S3Store, type S3StoreOptions, type S3Timeouts } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import {
  onceFor,
  randomFaults,
  startFaultProxy,
  type FaultProxy,
  type ProxiedRequest,
} from '../support/fault-proxy.js';

// The S3 adapter against the run's radosgw behind a fault-injecting proxy (issue 12, items 1 and 2, at the
// storage level): what each fault surfaces as, bounded time while storage is paused, and recovery. The
// timeouts are shortened so the tests stay short; the defaults (2 s / 3 s / 8 s) scale the same way.

const timeouts: S3Timeouts = { connectMs: 500, requestMs: 700, deadlineMs: 2000 };
let proxy: FaultProxy;
/** Each transport's tests under a prefix of their own. */
let prefix = '';

function storeVia(
  endpoint: string,
  extra: Partial<ConstructorParameters<typeof S3Store>[0]> = {},
): S3Store {
  const s3 = inject('s3');
  return new S3Store({
    ...s3,
    endpoint,
    prefix,
    timeouts,
    retry: { attempts: 4, baseMs: 10, maxMs: 50 },
    ...via,
    ...extra,
  });
}

let faulty: S3Store;
let direct: S3Store;
/** The object requests over the Node entries' wire, and everything through the SDK (as on Workers). */
let via: Partial<S3StoreOptions> = {};

beforeAll(async () => {
  proxy = await startFaultProxy(inject('s3').endpoint);
});
afterAll(() => proxy.close());

const putOf = (key: string) => (req: ProxiedRequest) =>
  req.method === 'PUT' && req.path.includes(`${prefix}${key}`);
const elapsed = async <T>(fn: () => Promise<T>): Promise<{ ms: number; out: T | unknown }> => {
  const started = Date.now();
  const out = await fn().catch((e: unknown) => e);
  return { ms: Date.now() - started, out };
};

const transports: [string, Partial<S3StoreOptions>][] = [
  ['over the Node wire', { wire: nodeWire }],
  ['through the SDK only', {}],
];

describe.each(transports)('S3 adapter behind a fault proxy, %s', (_, transport) => {
  beforeAll(() => {
    via = transport;
    prefix = `faults-${Math.random().toString(36).slice(2, 10)}/`;
    faulty = storeVia(proxy.url);
    direct = storeVia(inject('s3').endpoint);
  });

  it('a lost answer to a create-only PUT surfaces as PreconditionFailedError with afterLostAnswer, and the object holds our bytes', async () => {
    proxy.setPlan(onceFor(putOf('create-1'), { action: 'lose-answer' }));
    const err = await faulty
      .put('create-1', utf8('{"write":"w-1"}'), { ifNoneMatch: '*' })
      .catch((e: unknown) => e);
    proxy.setPlan(undefined);
    // The first attempt landed; its answer was lost; the retry found the key taken (by that very attempt).
    expect(PreconditionFailedError.is(err)).toBe(true);
    expect((err as PreconditionFailedError).afterLostAnswer).toBe(true);
    expect(text((await direct.get('create-1'))!.body)).toBe('{"write":"w-1"}');
    expect(
      proxy.log
        .filter((e) => e.path.includes(`${prefix}create-1`) && e.method === 'PUT')
        .map((e) => [e.action, e.upstreamStatus]),
    ).toEqual([
      ['lose-answer', 200],
      ['pass', 412],
    ]);
  });

  it('a create-only PUT that finds the key taken by someone else (no lost answer) has afterLostAnswer false', async () => {
    await direct.put('create-2', utf8('theirs'));
    const err = await faulty
      .put('create-2', utf8('mine'), { ifNoneMatch: '*' })
      .catch((e: unknown) => e);
    expect(PreconditionFailedError.is(err) && !err.afterLostAnswer).toBe(true);
  });

  it('a lost answer to a compare-and-swap PUT surfaces the same way; the object holds our bytes', async () => {
    const { etag } = await direct.put('cas-1', utf8('v1'));
    proxy.setPlan(onceFor(putOf('cas-1'), { action: 'lose-answer' }));
    const err = await faulty.put('cas-1', utf8('v2'), { ifMatch: etag }).catch((e: unknown) => e);
    proxy.setPlan(undefined);
    expect(PreconditionFailedError.is(err) && err.afterLostAnswer).toBe(true);
    expect(text((await direct.get('cas-1'))!.body)).toBe('v2');
  });

  it('tells an attempt that got no answer from one that got an error answer (noAnswer)', async () => {
    // The session layer answers "may have been stored" only after a silence: an error answer (a 5xx, as
    // radosgw gives to racing conditional PUTs) comes from a backend that most likely did not store it.
    const { etag } = await direct.put('cas-2', utf8('v1'));
    proxy.setPlan(onceFor(putOf('cas-2'), { action: 'lose-answer' }));
    const lost = await faulty.put('cas-2', utf8('v2'), { ifMatch: etag }).catch((e: unknown) => e);
    expect(PreconditionFailedError.is(lost) && lost.afterLostAnswer && lost.noAnswer).toBe(true);
    const { etag: now } = await direct.put('cas-3', utf8('v1'));
    proxy.setPlan(onceFor(putOf('cas-3'), { action: 'error', status: 500 }));
    await direct.put('cas-3', utf8('theirs'));
    const refused = await faulty
      .put('cas-3', utf8('v2'), { ifMatch: now })
      .catch((e: unknown) => e);
    proxy.setPlan(undefined);
    expect(PreconditionFailedError.is(refused) && refused.afterLostAnswer).toBe(true);
    expect((refused as PreconditionFailedError).noAnswer).toBe(false);
  });

  it('a lost answer to an unconditional PUT is retried and answers the stored etag', async () => {
    proxy.setPlan(onceFor(putOf('plain-1'), { action: 'lose-answer' }));
    const { etag } = await faulty.put('plain-1', utf8('body'));
    proxy.setPlan(undefined);
    expect(etag).toBe((await direct.get('plain-1'))!.etag);
  });

  it('a dropped connection (request never forwarded) is retried; a create-only PUT then succeeds plainly', async () => {
    proxy.setPlan(onceFor(putOf('drop-1'), { action: 'drop' }, 2));
    const { etag } = await faulty.put('drop-1', utf8('x'), { ifNoneMatch: '*' });
    proxy.setPlan(undefined);
    expect(etag).toBe((await direct.get('drop-1'))!.etag);
  });

  it('500 and 503 answers are retried; when they persist, StorageUnavailableError within the deadline', async () => {
    proxy.setPlan(onceFor(putOf('err-1'), { action: 'error', status: 500 }, 1));
    await faulty.put('err-1', utf8('a'));
    proxy.setPlan(
      onceFor(
        (r) => r.method === 'GET' && r.path.includes(`${prefix}err-1`),
        { action: 'error', status: 503 },
        2,
      ),
    );
    expect(text((await faulty.get('err-1'))!.body)).toBe('a');

    proxy.setPlan(() => ({ action: 'error', status: 503 }));
    const { ms, out } = await elapsed(() => faulty.put('err-1', utf8('b'), { ifNoneMatch: '*' }));
    proxy.setPlan(undefined);
    expect(StorageUnavailableError.is(out)).toBe(true);
    // An S3 5xx may have been applied: the adapter cannot tell, so a write says it may have landed.
    expect((out as StorageUnavailableError).mayHaveLanded).toBe(true);
    expect(ms).toBeLessThan(timeouts.deadlineMs! + 1000);
  });

  it('with storage paused every call fails within the deadline, ping reports a timeout quickly, and all recovers on resume', async () => {
    await direct.put('paused/a', utf8('before'));
    proxy.pause();
    try {
      const calls = await Promise.all([
        elapsed(() => faulty.get('paused/a')),
        elapsed(() => faulty.list('paused/')),
        elapsed(() => faulty.delete('paused/none')),
        elapsed(() => faulty.put('paused/b', utf8('during'), { ifNoneMatch: '*' })),
      ]);
      for (const { ms, out } of calls) {
        expect(StorageUnavailableError.is(out), String(out)).toBe(true);
        // Correctness bound: the deadline plus one backoff and scheduling slack, never the pause's length.
        expect(ms).toBeLessThan(timeouts.deadlineMs! + 1500);
        expect(ms).toBeGreaterThanOrEqual(timeouts.deadlineMs! - 800);
      }
      // The create-only PUT's request reached the (paused) server: it may land later.
      expect((calls[3]!.out as StorageUnavailableError).mayHaveLanded).toBe(true);
      expect((calls[0]!.out as StorageUnavailableError).mayHaveLanded).toBe(false);

      const { ms, out } = await elapsed(() => faulty.ping(400));
      expect(out).toMatchObject({ ok: false, reason: 'timeout' });
      expect(ms).toBeLessThan(1400);
    } finally {
      proxy.resume();
    }
    await proxy.idle();
    expect(await faulty.ping(2000)).toMatchObject({ ok: true });
    expect(text((await faulty.get('paused/a'))!.body)).toBe('before');
    // The paused server worked through its backlog on resume: the PUT that "failed" landed. A retry by
    // the caller now meets its own earlier write as a precondition failure, which only the body can tell.
    expect(text((await direct.get('paused/b'))!.body)).toBe('during');
    const retry = await faulty
      .put('paused/b', utf8('during'), { ifNoneMatch: '*' })
      .catch((e: unknown) => e);
    expect(PreconditionFailedError.is(retry)).toBe(true);
  }, 30_000);

  it('ping names the failure class: refused connection, refused credentials', async () => {
    const closed = storeVia('http://127.0.0.1:9');
    expect(await closed.ping(1000)).toMatchObject({
      ok: false,
      reason: 'unreachable',
      error: 'ECONNREFUSED',
    });
    const wrongKey = storeVia(inject('s3').endpoint, { secretAccessKey: 'not-the-secret' });
    const denied = await wrongKey.ping(2000);
    expect(denied).toMatchObject({ ok: false, reason: 'denied' });
    expect(denied.error).toMatch(/^HTTP 403/);
    expect(JSON.stringify(denied)).not.toContain('not-the-secret');
  });

  it('under a seeded fault mix, concurrent compare-and-swap writers that check their own write id lose and duplicate nothing', async () => {
    proxy.setPlan(
      randomFaults(12, {
        drop: 0.08,
        loseAnswer: 0.12,
        error500: 0.05,
        error503: 0.05,
        delay: { p: 0.2, maxMs: 40 },
      }),
    );
    const key = 'mix/counter';
    await direct.put(key, utf8(JSON.stringify({ ids: [] })));
    const acked: string[] = [];
    // What the session layer must do: after afterLostAnswer or mayHaveLanded, read and look for its own id.
    const appendOnce = async (id: string) => {
      for (let tries = 0; tries < 60; tries++) {
        let current;
        try {
          current = await faulty.get(key);
        } catch (err) {
          if (StorageUnavailableError.is(err)) continue;
          throw err;
        }
        const ids = (JSON.parse(text(current!.body)) as { ids: string[] }).ids;
        if (ids.includes(id)) return; // an earlier attempt of ours landed
        try {
          await faulty.put(key, utf8(JSON.stringify({ ids: [...ids, id] })), {
            ifMatch: current!.etag,
          });
          return;
        } catch (err) {
          if (PreconditionFailedError.is(err) || StorageUnavailableError.is(err)) continue; // read again and look
          throw err;
        }
      }
      throw new Error(`${id}: no progress`);
    };
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 12; i++) {
          const id = `w${w}-${i}`;
          await appendOnce(id);
          acked.push(id);
        }
      }),
    );
    proxy.setPlan(undefined);
    const stored = (JSON.parse(text((await direct.get(key))!.body)) as { ids: string[] }).ids;
    expect(stored).toHaveLength(acked.length);
    expect(new Set(stored)).toEqual(new Set(acked));
    // The mix really injected faults of every kind.
    const kinds = new Set(
      proxy.log.filter((e) => e.path.includes(`${prefix}mix`)).map((e) => e.action),
    );
    expect([...kinds].sort()).toEqual(['drop', 'error', 'lose-answer', 'pass']);
  }, 60_000);
});
