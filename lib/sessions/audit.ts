import { putOwn } from '../storage/create-only.js';
import { text, utf8, type ObjectStore } from '../storage/port.js';
import { sha256Hex } from '../model/digest.js';
import type { WriteRecord } from '../model/session.js';
import { keys } from '../model/keys.js';
import { mapLimit, PendingWork } from '../storage/concurrency.js';
import { listAll } from '../storage/prefix.js';

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

/** One audit record to store, with the key of the write it describes (its write record's `k`). */
export interface AuditEntry {
  record: AuditRecord;
  writeKey: string;
}

/** An audit record as stored: `w` names its write (a digest), so that a record stored twice reads once. */
type StoredAudit = AuditRecord & { w?: string };

/**
 * The audit log: create-only objects under `ns/<ns>/audit/<id>/`, so concurrent writers never lose a
 * record (there is no read-modify-write), deleted with the session. An object holds one record, or the
 * records of several writes stored together (`{"records": [...]}`); its key is derived from its first
 * write (`<at>-<16 hex>`), and each record names its write, so a record stored again (the compactor
 * restoring what a stopped writer left unwritten) is read once. Every string passes through `redact`.
 */
export class AuditLog {
  /** Records this process is storing, per session: a read of the log waits for them. */
  private readonly pending = new PendingWork();

  constructor(
    private readonly store: ObjectStore,
    private readonly redact: (s: string) => string,
  ) {}

  /**
   * Stores records of one session in one object, under a key derived from the first one's write, so
   * that storing the same again (its writer and a compactor restoring it) leaves one object. `named`
   * hears the object's key before the PUT goes (one whose answer is lost may have landed).
   */
  async recordAll(
    ns: string,
    id: string,
    entries: AuditEntry[],
    named?: (key: string) => void,
  ): Promise<void> {
    if (entries.length === 0) return;
    const work = (async () => {
      const stored = await Promise.all(entries.map((e) => this.stored(e)));
      const first = stored[0]!;
      const body = stored.length === 1 ? first : { records: stored };
      const key = `${keys.audit(ns, id)}${stamp(first.at)}-${first.w}.json`;
      named?.(key);
      await putOwn(this.store, key, utf8(JSON.stringify(body)));
    })();
    // Registered before any await, so that a read of the log that follows waits for it.
    return this.pending.add(ns + '\0' + id, work);
  }

  private async stored({ record, writeKey }: AuditEntry): Promise<StoredAudit> {
    const w = (await sha256Hex(writeKey + '|' + stamp(record.at))).slice(0, 16);
    return {
      ...record,
      device: this.redact(record.device),
      ingest_sources: record.ingest_sources.map(this.redact),
      w,
    };
  }

  /** Waits for this process's audit records of a session still being stored (read-your-writes). */
  flushed(ns: string, id: string): Promise<void> {
    return this.pending.settled(ns + '\0' + id);
  }

  /** The session's records, oldest first, each once. */
  async list(ns: string, id: string): Promise<AuditRecord[]> {
    await this.flushed(ns, id);
    const all = await listAll(this.store, keys.audit(ns, id));
    const bodies = await mapLimit(all, 16, (k) => this.store.get(k));
    const seen = new Set<string>();
    const out: AuditRecord[] = [];
    for (const b of bodies) {
      if (!b) continue;
      let parsed: StoredAudit | { records: StoredAudit[] };
      try {
        parsed = JSON.parse(text(b.body));
      } catch {
        continue;
      }
      for (const { w, ...record } of 'records' in parsed ? parsed.records : [parsed]) {
        if (w !== undefined && seen.has(w)) continue;
        if (w !== undefined) seen.add(w);
        out.push(record);
      }
    }
    return out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.revision - b.revision);
  }
}

/** A record's time as the 13-digit milliseconds of its key. */
function stamp(at: string): string {
  return String(Date.parse(at) || Date.now()).padStart(13, '0');
}

/** The audit record a write record describes (its receipt and audit fields); null without them. */
export function auditOf(record: WriteRecord): AuditRecord | null {
  const a = record.a;
  const r = record.r as Partial<Record<string, unknown>>;
  if (!a || typeof r.revision !== 'number') return null;
  return {
    at: new Date(record.at).toISOString(),
    op: a.o as AuditRecord['op'],
    device: a.d,
    revision: r.revision,
    messages: a.m,
    messages_added: a.n,
    bytes: Number(r.bytes) || 0,
    redactions: Number(r.redactions) || 0,
    dropped_groups: Number(r.dropped_groups) || 0,
    ingest_sources: a.s ?? [],
    untrusted_ingested: r.untrusted_ingested === true,
    episode_untrusted: r.episode_untrusted === true,
  };
}
