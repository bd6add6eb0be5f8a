// Review s58b, finding 2 (fixed 2026-12-06; both tests failed on the code before the fix). The compactor
// heals a stale pending marker (a writer that crashed between its commit and its records) by restoring the
// write's audit records from the session object, and keeps the marker when that fails. On an object that
// is no session (a half-copied file) the restore threw `corrupt` every time: the marker stayed for good,
// and every listing scheduled a compaction that wrote a new root with nothing new in it. Now a corrupt
// object has nothing to restore and the marker goes (as verify and rebuild leave such an object out), and
// after any other failed heal this process waits (1 min, doubling up to 15) before a listing schedules a
// compaction for that marker again.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import {
  StorageUnavailableError,
  utf8,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'sm';

/** Counts root PUTs; fails audit record PUTs while `failAudit`. */
class Counting extends PassThrough {
  rootPuts = 0;
  failAudit = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (key.includes('/m/r/')) this.rootPuts++;
    if (this.failAudit && key.includes('/audit/'))
      throw new StorageUnavailableError('503 from the backend', undefined, {
        mayHaveLanded: false,
      });
    return super.put(key, body, options);
  }
}

/** One process on `objects` with its own clock; `list` waits for the background work it scheduled. */
function proc(objects: ObjectStore, clock: { now: number }) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const sessions = new SessionStore(objects, {
    pipeline,
    now: () => clock.now,
    audit: new AuditLog(objects, pipeline.redactText),
  });
  const list = async () => {
    const jobs: Promise<unknown>[] = [];
    const page = await sessions.list(ns, { limit: 20 }, { schedule: (p) => void jobs.push(p) });
    await Promise.allSettled(jobs);
    await sessions.settled();
    return page.sessions.map((s) => s.id).sort();
  };
  return { sessions, list };
}

/** Three sessions, compacted, and a crashed writer's marker on s1, 20 minutes old. */
async function withStaleMarker(label: string) {
  const inner = tempLocalStore(label);
  const clock = { now: Date.now() };
  const writer = proc(inner, clock);
  for (let i = 0; i < 3; i++) {
    await writer.sessions.create(ns, { id: `s${i}`, task: `t${i}`, messages: [] });
    await writer.sessions.append(
      ns,
      `s${i}`,
      { messages: [{ role: 'user', content: 'hello' }] },
      undefined,
    );
  }
  await writer.sessions.settled();
  await writer.sessions.retireMarkers();
  await writer.sessions.manifest.compact(ns, true);
  const at = String(clock.now - 20 * 60_000).padStart(13, '0');
  const marker = keys.pending(ns, 's1', `${at}-sdeadbeef1`);
  await inner.put(marker, new Uint8Array(0));
  const counting = new Counting(inner);
  return { inner, clock, marker, counting, reader: proc(counting, clock) };
}

describe('a stale marker whose heal fails (review s58b)', () => {
  it('on an object that is no session: the marker goes, and listings write no more roots', async () => {
    const { inner, clock, marker, counting, reader } = await withStaleMarker('s58b-stale-corrupt');
    await inner.put(keys.session(ns, 's1'), utf8('{"id":"s1","task":')); // half-copied over since
    for (let i = 0; i < 10; i++) {
      clock.now += 1000;
      // As before the fix: s1 as the manifest knew it (a corrupt object adds nothing; a GET says corrupt).
      expect(await reader.list()).toEqual(['s0', 's1', 's2']);
    }
    // Before the fix: a root per listing (10), the marker still there.
    expect(counting.rootPuts).toBe(0);
    expect(await listAll(inner, keys.pending(ns, 's1', ''))).not.toContain(marker);
  });

  it('after a storage failure: no compaction per listing, and the heal is tried again later', async () => {
    const { inner, clock, marker, counting, reader } = await withStaleMarker('s58b-stale-failing');
    counting.failAudit = true; // the restored audit records cannot be stored
    for (let i = 0; i < 10; i++) {
      clock.now += 1000;
      expect(await reader.list()).toEqual(['s0', 's1', 's2']);
    }
    // Before the fix: a compaction and a root per listing (10).
    expect(counting.rootPuts).toBe(1);
    expect(await listAll(inner, keys.pending(ns, 's1', ''))).toContain(marker);
    // A minute on, a listing schedules the heal again; once storage takes the records, the marker goes.
    counting.failAudit = false;
    clock.now += 61_000;
    expect(await reader.list()).toEqual(['s0', 's1', 's2']);
    expect(counting.rootPuts).toBe(2);
    expect(await listAll(inner, keys.pending(ns, 's1', ''))).not.toContain(marker);
  });
});
