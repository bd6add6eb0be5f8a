// A burst of appends on partial copies after a compaction folded the previous record: only the newest
// version's record is stored, so only it is worth a whole read of the session (found by review: there was
// one whole read per version).
import { describe, expect, it } from 'vitest';
import { createSplit, kb, PassThrough, searchProcess as proc } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'bu';
class Count extends PassThrough {
  baseGets = 0;
  headGets = 0;
  delayMs = 0;
  override async get(key: string) {
    if (key.endsWith('/sessions/big.json')) this.headGets++;
    if (key.includes('/b/')) {
      this.baseGets++;
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    }
    return this.inner.get(key);
  }
}

describe('a burst of appends on partial copies after a compaction', () => {
  it('reads the session whole once, for the newest version', async () => {
    const objects = new Count(tempLocalStore('burst'));
    const a = proc(objects);
    await createSplit(a, ns, 'big', 'zeppelin');
    await a.engine.lexical.compact(ns);
    const b = proc(objects);
    objects.baseGets = 0;
    objects.delayMs = 200; // a slow (large) base read
    for (let i = 0; i < 10; i++)
      await b.sessions.append(ns, 'big', { messages: [kb(`s${i}`)] }, undefined);
    objects.headGets = 0; // the appends' own reads are done: what follows is the search listener's
    await b.settle();
    await new Promise((r) => setTimeout(r, 500));
    // One whole read (for the newest version) is all a record needs; older versions' records are superseded.
    expect(objects.headGets).toBe(1);
    expect(b.errors).toEqual([]);
  });
});
