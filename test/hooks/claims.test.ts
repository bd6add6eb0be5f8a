import { createHmac } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { PreconditionFailedError, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { tempLocalStore } from '../support/temp-store.js';

// A `new` hook's delivery is claimed once per attempt (its marker, create-only), and the 202 waits for
// that claim and names its session (review):
// - the session id carries the day of the attempt that claims it: around midnight two attempts compute
//   different ids, the claim settles one, and every 202 names that one;
// - AWS S3 answers a conditional PUT that races another in flight on the same key with 409 (a failed
//   precondition) before the other has landed: the loser reads the marker again until it finds it.
const SECRET = 'claims-hook-secret';
const HOOKS = { ci: { secret: SECRET, namespace: 'alice', session: 'new' } };
const hmac = (data: string) => createHmac('sha256', SECRET).update(data).digest('hex');

/** A signed delivery of `ci`, at the clock's time. */
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

/**
 * A store whose PUTs of `key` wait until released (slow claims), then land in the order they came: each
 * after the one before it has settled (not after a fixed pause, which a loaded machine outlasts).
 */
function holdingPuts(inner: ObjectStore, key: string) {
  const held: (() => Promise<unknown>)[] = [];
  let holding = true;
  const store: ObjectStore = {
    name: inner.name,
    get: (k) => inner.get(k),
    put: async (k, b, o) => {
      if (!holding || k !== key) return inner.put(k, b, o);
      let landed!: Promise<{ etag: string }>;
      await new Promise<void>((r) =>
        held.push(() => {
          r();
          return new Promise((settled) => setTimeout(() => landed.then(settled, settled), 0));
        }),
      );
      landed = inner.put(k, b, o);
      return landed;
    },
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    head: (k) => inner.head!(k),
  };
  const release = async () => {
    holding = false;
    for (const r of held.splice(0)) await r().catch(() => undefined);
  };
  return { store, release, held };
}

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
    head: (k) => inner.head!(k),
  };
}

it('`new`: a retry across midnight while the first claim is in flight: both 202s name the session the message went to', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-02T23:59:59.500Z') });
  try {
    const markerKey = keys.hookDelivery('alice', 'ci', await sha256Hex('mid-1'));
    const { store, release, held } = holdingPuts(tempLocalStore('midnight'), markerKey);
    const app = await makeApp({ env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) }, objects: store });
    const first = send(app, 'mid-1');
    await vi.waitFor(() => expect(held.length).toBe(1)); // the first attempt's claim, in flight
    vi.setSystemTime(Date.parse('2026-11-03T00:00:01Z'));
    const retry = send(app, 'mid-1'); // the sender gave up waiting and sent it again, after midnight
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
