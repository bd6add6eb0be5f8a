// Review s57c, finding 1 (fixed 2026-12-06; the tests failed on the code before the fix). A create may give
// `created_at` (an import keeps odek's time), and the index record key holds it in ms, padded to 13 digits:
// before 1970 that is zeros then a negative number (`0-14182940000`). The purge, a prune and compaction read
// record keys with a parser that took exactly 13 digits: such a session's records kept its words through a
// delete and a trim ("deleted means gone", contract v1.1).
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

describe('index records of a session created before 1970', () => {
  for (const createdAt of ['1969-07-20T20:17:40Z', '1901-01-01T00:00:00Z']) {
    it(`go with a delete (created_at ${createdAt})`, async () => {
      const app = await makeApp();
      const word = `zqxdeletedword${createdAt.slice(0, 4)}x`;
      const made = await app.call('POST', '/v1/sessions', {
        body: {
          task: `task about ${word}`,
          created_at: createdAt,
          messages: [{ role: 'user', content: `talk of ${word} here` }],
        },
      });
      expect(made.status).toBe(201);
      await settleAll(app);
      const found = await app.call('POST', '/v1/session_search', {
        body: { action: 'search', query: word },
      });
      expect(found.json.results.map((r: { id: string }) => r.id)).toEqual([made.json.id]);
      expect(holders(app.dir, [word]).some((h) => h.includes('/x/d/'))).toBe(true);
      expect((await app.call('DELETE', `/v1/sessions/${made.json.id}`)).status).toBe(204);
      await settleAll(app);
      await app.search.lexical.compact('alice');
      await settleAll(app);
      expect(holders(app.dir, [word])).toEqual([]);
    });
  }

  it('go with a trim that removes their text', async () => {
    const app = await makeApp();
    const word = 'zqxtrimmedwordx';
    const made = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'a task',
        created_at: '1969-07-20T20:17:40Z',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: `first ${word}` },
          { role: 'assistant', content: `answer ${word}` },
          { role: 'user', content: 'second question' },
          { role: 'assistant', content: 'second answer' },
        ],
      },
    });
    expect(made.status).toBe(201);
    await settleAll(app);
    const trim = await app.call('POST', `/v1/sessions/${made.json.id}/trim`, { body: { keep: 3 } });
    expect(trim.json.dropped).toBe(2);
    await settleAll(app);
    expect(holders(app.dir, [word])).toEqual([]);
  });
});
