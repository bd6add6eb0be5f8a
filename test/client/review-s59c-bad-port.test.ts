import { describe, expect, it } from 'vitest';
import { SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { ConfigError, loadConfig } from '../../lib/server/config.js';
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
    'the server refuses PORT=%s at start, naming PORT',
    async (port) => {
      const err = await loadConfig({ PORT: port }, 'local').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(new RegExp(`^PORT ${port} .*bad ports`));
      expect((err as ConfigError).message).not.toContain('\n');
    },
  );

  it('other ports still start: 0 (any free port), 8787, 6001', async () => {
    for (const port of ['0', '8787', '6001'])
      expect((await loadConfig({ PORT: port }, 'local')).port).toBe(Number(port));
  });
});
