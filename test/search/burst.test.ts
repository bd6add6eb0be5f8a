// A burst of appends on partial copies after a compaction folded the previous record: only the newest
// version's record is stored, so only it is worth a whole read of the session (found by review: there was
// one whole read per version).
import { describe, expect, it } from 'vitest';
import { docKeyOf, lexDocOf } from '../../lib/search/docs.js';
import { createSplit, kb, PassThrough, searchProcess as proc } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'bu';

/** Base reads answer late, as a large session's would. */
class SlowBase extends PassThrough {
  override async get(key: string) {
    if (key.includes('/b/')) await new Promise((r) => setTimeout(r, 200));
    return this.inner.get(key);
  }
}

describe('a burst of appends on partial copies after a compaction', () => {
  it('reads the session whole about once, not once per version, and stores the newest record whole', async () => {
    const objects = new SlowBase(tempLocalStore('burst'));
    const a = proc(objects);
    await createSplit(a, ns, 'big', 'zeppelin');
    await a.engine.lexical.compact(ns);
    const b = proc(objects);
    // The listener's whole reads go through getAt (no search runs here, so nothing else calls it).
    let wholeReads = 0;
    const getAt = b.sessions.getAt.bind(b.sessions);
    b.sessions.getAt = (...args) => (wholeReads++, getAt(...args));
    for (let i = 0; i < 10; i++)
      await b.sessions.append(ns, 'big', { messages: [kb(`s${i}`)] }, undefined);
    await b.settle();
    await new Promise((r) => setTimeout(r, 500));
    await b.settle();
    // Once when timing allows; a read that finds its version already replaced gives way to the next one,
    // so a slow machine may take two or three. The defect read the session once per version (10).
    expect(wholeReads).toBeGreaterThanOrEqual(1);
    expect(wholeReads).toBeLessThanOrEqual(3);
    expect(b.errors).toEqual([]);
    const session = await proc(objects).sessions.get(ns, 'big');
    const record = await b.engine.lexical.recordAt(ns, docKeyOf(session));
    expect(record && [...record.tf].sort()).toEqual([...lexDocOf(session).tf].sort());
  });
});
