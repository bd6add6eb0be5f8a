import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp, TOKENS } from './helpers.js';

// A session deleted and created again under its id is another session: no tag of its earlier life
// (`If-None-Match`, `If-Match`) may match it. Until 2026-12-06 it started again at revision 1 (review s53h).

const stores: [string, () => ObjectStore | undefined][] = [
  ['local folder', () => undefined],
  ['radosgw', () => openTestS3('revision-reuse')],
];

describe.each(stores)('an id created again after its delete (%s)', (_, make) => {
  it('starts above every revision of the deleted session: stale tags are 200 and 412, never 304 or applied', async () => {
    const laptop = await makeApp({ ...optional(make()) });
    const phone = await makeApp({ objects: laptop.objects }); // another process on the same storage
    const id = `reuse-${Date.now()}`;
    const as = { token: TOKENS.phone };
    const say = (content: string) => ({ messages: [{ role: 'user', content }] });
    expect((await laptop.call('POST', '/v1/sessions', { body: { id, task: 'old' } })).status).toBe(
      201,
    );
    for (const word of ['one', 'two'])
      await laptop.call('POST', `/v1/sessions/${id}/messages`, { body: say(word) });
    const held = await phone.call('GET', `/v1/sessions/${id}`, as);
    expect(held.headers.get('etag')).toBe('"3"');
    expect((await laptop.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    await laptop.background.drain();

    const again = await laptop.call('POST', '/v1/sessions', { body: { id, task: 'new' } });
    expect(again.status).toBe(201);
    // Above the floor: the revision the delete read plus a margin (FLOOR_MARGIN) for writes landing
    // before its DELETE.
    expect(again.headers.get('etag')).toBe('"1004"');
    expect(again.json.revision).toBe(1004);
    for (const tag of ['"1"', '"2"', '"3"']) {
      const read = await phone.call('GET', `/v1/sessions/${id}`, {
        ...as,
        headers: { 'if-none-match': tag },
      });
      expect(read.status, tag).toBe(200);
      expect(read.json.task).toBe('new');
    }
    const ifMatch = { ...as, headers: { 'if-match': '"3"' } };
    const put = await phone.call('PUT', `/v1/sessions/${id}`, {
      ...ifMatch,
      body: { task: 'old', messages: [] },
    });
    expect(put.status).toBe(412);
    const append = await phone.call('POST', `/v1/sessions/${id}/messages`, {
      ...ifMatch,
      body: say('stale'),
    });
    expect(append.status).toBe(412);
    expect((await phone.call('DELETE', `/v1/sessions/${id}`, ifMatch)).status).toBe(412);
    const now = await laptop.call('GET', `/v1/sessions/${id}`);
    expect(now.json).toMatchObject({ task: 'new', revision: 1004, messages: [] });

    // Its own tags work as any session's; a second delete raises the floor again, from another process.
    const grown = await laptop.call('POST', `/v1/sessions/${id}/messages`, {
      headers: { 'if-match': '"1004"' },
      body: say('three'),
    });
    expect(grown.json.revision).toBe(1005);
    expect((await phone.call('DELETE', `/v1/sessions/${id}`, as)).status).toBe(204);
    await phone.background.drain();
    const fresh = await makeApp({ objects: laptop.objects }); // nothing of it in memory
    const third = await fresh.call('POST', '/v1/sessions', { body: { id, task: 'third' } });
    expect(third.json.revision).toBe(2006);
    // A generated id is new: it starts at 1.
    const other = await fresh.call('POST', '/v1/sessions', { body: { task: 'other' } });
    expect(other.json.revision).toBe(1);
    // Listed as the new session (its first version's log record says so, whatever the clocks).
    await fresh.background.drain();
    const listed = await makeApp({ objects: laptop.objects });
    const rows = (await listed.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
    expect(rows.filter((s) => s.id === id)).toEqual([expect.objectContaining({ task: 'third' })]);
  });

  it('keeps no text of the deleted session: the floor is named by a digest and holds a number', async () => {
    const app = await makeApp({ ...optional(make()) });
    const id = `floor-${Date.now()}-zqfloorid`;
    await app.call('POST', '/v1/sessions', { body: { id, task: 'zqfloortask' } });
    expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    await app.background.drain();
    await app.sessions.settled();
    const floors = await listAll(app.objects, 'ns/alice/rev/');
    expect(floors.length).toBeGreaterThan(0);
    for (const key of floors) {
      expect(key).not.toContain('zqfloor');
      const body = new TextDecoder().decode((await app.objects.get(key))!.body);
      expect(body).toMatch(/^\{"r":\d+\}$/);
    }
  });

  it('a delete whose floor cannot be stored deletes nothing and says so', async () => {
    const inner = make() ?? new LocalStore((await makeApp()).dir);
    let refuse = true;
    const objects: ObjectStore = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'put' || typeof value !== 'function') return value;
        return (key: string, ...rest: unknown[]) =>
          refuse && key.includes('/rev/')
            ? Promise.reject(new Error('storage refused the PUT'))
            : value.call(target, key, ...rest);
      },
    });
    const app = await makeApp({ objects });
    const id = `refused-${Date.now()}`;
    await app.call('POST', '/v1/sessions', { body: { id, task: 'kept' } });
    const refused = await app.call('DELETE', `/v1/sessions/${id}`);
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect((await app.call('GET', `/v1/sessions/${id}`)).json.task).toBe('kept');
    refuse = false;
    expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    expect((await app.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
  });
});

function optional(objects: ObjectStore | undefined): { objects?: ObjectStore } {
  return objects ? { objects } : {};
}
