// Review s66k, finding 1: an audit read that merges more than 32 audit objects into one, racing a DELETE.
// The delete's erasing lists audit/<id>/ before the merged object lands; the merge then finds the session
// gone and deleted that object once. When that DELETE failed, or the reader's process stopped after its
// PUT, the merged object (every record of the deleted session, its ingest-source labels too) stayed for
// good. Now the merge runs under a pending marker, whose stale heal erases audit/<id>/, and the clean-up
// is retried (1 s, 2 s …) as other erasing is.
import { describe, expect, it } from 'vitest';
import { StorageUnavailableError, type ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { backdate, holding, hooked, labelled } from '../support/leftovers.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

/** A merged audit object's key (in a call's key, or among a batch DELETE's keys). */
const MERGED = /\/audit\/[^/]+\/\d{13}-m[0-9a-f]{16}\.json/;
const LABEL = 'zqmergelabelx';
const never = new Promise<never>(() => {});

/**
 * A reader process over `store` whose merged audit object's PUT, once armed, waits for `putMayGo`; then
 * either the first DELETE naming that object fails (`fails`) or the process stops (`stops`).
 */
function reader(store: ObjectStore, how: 'fails' | 'stops') {
  const state = { armed: false, stopped: false, failed: false };
  let go!: () => void;
  let reached!: () => void;
  const putMayGo = new Promise<void>((r) => (go = r));
  const atPut = new Promise<void>((r) => (reached = r));
  const objects = hooked(
    store,
    async (op, key) => {
      if (state.stopped) await never;
      if (!state.armed || !MERGED.test(key)) return;
      if (op === 'put') {
        reached();
        await putMayGo; // the whole DELETE runs here
      }
      if (op === 'delete' && how === 'fails' && !state.failed) {
        state.failed = true;
        throw new StorageUnavailableError('DELETE: InternalError (injected once)');
      }
    },
    (op, key) => {
      if (state.armed && op === 'put' && MERGED.test(key) && how === 'stops') state.stopped = true;
    },
  );
  return { objects, state, go, atPut };
}

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('s66k-merge')],
  ['radosgw', () => openTestS3('s66k-merge')],
] as const) {
  describe(`an audit merge racing a DELETE (review s66k, ${backend})`, () => {
    for (const [how, when] of [
      ['fails', 'its clean-up DELETE fails once'],
      ['stops', 'the reader stops after its PUT'],
    ] as const)
      it(`leaves no object holding the deleted session's labels when ${when}`, async () => {
        const store = make();
        const id = `merge-del-${how}`;
        const r = reader(store, how);
        const readerApp = await makeApp({ objects: r.objects });
        const deleter = await makeApp({ objects: store });
        const created = await deleter.call('POST', '/v1/sessions', {
          body: { id, task: 'merge task' },
        });
        expect(created.status).toBe(201);
        for (let i = 0; i < 40; i++) {
          const label = `file:/home/me/${LABEL}/notes-${i}.txt`;
          const a = await deleter.call(
            'POST',
            `/v1/sessions/${id}/messages`,
            labelled(label, `b ${i}`, `k${i}`),
          );
          expect(a.status).toBe(200);
          await settleAll(deleter); // each write's audit record an object of its own
        }
        expect((await listAll(store, `ns/alice/audit/${id}/`)).length).toBeGreaterThan(32);
        r.state.armed = true;
        const read = readerApp.call('GET', `/v1/sessions/${id}/audit`);
        await r.atPut;
        expect((await deleter.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
        await settleAll(deleter);
        r.go();
        if (how === 'fails') {
          expect((await read).status).toBe(200);
          await settleAll(readerApp);
          expect(r.state.failed).toBe(true);
          // The clean-up runs again after 1 s.
          for (let i = 0; i < 40 && (await holding(store, 'ns/alice/', LABEL)).length > 0; i++)
            await new Promise((res) => setTimeout(res, 100));
        } else {
          for (let i = 0; i < 100 && !r.state.stopped; i++)
            await new Promise((res) => setTimeout(res, 20));
          expect(r.state.stopped).toBe(true);
          // The merge's marker stays; once stale (15 min), a compaction's heal erases audit/<id>/.
          await backdate(store, id);
        }
        const later = await makeApp({ objects: store });
        expect((await later.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
        await later.call('GET', '/v1/sessions');
        await later.sessions.manifest.compact('alice', true);
        await settleAll(later);
        expect(await holding(store, 'ns/alice/', LABEL)).toEqual([]);
        // No marker but the deleting process's standing one (`-s`, retired when idle) is left.
        const markers = await listAll(store, `ns/alice/m/p/${id}/`);
        expect(markers.filter((k) => !k.slice(k.lastIndexOf('/')).includes('-s'))).toEqual([]);
      }, 120_000);
  });
}
