import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from './helpers.js';

// Issue 11's answers through the HTTP API, on the local folder and on radosgw: latest and GET heal when
// a session object disappears behind Satchel's back.

const stores: [string, () => ObjectStore | undefined][] = [
  ['local folder', () => undefined],
  ['radosgw', () => openTestS3('trust')],
];

describe.each(stores)('on the %s', (_name, open) => {
  it('latest answers the newest session that exists when the newest listed one vanished, and heals', async () => {
    const objects = open();
    const app = await makeApp(objects ? { objects } : {});
    const ids: string[] = [];
    for (const task of ['oldest', 'middle', 'newest']) {
      const res = await app.call('POST', '/v1/sessions', { body: { task } });
      expect(res.status).toBe(201);
      ids.push(res.json.id);
    }
    // Deleted in the bucket directly, not through Satchel.
    await app.objects.delete(keys.session('alice', ids[2]!));
    const latest = await app.call('GET', '/v1/sessions/latest');
    expect(latest.status).toBe(200);
    expect(latest.json.task).toBe('middle');
    await app.background.drain();
    const list = await app.call('GET', '/v1/sessions');
    expect(list.json.sessions.map((s: { task: string }) => s.task)).toEqual(['middle', 'oldest']);
    // GET of another vanished one: 404, and the list heals too.
    await app.objects.delete(keys.session('alice', ids[0]!));
    expect((await app.call('GET', `/v1/sessions/${ids[0]}`)).status).toBe(404);
    await app.background.drain();
    const after = await app.call('GET', '/v1/sessions');
    expect(after.json.sessions.map((s: { task: string }) => s.task)).toEqual(['middle']);
  });

  it('latest with every listed session gone is 404, never 503', async () => {
    const objects = open();
    const app = await makeApp(objects ? { objects } : {});
    const res = await app.call('POST', '/v1/sessions', { body: { task: 'only' } });
    await app.objects.delete(keys.session('alice', res.json.id));
    const latest = await app.call('GET', '/v1/sessions/latest');
    expect(latest.status).toBe(404);
  });
});
