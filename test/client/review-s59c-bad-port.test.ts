import { describe, expect, it } from 'vitest';
import { SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { checkPort, ConfigError, loadConfig } from '../../lib/server/config.js';
import { satchel } from '../cli/run.js';

// Review s59c: a port fetch refuses (the fetch spec's "bad ports": 6000, 5060, 6665-6669, 10080, ...).
// undici refuses such a URL before it opens a connection (TypeError 'fetch failed', cause Error('bad port'),
// no `code`). Before the fix the client counted that as an attempt that may have landed and retried it,
// so `satchel session append` exited 3 "The write may have been stored" with a rerun command for a request
// never sent, and `PORT=6000 npm start` started a server that curl reached but the CLI, the client and
// browsers never could. Nothing here listens on port 6000: fetch refuses before any connection.
const URL_6000 = 'http://127.0.0.1:6000';

describe('a port fetch refuses (review s59c)', () => {
  it('the client says nothing was sent and does not try again', async () => {
    let attempts = 0;
    const client = new SatchelClient({
      url: URL_6000,
      retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const err = await client
      .append('s', { messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(SatchelConnectionError.is(err)).toBe(true);
    expect((err as SatchelConnectionError).mayHaveLanded).toBe(false);
    expect((err as SatchelConnectionError).message).toContain('bad port');
    // fetch refuses that port every time: a retry cannot help.
    expect(attempts).toBe(1);
  });

  it('satchel session append: the plain connection error naming the port, no "may have been stored"', async () => {
    const r = await satchel(['session', 'append', 'some-id', 'hello'], { SATCHEL_URL: URL_6000 });
    expect(r.code).toBe(3);
    expect(r.stderr).not.toContain('may have been stored');
    expect(r.stderr).not.toContain('--idempotency-key');
    expect(r.stderr).toContain('fetch refuses port 6000');
    expect(r.stderr).toContain('another PORT');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('satchel session list does not ask whether the server is running', async () => {
    const r = await satchel(['session', 'list'], { SATCHEL_URL: URL_6000 });
    expect(r.code).toBe(3);
    expect(r.stderr).not.toContain('Is the server running?');
    expect(r.stderr).toContain('fetch refuses port 6000');
  });

  it.each(['6000', '5060', '6665', '10080'])(
    'the Node server refuses PORT=%s at start, naming PORT (checkPort, called by functions/node.ts)',
    (port) => {
      let err: unknown;
      try {
        checkPort(Number(port));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(new RegExp(`^PORT ${port} .*bad ports`));
      expect((err as ConfigError).message).not.toContain('\n');
    },
  );

  it('other ports still start: 0 (any free port), 8787, 6001', () => {
    for (const port of [0, 8787, 6001]) expect(() => checkPort(port)).not.toThrow();
  });

  // Review s59i: the check was in loadConfig, which a Lambda (and a Worker) runs too, though it listens on
  // no PORT: a function whose environment held PORT=6000 failed its init, every request a 500.
  it('a Lambda or a Worker takes a PORT it never listens on', async () => {
    const s3 = {
      S3_BUCKET: 'b',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-0123',
    };
    expect((await loadConfig({ ...s3, PORT: '6000' }, 's3')).port).toBe(6000);
    expect((await loadConfig({ PORT: '6000' }, 'local')).port).toBe(6000);
  });

  // Review s59i: badPort looked one cause deep, so through a fetch wrapper of the caller's that rethrows
  // with a cause (logging, tracing) the refusal was retried and reported as maybe landed.
  it('through a fetch wrapper that wraps the error, still nothing sent and no retry', async () => {
    let attempts = 0;
    const client = new SatchelClient({
      url: URL_6000,
      retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async (input, init) => {
        attempts++;
        try {
          return await fetch(input, init);
        } catch (err) {
          throw new Error('traced fetch failed', { cause: err });
        }
      },
    });
    const err = await client
      .append('s', { messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(SatchelConnectionError.is(err)).toBe(true);
    expect((err as SatchelConnectionError).mayHaveLanded).toBe(false);
    expect(attempts).toBe(1);
  });
});
