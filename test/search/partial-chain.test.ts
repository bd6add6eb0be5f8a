// The search record of an append on a partial copy (issue 13: appends that read only the delta) extends the
// previous version's record. When that record is gone (a compaction folded it into a segment) the version's
// session is read whole once, and the chain goes on; a failed read of the record is reported and the version
// lags, without poisoning later versions or leaving an unhandled rejection. Found by review; each case
// failed before its fix.
import { describe, expect, it } from 'vitest';
import { docKeyOf } from '../../lib/search/docs.js';
import { createSplit, kb, PassThrough, searchProcess as proc } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'sc';

class Reads extends PassThrough {
  gets: string[] = [];
  /** The next GET of an index record fails (a transient storage error). */
  failRecordGet = false;
  override get(key: string) {
    this.gets.push(key);
    if (this.failRecordGet && key.includes('/x/d/')) {
      this.failRecordGet = false;
      return Promise.reject(new Error('503 from storage'));
    }
    return this.inner.get(key);
  }
}

describe('search records from stateless partial appends', () => {
  it('after a compaction folded the previous record, partial appends still get records', async () => {
    const objects = new Reads(tempLocalStore('chain'));
    const a = proc(objects);
    await createSplit(a, ns, 'big', 'zeppelin audit');

    const recordOf = async (p: ReturnType<typeof proc>, id: string) => {
      const s = await p.sessions.get(ns, id);
      return p.engine.lexical.recordAt(ns, docKeyOf(s));
    };

    // A stateless append right after: extends revision 2's record.
    const b = proc(objects);
    await b.sessions.append(ns, 'big', { messages: [kb('s0')] }, undefined);
    await b.settle();
    expect(await recordOf(proc(objects), 'big')).not.toBeNull();

    // Some process compacts the lexical index (a query with lagging docs, or 64 records written).
    const c = proc(objects);
    await c.engine.lexical.compact(ns);
    expect(await recordOf(proc(objects), 'big')).toBeNull(); // folded into a segment, record collected

    // The next stateless append reads the session whole once; the ones after it extend its record.
    let recorded = 0;
    for (let i = 1; i <= 5; i++) {
      const p = proc(objects);
      await p.sessions.append(ns, 'big', { messages: [kb(`s${i}`)] }, undefined);
      await p.settle();
      expect(p.errors).toEqual([]);
      if (await recordOf(proc(objects), 'big')) recorded++;
    }
    expect(recorded).toBe(5);
  });

  it('one failed GET of the previous record makes only that version lag', async () => {
    const objects = new Reads(tempLocalStore('poison'));
    const a = proc(objects);
    await createSplit(a, ns, 'p', 'zeppelin audit');
    // A long-running process that does not hold the parts (a new server): its appends are partial.
    const b = proc(objects);
    objects.failRecordGet = true;
    await b.sessions.append(ns, 'p', { messages: [kb('s0')] }, undefined);
    await b.settle();
    expect(b.errors.length).toBe(1); // the failed read: that version lags, fine
    for (let i = 1; i <= 3; i++) {
      await b.sessions.append(ns, 'p', { messages: [kb(`s${i}`)] }, undefined);
      await b.settle();
    }
    const s = await proc(objects).sessions.get(ns, 'p');
    // The later versions have their records (the failed one is not chained onto).
    expect(b.errors.length).toBe(1);
    expect(await b.engine.lexical.recordAt(ns, docKeyOf(s))).not.toBeNull();
  });

  it('a failed GET of the previous record, then a pop within the linger: no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const objects = new Reads(tempLocalStore('unhandled'));
      const a = proc(objects);
      await a.sessions.create(ns, { id: 'u', task: 'zeppelin audit', messages: [] });
      await a.sessions.append(
        ns,
        'u',
        { messages: Array.from({ length: 30 }, (_, i) => kb(`h${i}`)) },
        undefined,
      );
      await a.settle();
      const b = proc(objects); // a new server: its first append is partial
      objects.failRecordGet = true;
      await b.sessions.append(ns, 'u', { messages: [kb('s0')] }, undefined);
      await b.sessions.pop(ns, 'u', 1, undefined); // within the records' linger
      await b.settle();
      await new Promise((r) => setTimeout(r, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
