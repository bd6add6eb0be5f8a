import { putOwn } from '../storage/create-only.js';
import { text, utf8, type ObjectStore } from '../storage/port.js';
import { randomHex } from '../model/ids.js';
import { keys } from '../model/keys.js';
import { mapLimit } from '../storage/concurrency.js';
import { deletePrefix, listAll } from '../storage/prefix.js';

/** One audit record: who wrote what to a session, and what the save pipeline did to it. */
export interface AuditRecord {
  at: string;
  op: 'create' | 'append' | 'replace' | 'trim' | 'pop' | 'continue' | 'delete' | 'import';
  device: string;
  revision: number;
  messages: number;
  messages_added: number;
  bytes: number;
  redactions: number;
  dropped_groups: number;
  /** Labels of untrusted content ingested by this write (`webhook:ci`, …). */
  ingest_sources: string[];
  untrusted_ingested: boolean;
  episode_untrusted: boolean;
}

/**
 * The audit log: one create-only object per write (`ns/<ns>/audit/<id>/<at>-<random>.json`), so
 * concurrent writers never lose a record (there is no read-modify-write), deleted with the session.
 * Every string in a record passes through `redact` before it is stored.
 */
export class AuditLog {
  constructor(
    private readonly store: ObjectStore,
    private readonly redact: (s: string) => string,
  ) {}

  /** Stores one record. */
  async record(ns: string, id: string, record: AuditRecord): Promise<void> {
    const safe: AuditRecord = {
      ...record,
      device: this.redact(record.device),
      ingest_sources: record.ingest_sources.map(this.redact),
    };
    const at = String(Date.parse(record.at) || Date.now()).padStart(13, '0');
    // The key's random part is this record's own: a precondition failure is a lost answer, not a clash.
    await putOwn(
      this.store,
      `${keys.audit(ns, id)}${at}-${randomHex(8)}.json`,
      utf8(JSON.stringify(safe)),
    );
  }

  /** The session's records, oldest first. */
  async list(ns: string, id: string): Promise<AuditRecord[]> {
    const all = await listAll(this.store, keys.audit(ns, id));
    const bodies = await mapLimit(all, 16, (k) => this.store.get(k));
    return bodies.flatMap((b) => {
      if (!b) return [];
      try {
        return [JSON.parse(text(b.body)) as AuditRecord];
      } catch {
        return [];
      }
    });
  }

  /** Deletes all of a session's records. */
  async deleteAll(ns: string, id: string): Promise<void> {
    await deletePrefix(this.store, keys.audit(ns, id));
  }
}
