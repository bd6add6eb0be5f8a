// Review s63a, finding 1: an id created again while its delete was erasing (between the object's DELETE and
// the listing of its records) kept the deleted session's audit records and keyed-record packs, with their
// ingest-source labels, and the new session's GET …/audit showed them. Now the delete erases the deleted
// session's records and keeps the new one's, and the audit answers only the live session's records.
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../lib/sessions/audit.js';
import { deleteParts } from '../../lib/sessions/parts.js';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { text, utf8 } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { auditRecord, sessionObject, writtenAudit } from '../support/audit-records.js';
import { tempLocalStore } from '../support/temp-store.js';
import { LIMIT, limitedWorker } from '../support/worker-limit.js';
import { holding, hooked, labelled } from '../support/leftovers.js';

const OLD = 'file:/home/me/zqclientacmex/merger-plan.txt';
const NEW = 'file:/home/me/zqnewsession/notes.txt';

type Shown = { op: string; revision: number; ingest_sources: string[] }[];

describe('an id created again while its delete erases (review s63a)', () => {
  it('the delete erases the deleted session`s audit records and packs, and keeps the new one`s', async () => {
    const base = await makeApp();
    const store = new LocalStore(base.dir);
    const id = 'again-1';
    let armed = false;
    let reached!: () => void;
    const atList = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The delete's listings of the keyed and audit records wait (after its object DELETE) at the gate.
    const deleter = await makeApp({
      objects: hooked(store, async (op, key) => {
        if (armed && op === 'list' && /\/(audit|k)\/again-1\//.test(key)) {
          reached();
          await gate;
        }
      }),
    });
    const other = await makeApp({ objects: store });
    expect((await other.call('POST', '/v1/sessions', { body: { id, task: 'old' } })).status).toBe(
      201,
    );
    for (let i = 0; i < 30; i++) {
      const r = await other.call(
        'POST',
        `/v1/sessions/${id}/messages`,
        labelled(OLD, `old ${i}`, `o${i}`),
      );
      expect(r.status).toBe(200);
    }
    await settleAll(other);
    expect(await holding(store, keys.keyRecords('alice', id), OLD)).not.toEqual([]);
    armed = true;
    const del = deleter.call('DELETE', `/v1/sessions/${id}`);
    await atList;
    // The adapters' first write: append (404), create, append; this agent's appends are keyed too.
    const lost = { body: { messages: [{ role: 'user', content: 'x' }] } };
    expect((await other.call('POST', `/v1/sessions/${id}/messages`, lost)).status).toBe(404);
    const made = await other.call('POST', '/v1/sessions', { body: { id, task: 'new' } });
    expect(made.status).toBe(201);
    for (let i = 0; i < 30; i++) {
      const r = await other.call(
        'POST',
        `/v1/sessions/${id}/messages`,
        labelled(NEW, `new ${i}`, `n${i}`),
      );
      expect(r.status).toBe(200);
    }
    await settleAll(other);
    const newPacks = await holding(store, keys.keyRecords('alice', id), NEW);
    expect(newPacks).not.toEqual([]);
    release();
    expect((await del).status).toBe(204);
    await settleAll(deleter);
    await settleAll(other);

    const audit = await other.call('GET', `/v1/sessions/${id}/audit`);
    const shown = audit.json.records as Shown;
    expect(shown.map((r) => r.op)).toEqual(['create', ...Array<string>(30).fill('append')]);
    expect(shown[0]!.revision).toBe(made.json.revision);
    expect(shown.filter((r) => r.ingest_sources.includes(OLD))).toEqual([]);
    expect(await holding(store, 'ns/alice/', 'zqclientacmex')).toEqual([]);
    // The new session's packs stay: a retry of its first keyed append (stored out) replays it.
    expect(await holding(store, keys.keyRecords('alice', id), NEW)).toEqual(newPacks);
    const before = (await other.call('GET', `/v1/sessions/${id}`)).json.revision as number;
    const retry = await other.call(
      'POST',
      `/v1/sessions/${id}/messages`,
      labelled(NEW, 'new 0', 'n0'),
    );
    expect(retry.status).toBe(200);
    expect((await other.call('GET', `/v1/sessions/${id}`)).json.revision).toBe(before);
  }, 120_000);

  it('the audit leaves out a deleted session`s records still there, and a merge drops them', async () => {
    const ns = 'am';
    const id = 's1';
    // What such a delete left before the fix: 40 records of the deleted session (revisions 1 to 40) ...
    const store = await writtenAudit(tempLocalStore('s63a-list'), ns, id, 40, 'old-device');
    // ... beside those of the session created again under the id, above the revision floor (1,040).
    await store.put(keys.session(ns, id), sessionObject(id, 'b2'));
    const log = new AuditLog(store, (s) => s);
    for (const [revision, op] of [
      [1041, 'create'],
      [1042, 'append'],
    ] as const)
      await log.recordAll(ns, id, [
        { record: { ...auditRecord(revision, 'new-device'), op }, writeKey: `new${revision}` },
      ]);
    const shown = await log.list(ns, id);
    expect(shown.map((r) => [r.op, r.revision, r.device])).toEqual([
      ['create', 1041, 'new-device'],
      ['append', 1042, 'new-device'],
    ]);
    // 42 objects: the read merged them, without the deleted session's records, whose objects went.
    expect(await holding(store, keys.audit(ns, id), 'old-device')).toEqual([]);
    expect((await listAll(store, keys.audit(ns, id))).length).toBe(1);
    expect((await new AuditLog(store, (s) => s).list(ns, id)).length).toBe(2);
  });

  it('a delete finding the id created again reads at most 250 audit objects', async () => {
    const ns = 'am';
    const id = 's2';
    const store = await writtenAudit(tempLocalStore('s63a-bound'), ns, id, 300, 'old-device');
    const pack = (i: string) => `${keys.keyRecords(ns, id)}20000/p-${i}_0a1b2c3d.json`;
    await store.put(pack('a1'), utf8('[]'));
    await store.put(pack('b2'), utf8('[]'));
    // The session created again (incarnation b2) whose create, at revision 1301, is still in its object.
    const create = { k: 'w:c', at: Date.UTC(2026, 11, 8), r: { revision: 1301 } };
    const session = JSON.parse(text(sessionObject(id, 'b2'))) as Record<string, unknown>;
    const writes = [{ ...create, a: { o: 'create', d: 'new-device', n: 0, m: 0 } }];
    Object.assign(session, {
      updated_at: session['created_at'],
      revision: 1301,
      satchel: { i: 'b2', writes },
    });
    await store.put(keys.session(ns, id), utf8(JSON.stringify(session)));
    await new AuditLog(store, (s) => s).recordAll(ns, id, [
      {
        record: {
          ...auditRecord(1301, 'new-device'),
          op: 'create',
          at: new Date(create.at).toISOString(),
        },
        writeKey: 'w:c',
      },
    ]);
    let gets = 0;
    const counted = hooked(store, (op) => void (op === 'get' && gets++));
    await deleteParts(counted, ns, id, { records: true });
    expect(gets).toBeLessThanOrEqual(252); // the lease, the object and 250 audit objects
    const left = await listAll(store, keys.audit(ns, id));
    // The oldest 250 went; the other 50 wait for a read of the audit, which leaves them out (and merges).
    expect(left.length).toBe(51);
    expect(await listAll(store, keys.keyRecords(ns, id))).toEqual([pack('b2')]);
    const shown = await new AuditLog(store, (s) => s).list(ns, id);
    expect(shown.map((r) => r.device)).toEqual(['new-device']);
    expect(await holding(store, keys.audit(ns, id), 'old-device')).toEqual([]);
  });

  it('on a Worker, such a delete of a session with 300 audit objects stays within 1,000 operations', async () => {
    const store = tempLocalStore('s63a-worker');
    const creator = limitedWorker(store);
    let created: Promise<unknown> | undefined;
    // The id is created again (another isolate) when the delete lists its audit records.
    const deleter = limitedWorker(
      hooked(store, async (op, key) => {
        if (op === 'list' && key.includes('/audit/wk/') && created === undefined)
          await (created = creator.call('POST', '/v1/sessions', { id: 'wk', task: 'new' }));
      }),
    );
    expect((await creator.call('POST', '/v1/sessions', { id: 'wk', task: 'old' })).status).toBe(
      201,
    );
    for (let i = 0; i < 300; i++) {
      const r = await creator.call(
        'POST',
        '/v1/sessions/wk/messages',
        labelled(OLD, `old ${i}`, '').body,
      );
      expect(r.status).toBe(200);
    }
    const del = await deleter.call('DELETE', '/v1/sessions/wk');
    expect(del.status).toBe(204);
    expect(del.used).toBeLessThanOrEqual(LIMIT);
    expect(((await created) as { status: number }).status).toBe(201);
    const audit = await creator.call('GET', '/v1/sessions/wk/audit');
    expect(audit.used).toBeLessThanOrEqual(LIMIT);
    expect((audit.json.records as Shown).map((r) => r.op)).toEqual(['create']);
    // What the delete could not read within its bound went with that read's merge.
    expect(await holding(store, 'ns/edge/', 'zqclientacmex')).toEqual([]);
  }, 120_000);
});
