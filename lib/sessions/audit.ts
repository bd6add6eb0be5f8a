import { putOwn } from '../storage/create-only.js';
import { text, utf8, type ObjectStore } from '../storage/port.js';
import { sha256Hex } from '../model/digest.js';
import type { WriteRecord } from '../model/session.js';
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
  /** Records this process is storing, per session: a read of the log waits for them. */
  private readonly pending = new Map<string, Set<Promise<unknown>>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly redact: (s: string) => string,
  ) {}

  /**
   * Stores one record under a key derived from its write (`writeKey`, the write record's `k`), so that
   * storing it twice (its writer and a compactor restoring it) leaves one object.
   */
  async record(ns: string, id: string, record: AuditRecord, writeKey: string): Promise<void> {
    const safe: AuditRecord = {
      ...record,
      device: this.redact(record.device),
      ingest_sources: record.ingest_sources.map(this.redact),
    };
    const at = String(Date.parse(record.at) || Date.now()).padStart(13, '0');
    const work = sha256Hex(writeKey + '|' + at).then((digest) =>
      putOwn(
        this.store,
        `${keys.audit(ns, id)}${at}-${digest.slice(0, 16)}.json`,
        utf8(JSON.stringify(safe)),
      ),
    );
    // Registered before any await, so that a read of the log that follows waits for it.
    const slot = ns + '\0' + id;
    const pending = this.pending.get(slot) ?? new Set<Promise<unknown>>();
    this.pending.set(slot, pending);
    const settled = work.catch(() => undefined);
    pending.add(settled);
    try {
      await work;
    } finally {
      pending.delete(settled);
      if (pending.size === 0 && this.pending.get(slot) === pending) this.pending.delete(slot);
    }
  }

  /** Waits for this process's audit records of a session still being stored (read-your-writes). */
  async flushed(ns: string, id: string): Promise<void> {
    const pending = this.pending.get(ns + '\0' + id);
    if (pending) await Promise.all(pending);
  }

  /** The session's records, oldest first. */
  async list(ns: string, id: string): Promise<AuditRecord[]> {
    await this.flushed(ns, id);
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
