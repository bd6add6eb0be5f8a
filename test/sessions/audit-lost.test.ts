// An audit record whose PUT fails (storage answers 503 once) while the write's log record is stored is
// lost for good: the write's standing marker goes (`mark.end(logged)` counts only the log record), so the
// compactor, which restores audit records from write records for stale markers only, never restores it.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { StorageUnavailableError, type PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'au';

class FailAuditOnce extends PassThrough {
  armed = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.armed && key.includes('/audit/')) {
      this.armed = false;
      throw new StorageUnavailableError('503 from the backend');
    }
    return this.inner.put(key, body, options);
  }
}

describe('audit log', () => {
  it('an audit record whose PUT failed once is restored, not lost', async () => {
    const objects = new FailAuditOnce(tempLocalStore('audit-lost'));
    let skew = 0;
    const now = () => Date.now() + skew;
    const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
    const errors: string[] = [];
    const sessions = new SessionStore(objects, {
      pipeline,
      audit: new AuditLog(objects, pipeline.redactText),
      now,
      markerIdleMs: 0,
      onError: (what) => void errors.push(what),
    });
    await sessions.create(ns, { id: 's1', task: 'audit me', messages: [] });
    await sessions.settled();
    objects.armed = true;
    await sessions.append(ns, 's1', { messages: [{ role: 'user', content: 'hi' }] }, undefined);
    await sessions.settled();
    await sessions.retireMarkers();
    expect(errors).toContain('audit record not stored');
    // Time passes; compaction (which heals stale markers and restores their audit records) runs.
    skew = 60 * 60_000;
    await sessions.manifest.compact(ns, true);
    await sessions.settled();
    const records = await sessions.auditRecords(ns, 's1');
    expect(records.map((r) => [r.op, r.revision])).toEqual([
      ['create', 1],
      ['append', 2],
    ]);
  });
});
