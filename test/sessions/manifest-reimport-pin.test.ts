// Before 2026-12-05 a deleted session imported again under its id from an earlier odek export (same
// created_at, an older updated_at), before the delete's purge had erased the deleted version from the
// manifest's pages (the deleting process stopped, or its purge failed), was told from the deleted one only
// by created_at: the pin let the deleted version through, so `list` showed the deleted session's task and
// time, and a compaction wrote it into new pages. Now manifest entries carry the session's incarnation
// (`satchel.i`), and a pin keeps that.
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { Stoppable } from '../support/stoppable-store.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/model/bytes.js';

const ns = 'ri';

describe('deleted, then imported again with the same created_at', () => {
  it('list shows the imported session, never the deleted version', async () => {
    let clock = Date.parse('2026-12-05T10:00:00.000Z');
    const objects = new MemoryStore();
    const opts = { now: () => clock, manifest: { compactAfter: 3, pageSize: 4 } };
    const dying = new Stoppable(objects, (key) => key.includes('/m/r/') || key.includes('/m/g/'));
    const a = new SessionStore(dying, opts);
    const created_at = '2026-12-05T09:00:00.000Z';
    // The odek file as exported earlier (the user keeps it), imported first.
    await a.create(ns, {
      id: 'x',
      task: 'the task',
      created_at,
      updated_at: '2026-12-05T09:30:00.000Z',
    });
    clock += 1000;
    await a.replace(ns, 'x', { task: 'DELETED-TASK private plan', messages: [] }, 1);
    await a.settled();
    await a.manifest.compact(ns, true); // the deleted version now sits in a page
    clock += 1000;
    dying.stopped = true; // the process stops right after the delete answered: its purge never lands
    await a.delete(ns, 'x');
    clock += 1000;
    // Another process imports the old export again: same created_at, an older updated_at.
    const b = new SessionStore(objects, opts);
    await b.create(ns, {
      id: 'x',
      task: 'the task',
      created_at,
      updated_at: '2026-12-05T09:30:00.000Z',
    });
    await b.settled();

    const listed = async () =>
      (await new SessionStore(objects, opts).list(ns, { limit: 10 })).sessions.map((s) => s.task);
    expect.soft(await listed()).toEqual(['the task']);
    await b.manifest.compact(ns, true);
    expect.soft(await listed()).toEqual(['the task']);
    // Deleted means gone: no object holds the deleted version's task any more.
    const holding: string[] = [];
    for (const key of await listAll(objects, `ns/${ns}/`))
      if (text((await objects.get(key))!.body).includes('DELETED-TASK')) holding.push(key);
    expect(holding).toEqual([]);
  });
});
