// Review s60f of the audit merge (e5a50ae): a merge racing a DELETE and a re-create gave the new session the
// deleted one's records; a read racing another reader's merge answered without the records it deleted; and
// records stored before 2026-12-04 (no `w`) were never merged, so 250 of them made every Worker read 503.
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../lib/sessions/audit.js';
import { keys } from '../../lib/model/keys.js';
import { listAll } from '../../lib/storage/prefix.js';
import { utf8 } from '../../lib/storage/port.js';
import { SatchelError } from '../../lib/model/errors.js';
import { auditRecord, sessionObject, writtenAudit } from '../support/audit-records.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'am';
const id = 's1';
/** A session object (incarnation a1) and `n` writes' audit records by `device`, each in its own object. */
const written = (label: string, n: number, device = 'old') =>
  writtenAudit(tempLocalStore(label), ns, id, n, device);

describe('audit merges racing other work (review s60f)', () => {
  it('A1: a merge racing a DELETE and a re-create leaves the new session only its own records', async () => {
    const store = await written('s60f-recreate', 40, 'old-device');
    const reader = new AuditLog(store, (s) => s);
    const inner = store.get.bind(store);
    let raced = false;
    store.get = async (key) => {
      const out = await inner(key);
      if (!raced && key.includes('/audit/')) {
        raced = true;
        // DELETE (as SessionStore.delete + deleteParts do): the session object, then its audit records.
        await store.delete(keys.session(ns, id));
        await store.delete(await listAll(store, keys.audit(ns, id)));
        // The client creates the id again: a new session with its own first audit record.
        await store.put(keys.session(ns, id), sessionObject(id, 'b2'));
        await new AuditLog(store, (s) => s).recordAll(ns, id, [
          {
            record: {
              ...auditRecord(1, 'new-device'),
              at: new Date(Date.UTC(2026, 11, 8)).toISOString(),
            },
            writeKey: 'new1',
          },
        ]);
      }
      return out;
    };
    await reader.list(ns, id).catch(() => {});
    store.get = inner;
    const after = await new AuditLog(store, (s) => s).list(ns, id);
    const devices = after.map((r) => r.device);
    expect(devices.filter((d) => d === 'old-device').length).toBe(0);
  });

  it('A2: a read racing another reader`s merge answers every record', async () => {
    const store = await written('s60f-concurrent', 40);
    const a = new AuditLog(store, (s) => s);
    const b = new AuditLog(store, (s) => s);
    const inner = store.get.bind(store);
    let raced = false;
    store.get = async (key) => {
      if (!raced && key.includes('/audit/')) {
        raced = true;
        await b.list(ns, id); // another process's read merges the 40 objects and deletes them
      }
      return inner(key);
    };
    const answer = await a.list(ns, id);
    expect(answer.length).toBe(40);
  });

  it('A3: on Workers, 300 records stored before 2026-12-04 (no `w`) are merged and answered', async () => {
    const store = tempLocalStore('s60f-legacy');
    await store.put(keys.session(ns, id), sessionObject(id, 'a1'));
    for (let r = 1; r <= 300; r++) {
      const rec = auditRecord(r);
      // As stored before 2026-12-04: one record per object, no `w`.
      await store.put(
        `${keys.audit(ns, id)}${String(Date.parse(rec.at)).padStart(13, '0')}-${r.toString(16).padStart(16, '0')}.json`,
        utf8(JSON.stringify(rec)),
      );
    }
    const workers = new AuditLog(store, (s) => s, { readAtMost: 250, slicesPerRead: 2 });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        outcomes.push(String((await workers.list(ns, id)).length));
      } catch (err) {
        outcomes.push(SatchelError.is(err, 'unavailable') ? '503' : String(err));
      }
    }
    expect(outcomes).toContain('300');
    expect((await new AuditLog(store, (s) => s).list(ns, id)).length).toBe(300);
  });
});
