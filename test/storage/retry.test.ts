import { describe, expect, it } from 'vitest';
import { PreconditionFailedError } from '../../lib/storage/port.js';
import { withRetry } from '../../lib/storage/retry.js';

const policy = { attempts: 4, baseMs: 10, maxMs: 40 };
const noSleep = async () => undefined;

describe('withRetry', () => {
  it('retries transient failures, then succeeds', async () => {
    let calls = 0;
    const out = await withRetry('op', async () => (++calls < 3 ? Promise.reject(new Error('503')) : 'ok'), () => true, policy, noSleep);
    expect(out).toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up after the bounded number of attempts with StorageUnavailableError', async () => {
    let calls = 0;
    const err = await withRetry('op', async () => Promise.reject(new Error(`fail ${++calls}`)), () => true, policy, noSleep).catch((e) => e);
    expect(calls).toBe(4);
    expect(err.name).toBe('StorageUnavailableError');
  });

  it('never retries a precondition failure or a permanent error', async () => {
    let calls = 0;
    await expect(withRetry('op', async () => Promise.reject(new PreconditionFailedError(`k${++calls}`)), () => true, policy, noSleep)).rejects.toSatisfy(PreconditionFailedError.is);
    await expect(withRetry('op', async () => Promise.reject(new Error(`403 ${++calls}`)), () => false, policy, noSleep)).rejects.toThrow('403');
    expect(calls).toBe(2);
  });

  it('backs off with growing, capped delays', async () => {
    const delays: number[] = [];
    await withRetry('op', async () => Promise.reject(new Error('x')), () => true, policy, async (ms) => void delays.push(ms)).catch(() => undefined);
    expect(delays).toHaveLength(3);
    delays.forEach((d, i) => expect(d).toBeLessThanOrEqual(Math.min(40, 10 * 2 ** i)));
  });
});
