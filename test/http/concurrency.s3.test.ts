import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { listAll } from '../../lib/storage/prefix.js';
import { CountingStore } from '../../lib/storage/counting.js';
import { utf8 } from '../../lib/storage/port.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from './helpers.js';

/** Several "devices": separate app instances (separate caches) on one radosgw bucket prefix. */
async function devices(n: number) {
  const shared = openTestS3('concurrency');
  return Promise.all(Array.from({ length: n }, () => makeApp({ objects: shared })));
}

describe('concurrency through the S3 adapter (radosgw)', () => {
  it('8 writers × 25 appends without If-Match: all 200 messages stored exactly once, each writer in order', async () => {
    const apps = await devices(8);
    const { json } = await apps[0]!.call('POST', '/v1/sessions', { body: { task: 'race' } });
    await Promise.all(
      apps.map(async (app, w) => {
        for (let i = 0; i < 25; i++) {
          const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
            body: { messages: [{ role: 'user', content: `w${w}-m${i}` }] },
          });
          expect(res.status).toBe(200);
        }
      }),
    );
    const stored = (await apps[0]!.call('GET', `/v1/sessions/${json.id}`)).json;
    const contents: string[] = stored.messages.map((m: { content: string }) => m.content);
    expect(contents).toHaveLength(200);
    expect(new Set(contents).size).toBe(200);
    expect(stored.revision).toBe(201);
    for (let w = 0; w < 8; w++) {
      const mine = contents.filter((c) => c.startsWith(`w${w}-`));
      expect(mine).toEqual(Array.from({ length: 25 }, (_, i) => `w${w}-m${i}`));
    }
  });

  it('8 clients of one server × 25 appends: queued appends go out as group commits, none lost, no session re-read', async () => {
    const counting = new CountingStore(openTestS3('one-server'));
    const app = await makeApp({ objects: counting });
    const { json } = await app.call('POST', '/v1/sessions', { body: { task: 'one server' } });
    // A namespace in use has a manifest root (the first list builds it from the session objects).
    await app.call('GET', '/v1/sessions');
    await app.background.drain();
    counting.reset();
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          const res = await app.call('POST', `/v1/sessions/${json.id}/messages`, {
            body: { messages: [{ role: 'user', content: `w${w}-m${i}` }] },
          });
          expect(res.status).toBe(200);
        }
      }),
    );
    const sessionPuts = counting.counts.putsByKind.sessions ?? 0;
    // At most one PUT per append, none lost to a race; the appends that queue up share one.
    expect(sessionPuts).toBeLessThan(200);
    expect(sessionPuts).toBeGreaterThanOrEqual(25);
    expect(counting.counts.getsByKind.sessions ?? 0).toBe(0); // every append wrote on the cached copy
    const stored = (await app.call('GET', `/v1/sessions/${json.id}`)).json;
    const contents: string[] = stored.messages.map((m: { content: string }) => m.content);
    expect(new Set(contents).size).toBe(200);
    for (let w = 0; w < 8; w++)
      expect(contents.filter((c) => c.startsWith(`w${w}-`))).toEqual(
        Array.from({ length: 25 }, (_, i) => `w${w}-m${i}`),
      );
  });

  it('two replaces with the same If-Match: exactly one succeeds, the other gets 412', async () => {
    const [a, b] = await devices(2);
    const { json } = await a!.call('POST', '/v1/sessions', { body: { task: 'replace race' } });
    await b!.call('GET', `/v1/sessions/${json.id}`); // warm b's cache too
    const results = await Promise.all(
      [a!, b!].map((app, i) =>
        app.call('PUT', `/v1/sessions/${json.id}`, {
          body: { task: `by ${i}`, messages: [] },
          headers: { 'if-match': '"1"' },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const winner = results.find((r) => r.status === 200)!.json.task;
    expect((await a!.call('GET', `/v1/sessions/${json.id}`)).json).toMatchObject({
      task: winner,
      revision: 2,
    });
  });

  it('20 parallel creates from several devices all appear in list', async () => {
    const apps = await devices(4);
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        apps[i % 4]!.call('POST', '/v1/sessions', { body: { task: `parallel ${i}` } }),
      ),
    );
    expect(created.every((r) => r.status === 201)).toBe(true);
    for (const app of apps) {
      const listed = await app.call('GET', '/v1/sessions?limit=100');
      expect(listed.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(
        created.map((r) => r.json.id).sort(),
      );
    }
  });

  it('the manifest deleted, or overwritten with garbage: list is still complete', async () => {
    const shared = openTestS3('manifest');
    const [app] = await Promise.all([makeApp({ objects: shared })]);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++)
      ids.push((await app.call('POST', '/v1/sessions', { body: { task: `s${i}` } })).json.id);
    await app.sessions.manifest.compact('alice', true);
    const listIds = async () => {
      const fresh = await makeApp({ objects: shared }); // a new process: no caches
      const res = await fresh.call('GET', '/v1/sessions?limit=100');
      expect(res.status, JSON.stringify(res.json)).toBe(200); // a failure says what it answered
      return res.json.sessions.map((s: { id: string }) => s.id).sort();
    };
    expect(await listIds()).toEqual(ids.slice().sort());
    const manifestKeys = await listAll(shared, keys.manifest('alice'));
    for (const k of manifestKeys) await shared.put(k, utf8('garbage{'));
    expect(await listIds()).toEqual(ids.slice().sort());
    await shared.delete(await listAll(shared, keys.manifest('alice')));
    expect(await listIds()).toEqual(ids.slice().sort());
  });

  it('log records overwritten with garbage, covered or not, do not stop the list (the rebuild skips them)', async () => {
    const shared = openTestS3('garbage-logs');
    const app = await makeApp({ objects: shared });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await app.call('POST', '/v1/sessions', { body: { task: `s${i}` } })).json.id);
    await app.background.drain();
    await app.sessions.manifest.compact('alice', true);
    // Written after the compaction: their log records are not covered by any root.
    for (let i = 4; i < 8; i++)
      ids.push((await app.call('POST', '/v1/sessions', { body: { task: `s${i}` } })).json.id);
    await app.background.drain();
    const logs = await listAll(shared, `${keys.manifest('alice')}l/`);
    expect(logs.length).toBeGreaterThan(0);
    for (const k of await listAll(shared, keys.manifest('alice')))
      await shared.put(k, utf8('garbage{'));
    for (let i = 0; i < 2; i++) {
      const fresh = await makeApp({ objects: shared }); // a new process: no caches
      const res = await fresh.call('GET', '/v1/sessions?limit=100');
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.sessions.map((s: { id: string }) => s.id).sort()).toEqual(ids.slice().sort());
    }
  });

  it('a session written but never recorded in the manifest (crash) still shows up in list and latest', async () => {
    const shared = openTestS3('crash');
    const app = await makeApp({ objects: shared });
    await app.call('POST', '/v1/sessions', { body: { task: 'before' } });
    await app.call('GET', '/v1/sessions');
    // A device that died after writing its pending marker and the session object, before its log record.
    const { encodeSession } = await import('../../lib/model/codec.js');
    await app.sessions.manifest.markPending('alice', 'crashed-one', 'feedface01');
    const now = new Date(Date.now() + 1000).toISOString();
    const orphan = {
      id: 'crashed-one',
      created_at: now,
      updated_at: now,
      model: '',
      provider: '',
      turns: 0,
      task: 'orphan',
      sandbox: false,
      messages: [],
      external_refs: [],
      untrusted_ingested: false,
      episode_untrusted: false,
      episode_taint_tracked: false,
      revision: 1,
    };
    await shared.put(keys.session('alice', 'crashed-one'), encodeSession(orphan));
    const fresh = await makeApp({ objects: shared });
    expect(
      (await fresh.call('GET', '/v1/sessions')).json.sessions.map((s: { id: string }) => s.id),
    ).toContain('crashed-one');
    expect((await fresh.call('GET', '/v1/sessions/latest')).json.id).toBe('crashed-one');
  });
});
