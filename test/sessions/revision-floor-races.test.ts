// The revision floor (lib/sessions/revision-floor.ts) under races, on a local folder and radosgw (review
// s54a, 2026-12-06, of the floor's first version):
// - writes that land between a delete's read and its DELETE are answered, then deleted with the session:
//   the floor passes them by a margin (FLOOR_MARGIN), where it held the revision read (on radosgw an
//   agent appending while a user deleted got such writes in every round);
// - a delete whose floor PUT lands late never lowers a floor another delete raised since (the raise is
//   conditional on the floor it read).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp, TOKENS } from '../http/helpers.js';

const stores: [string, () => ObjectStore][] = [
  ['local folder', () => new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-floor-')))],
  ['radosgw', () => openTestS3('floor-races')],
];

/** `inner` for one process, whose PUTs of revision floors wait until `release()` (a slow request). */
function slowFloorPuts(inner: ObjectStore) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const atGate = new Promise<void>((r) => (reached = r));
  const objects = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'put' || typeof value !== 'function') return value;
      return async (key: string, ...rest: unknown[]) => {
        if (key.includes('/rev/')) {
          reached();
          await gate;
        }
        return value.call(target, key, ...rest);
      };
    },
  }) as ObjectStore;
  return { objects, release, atGate };
}

describe.each(stores)('writes landing during a delete (%s)', (_, make) => {
  it('are covered by the floor: the next life starts above every revision acknowledged', async () => {
    const inner = make();
    const slow = slowFloorPuts(inner);
    const laptop = await makeApp({ objects: slow.objects }); // deletes; its floor PUT takes a while
    const agent = await makeApp({ objects: inner }); // appends meanwhile
    const as = { token: TOKENS.phone };
    const id = `floor-late-${Date.now()}`;
    const say = (content: string) => ({ messages: [{ role: 'user', content }] });
    expect(
      (await agent.call('POST', '/v1/sessions', { ...as, body: { id, task: 'one' } })).status,
    ).toBe(201);
    await agent.call('POST', `/v1/sessions/${id}/messages`, { ...as, body: say('a') }); // 2

    const deleting = laptop.call('DELETE', `/v1/sessions/${id}`); // reads revision 2
    await slow.atGate;
    // Acknowledged appends while the delete's floor PUT is on its way: 3 and 4.
    const r3 = await agent.call('POST', `/v1/sessions/${id}/messages`, { ...as, body: say('b') });
    const r4 = await agent.call('POST', `/v1/sessions/${id}/messages`, { ...as, body: say('c') });
    expect([r3.status, r4.status]).toEqual([200, 200]);
    expect(r4.json.revision).toBe(4);
    slow.release();
    expect((await deleting).status).toBe(204);
    await laptop.background.drain();
    await agent.background.drain();

    // The id is created again (an adapter does so on its next 404).
    const again = await agent.call('POST', '/v1/sessions', { ...as, body: { id, task: 'two' } });
    expect(again.status).toBe(201);
    const stale = await agent.call('GET', `/v1/sessions/${id}`, {
      ...as,
      headers: { 'if-none-match': '"3"' }, // the receipt of an acknowledged append of life one
    });
    expect(stale.status, 'life one\'s ETag "3" matches life two').toBe(200);
    expect(again.json.revision).toBeGreaterThan(4);
    expect(again.json.revision).toBe(1003); // the revision the delete read (2) plus the margin, plus 1
  }, 60_000);
});

describe.each(stores)('a delete whose floor PUT lands late (%s)', (_, make) => {
  it('never lowers the floor another delete raised since', async () => {
    const inner = make();
    const slow = slowFloorPuts(inner);
    const laptop = await makeApp({ objects: slow.objects }); // its floor PUT is slow
    const phone = await makeApp({ objects: inner });
    const as = { token: TOKENS.phone };
    const id = `floor-low-${Date.now()}`;
    const say = (content: string) => ({ messages: [{ role: 'user', content }] });

    // Life 1: revision 2.
    expect(
      (await phone.call('POST', '/v1/sessions', { ...as, body: { id, task: 'one' } })).status,
    ).toBe(201);
    await phone.call('POST', `/v1/sessions/${id}/messages`, { ...as, body: say('a') });

    // The laptop's delete of life 1 read it (revision 2) and sends its floor PUT, which is slow.
    const laptopDelete = laptop.call('DELETE', `/v1/sessions/${id}`);
    await slow.atGate;

    // Meanwhile the phone deletes life 1, creates life 2 (1003..1006) and deletes it: the floor is 2006.
    expect((await phone.call('DELETE', `/v1/sessions/${id}`, as)).status).toBe(204);
    const two = await phone.call('POST', '/v1/sessions', { ...as, body: { id, task: 'two' } });
    expect(two.json.revision).toBe(1003);
    for (const w of ['b', 'c', 'd'])
      await phone.call('POST', `/v1/sessions/${id}/messages`, { ...as, body: say(w) });
    const held = await phone.call('GET', `/v1/sessions/${id}`, as);
    expect(held.headers.get('etag')).toBe('"1006"');
    expect((await phone.call('DELETE', `/v1/sessions/${id}`, as)).status).toBe(204);
    await phone.background.drain();

    // The laptop's floor PUT lands now, then its DELETE (of nothing) answers.
    slow.release();
    await laptopDelete;
    await laptop.background.drain();

    // Life 3 must start above every revision of life 2.
    const three = await phone.call('POST', '/v1/sessions', { ...as, body: { id, task: 'three' } });
    expect(three.status).toBe(201);
    const stale = await phone.call('GET', `/v1/sessions/${id}`, {
      ...as,
      headers: { 'if-none-match': '"1003"' }, // life 2's first tag
    });
    expect(stale.status, 'a tag of life 2 matches life 3').toBe(200);
    expect(three.json.revision).toBeGreaterThan(1006);
  }, 60_000);
});
