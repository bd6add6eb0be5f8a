import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Stop 55's left item (review s55b, finding 5, in part): a delivery whose message was stored but whose
// marker stayed `claimed` (the `stored` PUT and the `done` PUT both failed, or the process stopped between
// the append and them). The user deleted the session holding it; the redelivery the log asked for made
// it again, with the payload. A `new` hook's session holds that delivery alone, and its id's revision
// floor (raised by the delete) says it lived and was deleted: the redelivery now leaves it deleted.
const SECRET = 'ops-hook-secret-0123456789';

/** The given store, whose PUTs of a webhook marker past `claimed` fail while `fail.on`. */
function markerStuck(fail: { on: boolean }, s3: boolean): ObjectStore {
  const inner: ObjectStore = s3
    ? openTestS3('claimed-new-deleted')
    : new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-claimed-')));
  return {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (fail.on && k.includes('/hooks/') && /"(stored|done)"/.test(text(b)))
        throw new StorageUnavailableError('injected: the marker PUT fails');
      return inner.put(k, b, o);
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head!(k),
  };
}

describe('a redelivery of a `new` hook whose marker stayed claimed, after its session was deleted', () => {
  for (const store of ['local', 'radosgw'] as const)
    it(`${store}: the deleted delivery stays deleted; a delivery never deleted is stored once`, async () => {
      const fail = { on: true };
      const hooks = { ci: { secret: SECRET, namespace: 'alice', session: 'new' } };
      const app = await makeApp({
        objects: markerStuck(fail, store === 'radosgw'),
        env: { SATCHEL_HOOKS: JSON.stringify(hooks) },
      });
      const body = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
      const send = (delivery: string) =>
        app.call('POST', '/v1/hooks/ci', signedDelivery(SECRET, body, delivery));
      expect((await send('d-8')).status).toBe(202);
      expect((await send('d-9')).status).toBe(202);
      await settleAll(app);
      const sessions = async () =>
        ((await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[]).map(
          (s) => s.id,
        );
      const [a, b] = await sessions();
      expect(b).toBeDefined();
      const held = async (id: string) =>
        (await app.call('GET', `/v1/sessions/${id}`)).json.messages as unknown[];
      // Both stored, both markers still `claimed`.
      for (const id of [a!, b!]) expect(JSON.stringify(await held(id))).toContain('quokkaservice');
      const [deleted, kept] = [a!, b!];
      expect((await app.call('DELETE', `/v1/sessions/${deleted}`)).status).toBe(204);
      fail.on = false;
      // The operator redelivers both, as logged.
      expect((await send('d-8')).status).toBe(202);
      expect((await send('d-9')).status).toBe(202);
      await settleAll(app);
      // Before: the deleted one was back, with the payload.
      expect(await sessions()).toEqual([kept]);
      expect(await held(kept)).toHaveLength(1);
      // Done now: a third delivery of each changes nothing.
      expect((await send('d-8')).status).toBe(202);
      expect((await send('d-9')).status).toBe(202);
      await settleAll(app);
      expect(await sessions()).toEqual([kept]);
    });
});
