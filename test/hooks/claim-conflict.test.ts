import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { PreconditionFailedError, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { tempLocalStore } from '../support/temp-store.js';

// A `new` delivery's marker is claimed once per attempt, and the 202 waits for that claim. AWS S3 answers
// a conditional PUT that races another in flight on the same key with 409 (a failed precondition) before
// the other has landed: the loser reads the marker again until it finds the winner's (review).
const SECRET = 'conflict-hook-secret';
const HOOKS = { ci: { secret: SECRET, namespace: 'alice', session: 'new' } };
const hmac = (data: string) => createHmac('sha256', SECRET).update(data).digest('hex');

/** AWS-like (and the work's first GET slower, as a network may make it): a conditional PUT of `key` while another is in flight fails its precondition (409). */
function conflictingPuts(inner: ObjectStore, key: string): ObjectStore {
  let inFlight = 0;
  let gets = 0;
  return {
    name: inner.name,
    // Network jitter: the first GET of the marker (the work's) answers 10 ms later than the second.
    get: async (k) => {
      if (k === key && gets++ === 0) await new Promise((r) => setTimeout(r, 10));
      return inner.get(k);
    },
    put: async (k, b, o) => {
      if (k !== key || o?.ifNoneMatch === undefined) return inner.put(k, b, o);
      if (inFlight > 0) throw new PreconditionFailedError(k);
      inFlight++;
      try {
        await new Promise((r) => setTimeout(r, 30));
        return await inner.put(k, b, o);
      } finally {
        inFlight--;
      }
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    exists: (k) => inner.exists!(k),
  };
}

const send = (app: Awaited<ReturnType<typeof makeApp>>, delivery: string) => {
  const body = JSON.stringify({ type: 'note', delivery });
  const t = Math.floor(Date.now() / 1000);
  return app.call('POST', '/v1/hooks/ci', {
    token: null,
    raw: body,
    headers: {
      'content-type': 'application/json',
      'x-satchel-delivery': delivery,
      'x-satchel-signature': `t=${t},v1=${hmac(`${t}.${body}`)}`,
    },
  });
};

it('`new`: one delivery, and two attempts of one at once, each store one message; every 202 names its session', async () => {
  const markerKey = keys.hookDelivery('alice', 'ci', await sha256Hex('race-1'));
  const store = conflictingPuts(tempLocalStore('conflict'), markerKey);
  const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) }, objects: store });
  const answers = await Promise.all([send(app, 'race-1'), send(app, 'race-1')]);
  await app.background.drain();
  const listed = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
  expect(listed).toHaveLength(1);
  const session = (await app.call('GET', `/v1/sessions/${listed[0]!.id}`)).json;
  expect(session.messages).toHaveLength(1);
  for (const answer of answers) {
    expect(answer.status).toBe(202);
    expect(answer.json.session).toBe(listed[0]!.id);
  }
  expect(app.logs.find('webhook delivery failed', 'warn')).toEqual([]);
});
