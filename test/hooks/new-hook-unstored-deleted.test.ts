// Review s56e (51b9e1e, lib/hooks/hooks.ts store()/ownDeleted, SessionStore.deletedUnder): a redelivery of
// a `new` hook whose marker is `claimed` and whose session "lived and was deleted" is marked done, on the
// reasoning that "that session held this delivery alone". But a `claimed` marker also follows an attempt
// that created the (empty) session and then failed to store the message, which the sender was told
// (Lambda: 503 "the webhook delivery could not be stored; send it again"). When the user deletes that
// empty session (it holds no message: nothing to keep), the redelivery the 503 asked for is answered
// 202 accepted and the payload is stored nowhere: an acknowledged delivery dropped without saying so.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';
import { listAll } from '../../lib/storage/prefix.js';

const SECRET = 'ops-hook-secret-0123456789';

/** A local folder whose session PUTs holding the webhook's message are refused (nothing lands) while `fail.on`. */
function refusing(fail: { on: boolean }): { store: ObjectStore; inner: LocalStore } {
  const inner = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s56e-hook-')));
  const store: ObjectStore = {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (fail.on && k.includes('/sessions/') && text(b).includes('quokkaservice'))
        throw new StorageUnavailableError('injected: refused, nothing stored'); // not mayHaveLanded
      return inner.put(k, b, o);
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head(k),
  };
  return { store, inner };
}

it('a redelivery after the user deleted the empty session of a failed `new` delivery stores it (or does not answer 202)', async () => {
  const fail = { on: true };
  const { store, inner } = refusing(fail);
  const hooks = { ci: { secret: SECRET, namespace: 'alice', session: 'new' } };
  const app = await makeApp({
    objects: store,
    answersAfterBackground: true, // Lambda: the answer tells what happened
    env: { SATCHEL_HOOKS: JSON.stringify(hooks) },
  });
  const body = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
  const send = () => app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, body, 'd-1'));
  const first = await send();
  expect(first.status).toBe(503); // "could not be stored; send it again"
  expect(first.json.detail).not.toMatch(/may have been stored/);
  await settleAll(app);
  // The delivery's own session exists, empty (the create landed; the message did not).
  const listed = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
  expect(listed).toHaveLength(1);
  const empty = await app.call('GET', `/v1/sessions/${listed[0]!.id}`);
  expect(empty.json.messages).toHaveLength(0);
  // The user deletes the empty session; storage is well again; the sender sends it again, as told.
  expect((await app.call('DELETE', `/v1/sessions/${listed[0]!.id}`)).status).toBe(204);
  fail.on = false;
  const again = await send();
  await settleAll(app);
  // Whatever the answer, a 202 must mean the payload is stored somewhere.
  let stored = false;
  for (const k of await listAll(inner, 'ns/alice/sessions/')) {
    const got = await inner.get(k);
    if (got && text(got.body).includes('quokkaservice')) stored = true;
  }
  expect({ status: again.status, stored }).toEqual({ status: 202, stored: true });
}, 60_000);
