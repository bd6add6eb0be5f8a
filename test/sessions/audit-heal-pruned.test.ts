// Review s68b (fixed 2026-12-07; every case failed on the code before the fix). An append whose audit PUT
// failed after its commit landed kept its marker, and the compactor healing it restored the audit record
// from the write records still in the session object only. Two common cases moved the record out first, and
// the audit record was lost for good: ~27 more keyed appends (F1: its record went to a key-record pack) and,
// on one server, a burst of 16 unkeyed appends (F2: its record was pruned by count).
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { StorageUnavailableError, type PutOptions } from '../../lib/storage/port.js';
import { eventually } from '../support/eventually.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'au';

/** Refuses audit PUTs while `refusing` (true: for good, a process that stopped; a number: that many). */
class RefuseAudit extends PassThrough {
  refusing: boolean | number = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.refusing !== false && this.refusing !== 0 && key.includes('/audit/')) {
      if (typeof this.refusing === 'number') this.refusing--;
      throw new StorageUnavailableError('503 from the backend');
    }
    return this.inner.put(key, body, options);
  }
}

function processOn(objects: ObjectStore, now: () => number, errors: string[]) {
  const pipeline = defaultPipeline({ maxSessionBytes: 4 << 20 });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    now,
    onError: (what) => void errors.push(what),
  });
}

const message = (i: number) => ({ messages: [{ role: 'user' as const, content: `m${i}` }] });

async function appendRevisions(sessions: SessionStore): Promise<number[]> {
  const records = await sessions.auditRecords(ns, 's1');
  return records.filter((r) => r.op === 'append').map((r) => r.revision);
}

/** One server on a folder whose first audit PUT of an append is refused once; `later` moves its clock on. */
async function serverRefusingOnce(label: string) {
  const objects = new RefuseAudit(tempLocalStore(label));
  let skew = 0;
  const errors: string[] = [];
  const sessions = processOn(objects, () => Date.now() + skew, errors);
  await sessions.create(ns, { id: 's1', task: 'audit me', messages: [] });
  await sessions.settled();
  objects.refusing = 1;
  return { objects, sessions, errors, later: () => void (skew = 60 * 60_000) };
}

/** The stale marker healed: markers retired, the clock an hour on, a compaction. */
async function heal(sessions: SessionStore, later: () => void): Promise<void> {
  await sessions.retireMarkers();
  later();
  await sessions.manifest.compact(ns, true);
  await sessions.settled();
}

describe('a failed audit record whose write record left the session object', () => {
  it('is restored by the heal from the key-record packs when its writer stopped (40 keyed appends after)', async () => {
    const inner = tempLocalStore('audit-packs');
    const a = new RefuseAudit(inner);
    let skew = 0;
    const now = () => Date.now() + skew;
    const errors: string[] = [];
    const first = processOn(a, now, errors);
    await first.create(ns, { id: 's1', task: 'audit me', messages: [] });
    await first.settled();
    // Its commit lands, its audit PUT fails, and the process stops (no attempt of it stores it).
    a.refusing = true;
    await first.append(ns, 's1', message(0), undefined, { idempotencyKey: 'key-0' });
    await first.settled();
    expect(errors).toContain('audit record not stored');
    const other = processOn(inner, now, errors);
    for (let i = 1; i <= 40; i++)
      await other.append(ns, 's1', message(i), undefined, { idempotencyKey: `key-${i}` });
    await other.settled();
    await other.retireMarkers();
    // Its record is no longer in the object: stored out to a pack.
    expect((await inner.list(`ns/${ns}/k/s1/`)).objects.length).toBeGreaterThan(0);
    expect(await appendRevisions(other)).not.toContain(2);
    skew = 60 * 60_000;
    await other.manifest.compact(ns, true);
    await other.settled();
    const revisions = await appendRevisions(other);
    expect(revisions).toContain(2);
    expect(revisions).toHaveLength(41);
    expect((await inner.list(`ns/${ns}/m/p/`)).objects).toHaveLength(0); // healed
  });

  it('is restored on one server after 40 sequential keyed appends', async () => {
    const { sessions, later } = await serverRefusingOnce('audit-keyed');
    await sessions.append(ns, 's1', message(0), undefined, { idempotencyKey: 'key-0' });
    for (let i = 1; i <= 40; i++)
      await sessions.append(ns, 's1', message(i), undefined, { idempotencyKey: `key-${i}` });
    await sessions.settled();
    await heal(sessions, later);
    const revisions = await appendRevisions(sessions);
    expect(revisions).toContain(2);
    expect(revisions).toHaveLength(41);
  });

  it('is stored again by its own server after a burst of 16 unkeyed appends pruned its record', async () => {
    const { objects, sessions, errors, later } = await serverRefusingOnce('audit-burst');
    await sessions.append(ns, 's1', message(0), undefined);
    await sessions.settled();
    expect(errors).toContain('audit record not stored');
    await Promise.all(
      Array.from({ length: 16 }, (_, i) => sessions.append(ns, 's1', message(i + 1), undefined)),
    );
    await sessions.settled();
    // The record of revision 2 is pruned from the object (16 unkeyed records at most).
    const object = await objects.get(`ns/${ns}/sessions/s1.json`);
    const { satchel } = JSON.parse(new TextDecoder().decode(object!.body)) as {
      satchel: { writes: { r: { revision: number } }[] };
    };
    expect(satchel.writes.map((w) => w.r.revision)).not.toContain(2);
    // The server stores it again in the background (1 s on), before any heal.
    await eventually(async () => (await appendRevisions(sessions)).includes(2), 10_000);
    await heal(sessions, later);
    const revisions = await appendRevisions(sessions);
    expect(revisions).toContain(2);
    expect(revisions).toHaveLength(17);
  });
});
