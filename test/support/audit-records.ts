// Audit records for the audit merge's tests (test/sessions/review-s60b-audit-merge, review-s60f-audit-races):
// a session object at an id and writes' audit records, each in its own object (as on Workers).
import { AuditLog, type AuditRecord } from '../../lib/sessions/audit.js';
import { keys } from '../../lib/model/keys.js';
import { utf8, type ObjectStore } from '../../lib/storage/port.js';

/** The session object at `id`, its incarnation `i` (a merge keeps its work only while the same session is there). */
export const sessionObject = (id: string, i = 'a1') =>
  utf8(
    JSON.stringify({ id, created_at: '2026-12-07T00:00:00.000Z', messages: [], satchel: { i } }),
  );

/** Write `revision`'s audit record (a create for 1, an append after it), `revision` ms past 2026-12-07. */
export function auditRecord(revision: number, device = 'ci'): AuditRecord {
  return {
    at: new Date(Date.UTC(2026, 11, 7, 0, 0, 0, revision)).toISOString(),
    op: revision === 1 ? 'create' : 'append',
    device,
    revision,
    messages: revision,
    messages_added: 1,
    bytes: 100 * revision,
    redactions: 0,
    dropped_groups: 0,
    ingest_sources: [],
    untrusted_ingested: false,
    episode_untrusted: false,
  };
}

/** `store` with the session object (incarnation a1) at `ns`/`id` and `n` writes' audit records by `device`. */
export async function writtenAudit<S extends ObjectStore>(
  store: S,
  ns: string,
  id: string,
  n: number,
  device = 'ci',
): Promise<S> {
  await store.put(keys.session(ns, id), sessionObject(id));
  const log = new AuditLog(store, (s) => s);
  for (let r = 1; r <= n; r++)
    await log.recordAll(ns, id, [{ record: auditRecord(r, device), writeKey: `w${r}` }]);
  return store;
}
