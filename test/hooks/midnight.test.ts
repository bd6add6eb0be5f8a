import { createHmac } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { tempLocalStore } from '../support/temp-store.js';

// A `new` hook's session id carries the day of the attempt that claims the delivery. Around midnight two
// attempts compute different ids; the claim settles one, and every 202 must name that one (review).
const SECRET = 'midnight-hook-secret';
const HOOKS = { ci: { secret: SECRET, namespace: 'alice', session: 'new' } };
const hmac = (data: string) => createHmac('sha256', SECRET).update(data).digest('hex');

/** A store whose PUTs of `key` wait until released (slow claims), in the order they came. */
function holdingPuts(inner: ObjectStore, key: string) {
  const held: (() => void)[] = [];
  let holding = true;
  const store: ObjectStore = {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (holding && k === key) await new Promise<void>((r) => held.push(r));
      return inner.put(k, b, o);
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    exists: (k) => inner.exists!(k),
  };
  const release = async () => {
    holding = false;
    for (const r of held.splice(0)) {
      r();
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  return { store, release, held };
}

it('`new`: a retry across midnight while the first claim is in flight: both 202s name the session the message went to', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-02T23:59:59.500Z') });
  try {
    const markerKey = keys.hookDelivery('alice', 'ci', await sha256Hex('mid-1'));
    const { store, release, held } = holdingPuts(tempLocalStore('midnight'), markerKey);
    const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) }, objects: store });
    const body = JSON.stringify({ type: 'note', n: 1 });
    const send = () => {
      const t = Math.floor(Date.now() / 1000);
      return app.call('POST', '/v1/hooks/ci', {
        token: null,
        raw: body,
        headers: {
          'content-type': 'application/json',
          'x-satchel-delivery': 'mid-1',
          'x-satchel-signature': `t=${t},v1=${hmac(`${t}.${body}`)}`,
        },
      });
    };
    const first = send();
    await vi.waitFor(() => expect(held.length).toBe(1)); // the first attempt's claim, in flight
    vi.setSystemTime(Date.parse('2026-11-03T00:00:01Z'));
    const retry = send(); // the sender gave up waiting and sent it again, after midnight
    await vi.waitFor(() => expect(held.length).toBe(2));
    await release();
    const answers = await Promise.all([first, retry]);
    await app.background.drain();
    const listed = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
    expect(listed).toHaveLength(1); // one session: the first claim to land decided
    expect(listed[0]!.id.slice(0, 8)).toBe('20261102');
    for (const answer of answers) {
      expect(answer.status).toBe(202);
      expect(answer.json.session).toBe(listed[0]!.id);
    }
  } finally {
    vi.useRealTimers();
  }
});
