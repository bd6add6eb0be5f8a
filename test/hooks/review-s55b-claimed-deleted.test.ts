import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s55b, finding 5. design.md: markers "are not removed with their session: a redelivery for a
// deleted session stays a no-op". Without a model, the marker went from `claimed` straight to `done`: when
// the `done` PUT failed after the message was stored (logged "webhook delivery failed", to redeliver), the
// marker stayed `claimed`. The user deleted the session; the redelivery the log asked for then created it
// again with the payload (`new`), or moved the payload to a fresh session (`latest`). Now the marker says
// `stored` once the message is, with or without a model, and a redelivery finds nothing owed.
const SECRET = 'ops-hook-secret-0123456789';

/** The given store, whose PUTs of a webhook marker in state `done` fail while `fail.done`. */
function failingDonePut(fail: { done: boolean }, s3: boolean): ObjectStore {
  const inner: ObjectStore = s3
    ? openTestS3('s55b-resurrect')
    : new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-s55b-')));
  return {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (fail.done && k.includes('/hooks/') && text(b).includes('"done"'))
        throw new StorageUnavailableError('injected: the done PUT fails');
      return inner.put(k, b, o);
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head!(k),
  };
}

describe('a redelivery after the session was deleted (review s55b, finding 5)', () => {
  for (const store of ['local', 'radosgw'] as const)
    for (const session of ['new', 'latest', 'ops-log'] as const)
      it(`${store}, ${session} hook: the deleted delivery stays deleted`, async () => {
        const fail = { done: true };
        const hooks = { ci: { secret: SECRET, namespace: 'alice', session } };
        const app = await makeApp({
          objects: failingDonePut(fail, store === 'radosgw'),
          env: { SATCHEL_HOOKS: JSON.stringify(hooks) },
        });
        if (session === 'latest')
          await app.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } });
        const body = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
        const send = () => app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, body, 'd-7'));
        expect((await send()).status).toBe(202);
        await settleAll(app);
        expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(1);
        const list1 = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
        expect(list1).toHaveLength(1);
        const id = list1[0]!.id;
        const got = await app.call('GET', `/v1/sessions/${id}`);
        expect(JSON.stringify(got.json)).toContain('quokkaservice');
        // The user deletes the session holding the delivery; then the operator redelivers, as logged.
        expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
        fail.done = false;
        expect((await send()).status).toBe(202);
        await settleAll(app);
        // Before: the session was back (`new`, the fixed id) or the payload in a fresh one (`latest`).
        expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
        expect(app.logs.find('webhook delivery failed', 'warn')).toHaveLength(1);
      });
});
