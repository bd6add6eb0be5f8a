// Review s65a, finding 2: a DELETE whose process stopped right after the object's DELETE, then the id created
// again (the adapters' "append 404, create"), kept the deleted session's audit records and keyed-record
// packs, labels and all: the heal of the delete's stale marker found an object (the new session) and erased
// only parts. Now a heal whose marker is older than the session at the id (so not a write of it) erases
// the records of the sessions deleted before it too, and the new session keeps its own. A heal of a
// session's own stale marker still reads none of its audit records (a Worker's 1,000 operations).
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';
import { backdate, holding, hooked, labelled } from '../support/leftovers.js';

const OLD = 'file:/home/me/zqclientacmex/merger-plan.txt';
const NEW = 'file:/home/me/zqnewsession/notes.txt';
const never = new Promise<never>(() => {});

/**
 * The audit records, packs and parts of `id` that hold the deleted session's label (the search index
 * erases its own records, with its own healing).
 */
async function oldRecords(store: ObjectStore, id: string): Promise<string[]> {
  const prefixes = [keys.audit, keys.keyRecords, keys.parts].map((p) => p('alice', id));
  return (await Promise.all(prefixes.map((p) => holding(store, p, 'zqclientacmex')))).flat();
}

/** `app` makes `n` keyed appends to `id` labelled `label` (keys `<prefix><i>`). */
async function appends(
  app: Awaited<ReturnType<typeof makeApp>>,
  id: string,
  label: string,
  prefix: string,
  n = 30,
) {
  for (let i = 0; i < n; i++) {
    const r = await app.call(
      'POST',
      `/v1/sessions/${id}/messages`,
      labelled(label, `${prefix} ${i}`, `${prefix}${i}`),
    );
    expect(r.status).toBe(200);
  }
  await settleAll(app);
}

type Shown = { op: string; revision: number; ingest_sources: string[] }[];

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('s65a-again')],
  ['radosgw', () => openTestS3('s65a-again')],
] as const) {
  describe(`a DELETE stopped after the object went, the id created again (review s65a, ${backend})`, () => {
    it('the heal of its marker erases the deleted session`s audit records and packs, not the new one`s', async () => {
      const store = make();
      const id = 'crash-1';
      const sessionKey = keys.session('alice', id);
      let stopped = false;
      // The deleting process stops (no later call of it returns) once its object DELETE has landed.
      const deleter = await makeApp({
        objects: hooked(
          store,
          () => stopped && never,
          (op, key) => void (op === 'delete' && key === sessionKey && (stopped = true)),
        ),
      });
      const other = await makeApp({ objects: store });
      const created = await other.call('POST', '/v1/sessions', { body: { id, task: 'old' } });
      expect(created.status).toBe(201);
      await appends(other, id, OLD, 'o');
      void deleter.call('DELETE', `/v1/sessions/${id}`); // never answers
      for (let i = 0; i < 250 && !stopped; i++) await new Promise((r) => setTimeout(r, 20));
      expect(stopped).toBe(true);
      // The agent's next write: 404, then its adapter creates the id again, and goes on (keyed appends).
      const lost = { body: { messages: [{ role: 'user', content: 'x' }] } };
      expect((await other.call('POST', `/v1/sessions/${id}/messages`, lost)).status).toBe(404);
      const made = await other.call('POST', '/v1/sessions', { body: { id, task: 'new' } });
      expect(made.status).toBe(201);
      await appends(other, id, NEW, 'n');
      const newPacks = await holding(store, keys.keyRecords('alice', id), NEW);
      const newAudit = await holding(store, keys.audit('alice', id), NEW);
      expect(newPacks).not.toEqual([]);
      expect(await oldRecords(store, id)).not.toEqual([]);
      // 15 minutes on, the stopped delete's marker is stale: a later process's compaction heals it.
      await backdate(store, id);
      const healer = await makeApp({ objects: store });
      await healer.sessions.manifest.compact('alice', true);
      await settleAll(healer);
      const markers = await listAll(store, keys.pending('alice', id, ''));
      expect(markers.filter((k) => !k.slice(k.lastIndexOf('/') + 1).includes('-s'))).toEqual([]);
      expect(await oldRecords(store, id)).toEqual([]);
      expect(await holding(store, keys.keyRecords('alice', id), NEW)).toEqual(newPacks);
      // (The heal stores the new session's records again, one object per write: they read once.)
      const audit = await holding(store, keys.audit('alice', id), NEW);
      expect(audit).toEqual(expect.arrayContaining(newAudit));
      const shown = (await healer.call('GET', `/v1/sessions/${id}/audit`)).json.records as Shown;
      expect(shown.map((r) => r.op)).toEqual(['create', ...Array<string>(30).fill('append')]);
      expect(shown[0]!.revision).toBe(made.json.revision);
    }, 120_000);
  });
}

describe('the heal of a live session`s own stale marker (review s65a)', () => {
  it('reads none of its audit records, and keeps them', async () => {
    const store = tempLocalStore('s65a-own');
    const id = 'live-1';
    const app = await makeApp({ objects: store });
    // Created an hour ago (an import's times), so before the writer's marker below.
    const created_at = new Date(Date.now() - 60 * 60_000).toISOString();
    const body = { id, task: 't', created_at, updated_at: created_at };
    expect((await app.call('POST', '/v1/sessions', { body })).status).toBe(201);
    await appends(app, id, NEW, 'n', 12);
    const audit = await listAll(store, keys.audit('alice', id));
    // A writer of the session that stopped between its commit and its log record, 20 minutes ago.
    const at = String(Date.now() - 20 * 60_000).padStart(13, '0');
    await store.put(keys.pending('alice', id, `${at}-0123456789abcdef01234567`), new Uint8Array(0));
    let read = 0;
    const healer = await makeApp({
      objects: hooked(store, (op, key) => void (op === 'get' && key.includes('/audit/') && read++)),
    });
    await healer.sessions.manifest.compact('alice', true);
    await settleAll(healer);
    expect(await listAll(store, keys.pending('alice', id, `${at}-`))).toEqual([]);
    expect(read).toBe(0);
    // Its records stay (the heal may store them again, one object per write).
    expect(await listAll(store, keys.audit('alice', id))).toEqual(expect.arrayContaining(audit));
    const shown = (await healer.call('GET', `/v1/sessions/${id}/audit`)).json.records as Shown;
    expect(shown.map((r) => r.op)).toEqual(['create', ...Array<string>(12).fill('append')]);
  });
});
