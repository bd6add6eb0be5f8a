import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s55b, finding 6. On Lambda the answer waits for the work. The delivery's append landed, storage
// lost its answer and then failed until the write gave up, so the write ended "storage did not confirm
// this write: it may have been stored". The route answered 503 "storage is unreachable; try again
// shortly" (logged "the webhook delivery could not be stored"; its OpenAPI 503: "the delivery was not
// stored"), which was untrue: the message was in the session. Now the 503 says it may have been stored,
// and that a redelivery stores it at most once (which it does).
const SECRET = 'ops-hook-secret-0123456789';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };

/**
 * A local store that loses the answer to the first session write holding a webhook's message (it lands)
 * and then fails every request while `outage.down`.
 */
function losingStore(
  outage: { down: boolean },
  loses = (key: string, body: Uint8Array) =>
    key.includes('/sessions/') && text(body).includes('untrusted_content'),
): ObjectStore {
  const inner = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s55b-')));
  let lost = false;
  const gate = (write: boolean) => {
    if (outage.down)
      throw new StorageUnavailableError('injected outage', undefined, { mayHaveLanded: write });
  };
  return {
    name: inner.name,
    get: async (k) => (gate(false), inner.get(k)),
    put: async (k, b, o) => {
      gate(true);
      const out = await inner.put(k, b, o);
      if (!lost && loses(k, b)) {
        lost = outage.down = true;
        throw new StorageUnavailableError('injected: answer lost', undefined, {
          mayHaveLanded: true,
        });
      }
      return out;
    },
    delete: async (k) => (gate(true), inner.delete(k)),
    list: async (p, o) => (gate(false), inner.list(p, o)),
    head: async (k) => (gate(false), inner.head(k)),
  };
}

describe('Lambda webhook whose append landed with its answer lost (review s55b, finding 6)', () => {
  it(
    'answers 503 that the delivery may have been stored; a redelivery stores it once',
    {
      timeout: 60_000,
    },
    async () => {
      const outage = { down: false };
      const app = await makeApp({
        objects: losingStore(outage),
        answersAfterBackground: true,
        env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) },
      });
      const created = await app.call('POST', '/v1/sessions', {
        body: { id: 'ops-log', task: 'ops' },
      });
      expect(created.status).toBe(201);
      const send = () =>
        app.call(
          'POST',
          '/v1/hooks/ops',
          signedDelivery(SECRET, '{"type":"deploy.failed"}', 'lost-1'),
        );
      const res = await send(); // storage stays down until the write gives up and the route answers
      outage.down = false;
      expect(res.status).toBe(503);
      // Before: "storage is unreachable; try again shortly".
      expect(res.json.detail).toMatch(/may have been stored/);
      expect(res.json.detail).toMatch(/at most once/);
      expect(res.headers.get('retry-after')).toBe('2');
      await settleAll(app);
      const messages = () => app.call('GET', '/v1/sessions/ops-log').then((r) => r.json.messages);
      expect(await messages()).toHaveLength(1); // it was stored
      // The sender sends it again: 202, and still one message.
      expect((await send()).status).toBe(202);
      await settleAll(app);
      expect(await messages()).toHaveLength(1);
    },
  );
});

describe('Lambda webhook of a `new` hook whose session create landed with its answer lost', () => {
  it(
    'answers 503 that the delivery was not stored (the create holds no message); a redelivery stores it once',
    { timeout: 60_000 },
    async () => {
      const outage = { down: false };
      const hooks = { ops: { secret: SECRET, namespace: 'alice', session: 'new' } };
      const app = await makeApp({
        // The create of the delivery's own session: a session object without the message.
        objects: losingStore(
          outage,
          (k, b) => k.includes('/sessions/') && !text(b).includes('untrusted_content'),
        ),
        answersAfterBackground: true,
        env: { SATCHEL_HOOKS: JSON.stringify(hooks) },
      });
      const send = () =>
        app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, '{"type":"x"}', 'lost-2'));
      const res = await send();
      outage.down = false;
      expect(res.status).toBe(503);
      // The write that lost its answer stored no message: the answer does not say it may have been.
      expect(res.json.detail).not.toMatch(/may have been stored/);
      expect(res.json.detail).toMatch(/try again/);
      await settleAll(app);
      const again = await send();
      expect(again.status).toBe(202);
      await settleAll(app);
      const got = await app.call('GET', `/v1/sessions/${again.json.session}`);
      expect(got.json.messages).toHaveLength(1);
    },
  );
});
