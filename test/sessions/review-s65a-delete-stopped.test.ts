// Review s65a, finding 1: a DELETE stored its log record beside its erasing (deleteParts). A process that
// stopped after the record landed, before the erasing, left the large session's base (its whole text),
// its audit records and its keyed-record packs for good: the record covered the delete's pending marker,
// so compaction deleted it and no stale-marker heal ran. Now the erasing settles before the record: a
// process that stops during it leaves an unlogged marker, whose heal erases them.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { text, type ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';
import { backdate, labelled } from '../support/leftovers.js';

const WORDS = ['zqoldtask', 'zqoldbody', 'zqbigwordx', 'zqlabelx'];
const never = new Promise<never>(() => {});

/** An append of one message holding an untrusted wrapper labelled with a path, under Idempotency-Key `key`. */
const label = (body: string, key: string) => labelled('file:/home/me/zqlabelx/plan.txt', body, key);

/**
 * The keys of the session's object, parts, packs and audit records (and with `manifest`, the manifest's)
 * whose object holds one of WORDS; the search index erases its own with its healing (not waited for here).
 */
async function leftovers(store: ObjectStore, id: string, manifest = false): Promise<string[]> {
  const out: string[] = [];
  const prefixes = [keys.parts, keys.keyRecords, keys.audit, keys.session].map((p) =>
    p('alice', id),
  );
  for (const prefix of manifest ? [...prefixes, keys.manifest('alice')] : prefixes)
    for (const k of await listAll(store, prefix)) {
      const got = await store.get(k);
      if (got && WORDS.some((w) => text(got.body).includes(w))) out.push(k);
    }
  return out;
}

/**
 * The deleting process over `store`: once armed, its erasing's first LIST (bases, packs or audit records)
 * waits up to 500 ms for its delete record to land, then the process stops there (no call of it returns
 * again); with `stopAtRecord` it stops as soon as that record has landed.
 */
function deleting(store: ObjectStore, stopAtRecord: boolean) {
  const state = { armed: false, stopped: false };
  let landed!: () => void;
  const recorded = new Promise<void>((r) => (landed = r));
  const objects = new Proxy(store, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      if (!['get', 'put', 'delete', 'list', 'head'].includes(prop as string)) return v.bind(target);
      return async (...args: unknown[]) => {
        const key = String(args[0]);
        if (state.stopped) await never;
        if (state.armed && prop === 'list' && /\/(b|k|audit)\//.test(key)) {
          await Promise.race([recorded, new Promise((r) => setTimeout(r, 500))]);
          if (!stopAtRecord) state.stopped = true;
          if (state.stopped) await never;
        }
        const out = await (v as (...a: unknown[]) => unknown).apply(target, args);
        if (state.armed && prop === 'put' && key.includes('/m/l/')) {
          state.stopped ||= stopAtRecord;
          landed();
        }
        return out;
      };
    },
  });
  return { objects, state };
}

/** Session `id` by another process: 30 keyed labelled appends (a pack), then 440 KB (a base) and one more. */
async function largeSession(store: ObjectStore, id: string): Promise<void> {
  const other = await makeApp({ objects: store });
  const created = await other.call('POST', '/v1/sessions', {
    body: { id, task: 'zqoldtask plan' },
  });
  expect(created.status).toBe(201);
  for (let i = 0; i < 30; i++) {
    const r = await other.call(
      'POST',
      `/v1/sessions/${id}/messages`,
      label(`zqoldbody ${i}`, `o${i}`),
    );
    expect(r.status).toBe(200);
  }
  const big = { role: 'user', content: 'zqbigwordx '.repeat(40_000) };
  const ok = { role: 'assistant', content: 'ok zqoldbody' };
  for (const m of [big, ok])
    expect(
      (await other.call('POST', `/v1/sessions/${id}/messages`, { body: { messages: [m] } })).status,
    ).toBe(200);
  await settleAll(other);
  for (const prefix of [keys.parts, keys.keyRecords, keys.audit])
    expect(await listAll(store, prefix('alice', id))).not.toEqual([]);
}

/** Sends the DELETE from `deleter` (it never answers: its process stops) and waits for the stop. */
async function stoppedDelete(id: string, deleter: ReturnType<typeof deleting>): Promise<void> {
  const app = await makeApp({ objects: deleter.objects });
  deleter.state.armed = true;
  void app.call('DELETE', `/v1/sessions/${id}`);
  for (let i = 0; i < 250 && !deleter.state.stopped; i++)
    await new Promise((r) => setTimeout(r, 20));
  expect(deleter.state.stopped).toBe(true);
}

/** The pending markers of `id` but the creating process's standing one. */
async function deleteMarkers(store: ObjectStore, id: string): Promise<string[]> {
  const all = await listAll(store, keys.pending('alice', id, ''));
  return all.filter((k) => !k.slice(k.lastIndexOf('/') + 1).includes('-s'));
}

for (const [backend, make] of [
  ['local folder', () => tempLocalStore('s65a-stopped')],
  ['radosgw', () => openTestS3('s65a-stopped')],
] as const) {
  describe(`a DELETE whose process stops after the object went (review s65a, ${backend})`, () => {
    it('stopped during its erasing: the heal of its marker erases the base, packs and audit records', async () => {
      const store = make();
      const id = 'crash-a';
      await largeSession(store, id);
      await stoppedDelete(id, deleting(store, false));
      // No log record tells of the delete: its marker stays until, stale, the compactor heals it.
      await backdate(store, id);
      const later = await makeApp({ objects: store });
      expect((await later.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
      await later.sessions.manifest.compact('alice', true);
      await settleAll(later);
      expect(await deleteMarkers(store, id)).toEqual([]);
      expect(await leftovers(store, id, true)).toEqual([]);
      const listed = await later.call('GET', '/v1/sessions');
      expect(listed.json.sessions.map((s: { id: string }) => s.id)).not.toContain(id);
    }, 120_000);

    it('stopped once its delete record landed: the base, packs and audit records are gone already', async () => {
      const store = make();
      const id = 'crash-b';
      await largeSession(store, id);
      await stoppedDelete(id, deleting(store, true));
      expect(await leftovers(store, id)).toEqual([]);
      // The record covers the marker: a compaction collects it, with no heal to run.
      const later = await makeApp({ objects: store });
      await later.sessions.manifest.compact('alice', true);
      await settleAll(later);
      expect(await deleteMarkers(store, id)).toEqual([]);
      expect(await leftovers(store, id, true)).toEqual([]);
    }, 120_000);
  });
}
