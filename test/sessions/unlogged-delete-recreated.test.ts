// Review s67j (finding 3): a DELETE whose log record failed erases through `purgeUnlogged`, whose manifest
// purge is retried (663259c). No log record tells of that delete, so the purge erased the id's versions
// only when it found the object missing. When the id was created again before the retry ran (a POST with
// `id`, a re-import), the retry erased nothing: the deleted session's log record and page entry, with its
// task, stayed in the manifest for good, through compactions too. The purge now carries the deleted
// version's time, as the log record would have, and erases up to it; the new session stays.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { failingPuts } from '../support/failing-puts.js';
import { holders } from '../support/holders.js';

describe('an unlogged delete whose manifest purge is retried, the id created again meanwhile', () => {
  it("the retry erases the deleted session's task; the new session stays", async () => {
    const dir = mkdtempSync(join(tmpdir(), 's67j-recreated-'));
    const { store, armed } = failingPuts(new LocalStore(dir));
    const app = await makeApp({ objects: store });
    const user = (content: string) => [{ role: 'user', content }];
    await app.call('POST', '/v1/sessions', {
      body: { id: 'keeper', task: 'keeper', messages: user('keeper words') },
    });
    const made = await app.call('POST', '/v1/sessions', {
      body: { id: 'doomed', task: 'old zqoldtask', messages: user('hello zqoldtask') },
    });
    expect(made.status).toBe(201);
    await settleAll(app);
    expect(holders(dir, ['zqoldtask']).some((k) => k.includes('/m/'))).toBe(true);
    armed.push(/\/m\/l\//, /\/m\/r\//); // the delete's log record, then the purge's root: once each
    expect((await app.call('DELETE', '/v1/sessions/doomed')).status).toBe(204);
    await settleAll(app);
    expect(armed).toEqual([]); // both failed: the purge waits for its retry
    const again = await app.call('POST', '/v1/sessions', {
      body: { id: 'doomed', task: 'new zqnewtask', messages: user('hello zqnewtask') },
    });
    expect(again.status).toBe(201);
    await settleAll(app);
    // The retries (after 1 s, 2 s …): until the deleted task is gone, or long after they ran.
    let left = holders(dir, ['zqoldtask']);
    for (let i = 0; i < 100 && left.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = holders(dir, ['zqoldtask']);
    }
    await settleAll(app);
    expect(left).toEqual([]);
    // The new session is untouched, in the manifest as in its object, through a forced compaction too.
    await app.sessions.manifest.compact('alice', true);
    await settleAll(app);
    expect(holders(dir, ['zqoldtask'])).toEqual([]);
    const list = await app.call('GET', '/v1/sessions');
    const listed = (list.json.sessions as { id: string; task: string }[]).map(
      (s) => `${s.id}:${s.task}`,
    );
    expect(listed.sort()).toEqual(['doomed:new zqnewtask', 'keeper:keeper']);
    expect((await app.call('GET', '/v1/sessions/doomed')).json.task).toBe('new zqnewtask');
    expect(holders(dir, ['zqnewtask']).some((k) => k.includes('/m/'))).toBe(true);
  }, 60_000);
});
