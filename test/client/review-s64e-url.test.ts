// Review s64e, 4: a `url` without its scheme (`localhost:8787`, as a user types SATCHEL_URL) was taken by
// the constructor; fetch refused every attempt ('unknown scheme', ERR_INVALID_URL), and the client retried
// them as network failures and said the write `mayHaveLanded`, although nothing could have been sent.
import { describe, expect, it } from 'vitest';
import { SatchelClient, SatchelConnectionError } from '../../lib/client/index.js';
import { neverSent } from '../../lib/client/errors.js';
import { startSatchelServer } from '../support/satchel-server.js';

describe('review s64e: a url fetch cannot send to', () => {
  it.each(['localhost:8787', '127.0.0.1:8787', 'htp://127.0.0.1:8787', 'ftp://example.com', ''])(
    '%j is a TypeError at construction naming the form expected',
    (url) => {
      expect(() => new SatchelClient({ url })).toThrow(TypeError);
      expect(() => new SatchelClient({ url })).toThrow('http://localhost:8787');
    },
  );

  it('the message does not show the URL, which may hold a password', () => {
    let message = '';
    try {
      new SatchelClient({ url: 'me:s3cret-Pw@localhost:8787' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('http://');
    expect(message).not.toContain('s3cret');
  });

  it('http and https URLs are taken, whatever their case, and a path on the page origin (review s64h)', () => {
    for (const url of [
      'http://localhost:8787',
      'HTTPS://satchel.example/',
      'http://[::1]:8787',
      '/satchel',
    ])
      expect(new SatchelClient({ url }).url).toBe(url.replace(/\/$/, ''));
  });

  it("fetch's refusals of a URL (real undici errors) are never sent", async () => {
    for (const url of ['localhost:8787/v1/health', '127.0.0.1:8787/v1/health']) {
      const err = await fetch(url).catch((e: unknown) => e);
      expect(neverSent(err)).toBe(true);
    }
  });

  it("a URL fetch refuses (a caller's fetch rewrote it) is not retried: mayHaveLanded false", async () => {
    const server = await startSatchelServer();
    try {
      let attempts = 0;
      const client = new SatchelClient({
        url: server.url,
        retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 1 },
        // A caller's fetch that routes requests, misconfigured: the URL it sends has no http scheme.
        fetch: (input, init) => {
          attempts++;
          return fetch(String(input).replace(/^http:\/\//, ''), init);
        },
      });
      const err = await client
        .append('s', { messages: [{ role: 'user', content: 'hello' }] })
        .catch((e: unknown) => e);
      expect(SatchelConnectionError.is(err)).toBe(true);
      expect((err as SatchelConnectionError).mayHaveLanded).toBe(false);
      expect(attempts).toBe(1);
    } finally {
      await server.close();
    }
  });
});
