import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { deletedMeansGone } from '../sessions/deleted-scenario.js';
import { makeApp } from './helpers.js';

describe('deleted means gone (local folder)', () => {
  it('after DELETE and cleanup, no object holds a deleted session’s task or text; the rest still list, read and search', async () => {
    await deletedMeansGone(await makeApp());
  });

  it('a copy another process cached before the delete is not served for the id created again, nor indexed', async () => {
    const b = await makeApp(); // a server that read the session, so holds it in its cache
    const a = await makeApp({ objects: new LocalStore(b.dir), shortLived: true }); // a function
    const id = 'created-again';
    const create = async (word: string, revision: number) => {
      const res = await a.call('POST', '/v1/sessions', {
        body: { id, task: `task ${word}`, messages: [{ role: 'user', content: `text ${word}` }] },
      });
      expect(res.status).toBe(201);
      expect(res.json.revision).toBe(revision);
      await a.background.drain();
    };
    const search = async (app: typeof a, word: string) =>
      (await app.call('POST', '/v1/session_search', { body: { action: 'search', query: word } }))
        .json.results as { id: string; task: string }[];
    await create('zqoldwordx', 1);
    expect((await b.call('GET', `/v1/sessions/${id}`)).json.task).toBe('task zqoldwordx');
    expect((await a.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    await a.background.drain();
    await create('zqnewwordx', 1002); // above the deleted session's floor (the copy b holds revision 1)
    expect(await search(b, 'zqnewwordx')).toEqual([
      expect.objectContaining({ id, task: 'task zqnewwordx' }),
    ]);
    // A rebuild of the index in b (as after corruption, or a reindex) reads the new session, not its copy.
    await b.search.lexical.compact('alice', true);
    await b.background.drain();
    const fresh = await makeApp({ objects: new LocalStore(b.dir) });
    expect(await search(fresh, 'zqoldwordx')).toEqual([]);
    expect(await search(fresh, 'zqnewwordx')).toEqual([expect.objectContaining({ id })]);
  });
});

describe('an id created again after its delete', () => {
  it('with a time before the delete (an import of an older session): listed, searched, and cleaned up', async () => {
    const app = await makeApp();
    const id = 'imported-again';
    const old = new Date(Date.now() - 30 * 86_400_000).toISOString();
    expect((await app.call('POST', '/v1/sessions', { body: { id, task: 'first' } })).status).toBe(
      201,
    );
    await app.background.drain();
    expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    const body = { id, created_at: old, updated_at: old, task: 'second zqimportedx' };
    expect((await app.call('POST', '/v1/sessions', { body })).status).toBe(201);
    await app.background.drain();
    await app.sessions.retireMarkers(); // a fresh process then has only the manifest to go by
    const fresh = await makeApp({ objects: new LocalStore(app.dir) });
    const listed = await fresh.call('GET', '/v1/sessions');
    expect(listed.json.sessions.map((s: { id: string; task: string }) => [s.id, s.task])).toEqual([
      [id, 'second zqimportedx'],
    ]);
    const found = await fresh.call('POST', '/v1/session_search', {
      body: { action: 'search', query: 'zqimportedx' },
    });
    expect(found.json.results.map((r: { id: string }) => r.id)).toEqual([id]);
    const cleaned = await fresh.call('POST', '/v1/sessions/cleanup', {
      body: { older_than_days: 0 },
    });
    expect(cleaned.json.deleted).toBe(1);
  });
});
