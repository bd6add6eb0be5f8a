import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp } from '../http/helpers.js';

// An odek file imported, deleted, and another file imported under the same id with the same created_at:
// index documents are keyed by id, created_at and revision, so while the new session started at revision 1
// again its document had the deleted one's key. A process holding the old segment then matched the deleted
// words to the new session (docs/design.md listed it as left until 2026-12-06).

describe('an id imported again with the same created_at after its delete', () => {
  it("never matches the deleted session's words, in the process that indexed them or a fresh one", async () => {
    const app = await makeApp();
    const id = 'reimported';
    const at = '2026-11-01T10:00:00.000Z';
    const other = await makeApp({ objects: new LocalStore(app.dir) }); // deletes and imports again
    const create = async (word: string, by = app) => {
      const body = {
        id,
        created_at: at,
        updated_at: at,
        task: 'notes',
        messages: [{ role: 'user', content: `about ${word} and more ${word}` }],
      };
      expect((await by.call('POST', '/v1/sessions', { body })).status).toBe(201);
      await by.background.drain();
    };
    const search = async (a: typeof app, word: string) =>
      (
        (await a.call('POST', '/v1/session_search', { body: { action: 'search', query: word } }))
          .json.results as { id: string }[]
      ).map((r) => r.id);
    await create('zqoldword');
    await app.search.flushRecords();
    await app.search.lexical.compact('alice', true); // the old document sits in a segment this process holds
    expect(await search(app, 'zqoldword')).toEqual([id]);
    // Created again before the delete's purges ran (they are background work).
    expect((await other.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    await create('zqnewword', other);
    await other.search.flushRecords();
    await new Promise((r) => setTimeout(r, 1100)); // past the searching process's view freshness
    expect(await search(app, 'zqoldword')).toEqual([]);
    expect(await search(app, 'zqnewword')).toEqual([id]);
    const fresh = await makeApp({ objects: new LocalStore(app.dir) });
    expect(await search(fresh, 'zqoldword')).toEqual([]);
    expect(await search(fresh, 'zqnewword')).toEqual([id]);
  });
});
