// Review s58a, finding 2. Every byte of a GET's body past the first MiB extended both the attempt and the
// call's deadline, with no ceiling, on both Node paths (the wire and the SDK's Node stream). A server (or
// a broken proxy) that claimed a 50 GiB object and kept sending faster than the slowest tolerated rate
// held the call, and a growing buffer, for as long as it liked. No Satchel object is over 2 GiB: an answer
// that declares (or sends) more now fails the GET at once with StorageUnavailableError, not retried.
import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import type { S3StoreOptions } from '../../lib/storage/s3.js';
import { nodeWire } from '../../lib/storage/s3-node.js';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { fakeS3 } from '../support/s3.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe.each([
  ['Node wire', { wire: nodeWire }],
  ['SDK only', {}],
] as [string, Partial<S3StoreOptions>][])(
  'a GET of a body larger than any object (%s)',
  (_, via) => {
    it('fails as storage unavailable instead of reading on', async () => {
      const timers = new Set<ReturnType<typeof setInterval>>();
      closers.push(async () => timers.forEach(clearInterval));
      const { url, hits } = await misbehavingServer((_req, res) => {
        res.writeHead(200, { 'content-length': String(50 * 1024 ** 3), etag: '"e1"' });
        const chunk = Buffer.alloc(96 * 1024, 1);
        // Faster than the slowest tolerated rate (1 MiB/s), so the old code granted it time without end.
        const timer = setInterval(() => res.write(chunk), 30);
        timers.add(timer);
        res.on('close', () => clearInterval(timer));
      }, closers);
      const store = fakeS3(url, {
        // Generous enough that only the byte ceiling (never these bounds) can end the GET within the
        // test's time: before the fix it read on past the test's timeout.
        timeouts: { requestMs: 5000, deadlineMs: 10_000 },
        retry: { attempts: 3, baseMs: 1, maxMs: 2 },
        ...via,
      });
      const err = await store.get('k').catch((e: unknown) => e);
      expect(StorageUnavailableError.is(err)).toBe(true);
      expect((err as Error).message).toMatch(/larger than any object/);
      // Not retried: another attempt would meet the same answer.
      expect(hits()).toBe(1);
    }, 20_000);
  },
);
