// On Workers each write stores its own audit object, and GET …/audit read every one: past about 1,000
// writes it went over Cloudflare's 1,000 binding operations per request and answered 503 for good (review
// s60b). The Worker's read now GETs at most 250 objects, merging the oldest a slice at a time.
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../lib/sessions/audit.js';
import { LocalStore } from '../../lib/storage/local.js';
import { LIMIT, limitedWorker } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

describe('the audit of a long session on Workers', () => {
  it('answers every record within the limit after at most one 503 that makes progress', async () => {
    const store = new LocalStore(tempDir('worker-audit'));
    const { call, isolate } = limitedWorker(store);
    expect(
      (await call('POST', '/v1/sessions', { id: 'long', task: 'a long session', messages: [] }))
        .status,
    ).toBe(201);
    // 1,100 more writes' records, each its own object as a Worker stores them (as fast as files go).
    const log = new AuditLog(store, (s) => s);
    for (let r = 2; r <= 1101; r++) {
      const record = {
        at: new Date(Date.now() + r).toISOString(),
        op: 'append' as const,
        device: 'edge',
        revision: r,
        messages: r - 1,
        messages_added: 1,
        bytes: 100,
        redactions: 0,
        dropped_groups: 0,
        ingest_sources: [],
        untrusted_ingested: false,
        episode_untrusted: false,
      };
      await log.recordAll('edge', 'long', [{ record, writeKey: `w${r}` }]);
    }
    const answers: number[] = [];
    let records: { revision: number }[] = [];
    for (let i = 0; i < 4 && records.length === 0; i++) {
      isolate();
      const r = await call('GET', '/v1/sessions/long/audit');
      expect(r.used).toBeLessThanOrEqual(LIMIT);
      answers.push(r.status);
      if (r.status === 200) records = r.json.records as { revision: number }[];
    }
    expect(answers).toEqual([503, 200]);
    expect(records.map((r) => r.revision)).toEqual(Array.from({ length: 1101 }, (_, i) => i + 1));
  }, 120_000);
});
