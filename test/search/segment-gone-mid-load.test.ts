// Review s57c, suspected 2 (fixed 2026-12-06; the test failed on the code before the fix). A process that
// listed the index's roots and then found a segment of the newest one missing (another process's purge or
// compaction had replaced that root and deleted its segments at once) counted the index as corrupt: it
// answered from every session's index record (or object) and rebuilt the index from them. docs/design.md says such a reader
// lists again and takes the new root; it now does.
import { expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

/** A folder whose first segment GET waits for `before` (another process's purge) to run first. */
class Watched extends PassThrough {
  before?: () => Promise<void>;
  /** The session objects and index records read after that segment GET. */
  reads: string[] = [];
  private after = false;
  override async get(key: string) {
    if (this.before && key.includes('/x/g/')) {
      const run = this.before;
      this.before = undefined;
      await run();
      this.after = true;
    }
    if (this.after && /\/(sessions|x\/d)\//.test(key)) this.reads.push(key);
    return super.get(key);
  }
}

it("a reader whose root's segment went meanwhile reads the new root, not every session", async () => {
  const shared = tempLocalStore('segment-gone');
  const writer = await makeApp({ objects: shared });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const made = await writer.call('POST', '/v1/sessions', {
      body: {
        task: `task ${i}`,
        messages: [{ role: 'user', content: `zqgonemidload number ${i}` }],
      },
    });
    ids.push(made.json.id as string);
  }
  await settleAll(writer);
  await writer.search.lexical.compact('alice', true); // every document in one segment
  await settleAll(writer);

  const watched = new Watched(shared);
  const reader = await makeApp({ objects: watched });
  // The reader has listed the roots when the writer deletes a session: its purge writes a new root and
  // deletes the old segment before the reader reads it.
  watched.before = async () => {
    expect((await writer.call('DELETE', `/v1/sessions/${ids[0]}`)).status).toBe(204);
    await settleAll(writer);
  };
  const found = await reader.call('POST', '/v1/session_search', {
    body: { action: 'search', query: 'zqgonemidload', limit: 10 },
  });
  expect(found.status).toBe(200);
  // Every live session is found (the deleted one too, while the reader's manifest view, read before the
  // delete, is fresh: the contract's window).
  const hits = found.json.results.map((r: { id: string }) => r.id);
  expect(hits).toEqual(expect.arrayContaining(ids.slice(1)));
  await settleAll(reader);
  // Before the fix the reader read every session's index record (and rebuilt the index from them); the
  // deleted one's document, which the new root no longer holds, may be looked for.
  expect(watched.reads.filter((k) => !k.includes(ids[0]!))).toEqual([]);
}, 30_000);
