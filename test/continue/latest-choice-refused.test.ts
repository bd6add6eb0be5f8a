import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';

// Review s56c, finding 1: a continue on `latest` with an Idempotency-Key stored its choice of session
// (ns/<ns>/continue/latest/<sha256 of key>.json) before the message's write was tried, and kept it when the
// write was refused: the 413 (message over the cap), 412 (If-Match) and 422 (key used for another request)
// wrote an object, and for 24 h the key stayed pinned to the session latest then. A client that shortened its
// message and retried under the key went to that session although another had become the latest. Now the
// choice goes when the message is not stored (it stays when the write may have landed).
const choices = (dir: string) => {
  const folder = join(dir, 'ns', 'alice', 'continue', 'latest');
  return existsSync(folder) ? readdirSync(folder) : [];
};

describe('continue on latest with a key, refused', () => {
  it('a 413, a 412 and a 422 leave no choice; a corrected retry under the key goes to the latest now', async () => {
    const app = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '20000' } });
    const create = async (id: string) =>
      expect(
        (
          await app.call('POST', '/v1/sessions', {
            body: { task: 't', id, messages: [{ role: 'user', content: 'hi' }] },
          })
        ).status,
      ).toBe(201);
    await create('one');
    const ask = (message: string, key: string, ifMatch?: string) =>
      app.call('POST', '/v1/sessions/latest/continue', {
        body: { message },
        headers: { 'idempotency-key': key, ...(ifMatch ? { 'if-match': ifMatch } : {}) },
      });
    expect((await ask('x'.repeat(30_000), 'k-413')).status).toBe(413);
    expect((await ask('hello', 'k-412', '"99"')).status).toBe(412);
    expect((await ask('first', 'k-422')).status).toBe(200);
    await settleAll(app);
    expect(choices(app.dir)).toHaveLength(1); // k-422's, whose message is stored
    await create('two'); // now the latest
    // The same key for another request: 422, and its choice (one's) stays, as its first request stored.
    expect((await ask('another', 'k-422')).status).toBe(422);
    await settleAll(app);
    expect(choices(app.dir)).toHaveLength(1);
    // The 413's retry, shortened, under its key: to the latest now (before: to `one`, pinned by the 413).
    const retried = await ask('short', 'k-413');
    expect(retried.status).toBe(200);
    expect(retried.json.id).toBe('two');
    const two = await app.call('GET', '/v1/sessions/two');
    expect(two.json.messages.at(-1)).toEqual({ role: 'user', content: 'short' });
  });
});
