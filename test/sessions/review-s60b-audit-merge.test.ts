// On Workers each write stores its own audit object and a read GETs every one, so the audit of a session
// with about 1,000 writes went past Cloudflare's 1,000 operations per request and answered 503 for good
// (review s60b). A read now merges what it finds into one object, a slice at a time past its bound.
import { describe, expect, it } from 'vitest';
import { AuditLog, type AuditRecord } from '../../lib/sessions/audit.js';
import { keys } from '../../lib/model/keys.js';
import { CountingStore } from '../../lib/storage/counting.js';
import { listAll } from '../../lib/storage/prefix.js';
import { SatchelError } from '../../lib/model/errors.js';
import { auditRecord, writtenAudit } from '../support/audit-records.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'am';
const id = 'long-session';
/** A session object at its key and `n` writes' audit records, each in its own object (as on Workers). */
const written = (label: string, n: number) =>
  writtenAudit(new CountingStore(tempLocalStore(label)), ns, id, n);

const objectsOf = async (store: CountingStore) => (await listAll(store, keys.audit(ns, id))).length;
const revisions = (records: AuditRecord[]) => records.map((r) => r.revision);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('audit reads merge the objects they find', () => {
  it('past the bound, each read merges slices within it and a read soon answers every record once', async () => {
    const store = await written('audit-merge-bound', 1000);
    const log = new AuditLog(store, (s) => s, { readAtMost: 250, slicesPerRead: 2 });
    const answers: (number | 'unavailable')[] = [];
    let records: AuditRecord[] | undefined;
    for (let call = 0; call < 5 && !records; call++) {
      store.reset();
      try {
        records = await log.list(ns, id);
      } catch (err) {
        if (!SatchelError.is(err, 'unavailable')) throw err;
        answers.push('unavailable');
      }
      const c = store.reset();
      expect(c.get + c.put + c.delete + c.list + c.head).toBeLessThan(1000);
    }
    expect(answers).toEqual(['unavailable']);
    expect(revisions(records!)).toEqual(upTo(1000));
    // 1,000 objects, four slices of 250 merged into four: few enough (MERGE_AT, 32) to leave as they are.
    expect(await objectsOf(store)).toBe(4);
    store.reset();
    expect(revisions(await log.list(ns, id))).toEqual(upTo(1000));
    expect(store.reset().get).toBe(4);
  });

  it('without a bound, one read answers every record and leaves one object', async () => {
    const store = await written('audit-merge-node', 80);
    const log = new AuditLog(store, (s) => s);
    expect(revisions(await log.list(ns, id))).toEqual(upTo(80));
    expect(await objectsOf(store)).toBe(1);
    // Later writes add objects beside it; a read keeps answering each record once.
    for (let r = 81; r <= 120; r++)
      await log.recordAll(ns, id, [{ record: auditRecord(r), writeKey: `w${r}` }]);
    expect(revisions(await log.list(ns, id))).toEqual(upTo(120));
    expect(await objectsOf(store)).toBe(1);
  });

  it('a merged object fills, and later merges neither read nor write it again (review s60f)', async () => {
    const store = await written('audit-merge-full', 130);
    const log = new AuditLog(store, (s) => s, { fullAt: 50 });
    expect(revisions(await log.list(ns, id))).toEqual(upTo(130));
    const full = (await listAll(store, keys.audit(ns, id))).filter((k) =>
      /-f[0-9a-f]{16}\.json$/.test(k),
    );
    expect(full).toHaveLength(2);
    expect(await objectsOf(store)).toBe(3); // two full, 30 records in one that takes more
    for (let r = 131; r <= 170; r++)
      await log.recordAll(ns, id, [{ record: auditRecord(r), writeKey: `w${r}` }]);
    store.reset();
    expect(revisions(await log.list(ns, id))).toEqual(upTo(170));
    const merge = store.reset();
    // 70 records rewritten (30 + 40) into one full object and one of 20; the 100 in full objects stay.
    const oneRecord = JSON.stringify({ ...auditRecord(170), w: '0123456789abcdef' }).length + 1;
    expect(merge.bytesWritten).toBeLessThan(75 * oneRecord);
    const after = await listAll(store, keys.audit(ns, id));
    expect(after).toEqual(expect.arrayContaining(full));
    expect(after).toHaveLength(4);
    store.reset();
    expect(revisions(await log.list(ns, id))).toEqual(upTo(170));
    expect(store.reset().get).toBe(4);
  });

  it('a merge that finds the session deleted leaves no audit object behind', async () => {
    const store = await written('audit-merge-deleted', 40);
    // Deleted between the read's LIST and its merge: the session object goes first, then the records.
    const log = new AuditLog(store, (s) => s);
    const inner = store.get.bind(store);
    let deleted = false;
    store.get = async (key) => {
      if (!deleted && key.includes('/audit/')) {
        deleted = true;
        await store.delete(keys.session(ns, id));
      }
      return inner(key);
    };
    await log.list(ns, id);
    expect(await objectsOf(store)).toBe(40); // the originals, for the delete's own erase; no merged one
  });
});
