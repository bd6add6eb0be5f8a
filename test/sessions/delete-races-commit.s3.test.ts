// Review s53c (2026-12-06), fixed the same day; this test failed on the code before the fix.
// On radosgw a conditional PUT is not atomic with a DELETE: a commit whose `If-Match` was checked before
// the DELETE can land after it (scratch reproduction: 39 to 103 of about 280 races), and the session came
// back after its DELETE had answered 204: "Deleted means gone" (contract, Additions v1.1). Here the race
// is made certain: the writer's commit PUT waits for the DELETE and then lands as radosgw lands it (its
// precondition already checked), and the DELETE answers only once it has.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { text } from '../../lib/model/bytes.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';

function wrap(inner: ObjectStore, over: Partial<ObjectStore>): ObjectStore {
  return new Proxy(inner, {
    get(target, p, receiver) {
      if (p in over) return over[p as keyof ObjectStore];
      const v = Reflect.get(target, p, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

it('a DELETE racing a commit that lands after it leaves no object holding the session', async () => {
  const shared = openTestS3('delete-race');
  let deleted!: () => void;
  const afterDelete = new Promise<void>((r) => (deleted = r));
  let landed!: () => void;
  const commitLanded = new Promise<void>((r) => (landed = r));
  let armed = false;
  const writer = wrap(shared, {
    async put(key, body, options) {
      if (!armed || !key.includes('/sessions/') || !options?.ifMatch)
        return shared.put(key, body, options);
      armed = false;
      // Its precondition holds now; the DELETE comes before the write lands.
      const { etag } = await shared.head!(key).then((h) => h ?? { etag: '' });
      expect(etag).toBe(options.ifMatch);
      await afterDelete;
      const { ifMatch: _checked, ...rest } = options;
      const put = await shared.put(key, body, rest);
      landed();
      return put;
    },
  });
  const deleter = wrap(shared, {
    async delete(keys) {
      await shared.delete(keys);
      if ([keys].flat().some((k) => k.includes('/sessions/'))) {
        deleted();
        await commitLanded;
      }
    },
  });
  const a = await makeApp({ objects: deleter });
  const b = await makeApp({ objects: writer });
  const c = await a.call('POST', '/v1/sessions', {
    body: { task: 'doomed task words', messages: [{ role: 'user', content: 'first text here' }] },
  });
  expect(c.status).toBe(201);
  const id = c.json.id as string;
  expect((await b.call('GET', `/v1/sessions/${id}`)).status).toBe(200);
  armed = true;
  const append = b.call('POST', `/v1/sessions/${id}/messages`, {
    body: { messages: [{ role: 'user', content: 'racing words appended' }] },
  });
  await new Promise((r) => setTimeout(r, 50)); // the append's commit is waiting for the DELETE
  const d = await a.call('DELETE', `/v1/sessions/${id}`);
  const w = await append;
  expect([d.status, w.status]).toEqual([204, 200]);
  await Promise.all([a.background.drain(), b.background.drain()]);
  expect((await a.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
  const holders: string[] = [];
  for (const key of await listAll(shared, '')) {
    const got = await shared.get(key);
    const body = got ? text(got.body) : '';
    if (/doomed task|first text here|racing words/.test(body)) holders.push(key);
  }
  expect(holders).toEqual([]);
});
