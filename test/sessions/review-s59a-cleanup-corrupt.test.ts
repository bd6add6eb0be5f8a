// Review s59a, finding 2 (fixed 2026-12-06; all but the third test failed on the code before the fix). An object at a
// session key that is no session (a half-copied file) is deletable by DELETE (docs/api.md), but a cleanup
// with `older_than_days` > 0 refused it as corrupt (lib/sessions/store.ts `toDelete`: `cutoff < Infinity`
// rethrew): a 503 "... could not be deleted (... is not valid JSON): try again" while other old sessions
// went, and a 500 Corrupt Stored Object on every cleanup once it was the only old one, although no retry
// could ever help. A cleanup now decides it by the manifest entry it chose it by (its listed updated_at,
// older than the cutoff) and deletes it as a DELETE without If-Match does.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { utf8 } from '../../lib/model/bytes.js';
import { tempLocalStore } from '../support/temp-store.js';
import { storeProcess } from '../support/store-process.js';
import { makeApp, settleAll } from '../http/helpers.js';

const DAY = 86_400_000;

/** An app holding old sessions (30 days) with `tasks`, listed in manifest pages; their ids in order. */
async function oldSessions(tasks: string[]) {
  const app = await makeApp();
  const old = new Date(Date.now() - 30 * DAY).toISOString();
  const ids: string[] = [];
  for (const task of tasks) {
    const body = {
      task,
      created_at: old,
      updated_at: old,
      messages: [{ role: 'user', content: 'hi' }],
    };
    const made = await app.call('POST', '/v1/sessions', { body });
    expect(made.status).toBe(201);
    ids.push(made.json.id as string);
  }
  await settleAll(app);
  await app.sessions.manifest.compact('alice', true);
  await settleAll(app);
  /** Half copies the session object of `id` over (no longer JSON). */
  const halfCopy = (id: string) =>
    writeFileSync(join(app.dir, 'ns/alice/sessions', `${id}.json`), `{"id":"${id}","task":"old`);
  return { app, ids, halfCopy };
}

it('a cleanup deletes a half-copied old session with the other old ones, and says so', async () => {
  const { app, ids, halfCopy } = await oldSessions(['old one', 'old two']);
  halfCopy(ids[0]!);
  expect((await app.call('GET', `/v1/sessions/${ids[0]}`)).status).toBe(500);
  // Before the fix: 503 "cleanup deleted 1 of 2 sessions; 1 could not be deleted (...): try again".
  const first = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 7 } });
  expect({ status: first.status, body: first.json }).toEqual({ status: 200, body: { deleted: 2 } });
  await settleAll(app);
  for (const id of ids) expect((await app.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
  expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
  const again = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 7 } });
  expect({ status: again.status, body: again.json }).toEqual({ status: 200, body: { deleted: 0 } });
}, 30_000);

it('a cleanup whose only old session is half copied deletes it (no 500, on this run or the next)', async () => {
  const { app, ids, halfCopy } = await oldSessions(['only old one']);
  const recent = await app.call('POST', '/v1/sessions', {
    body: { task: 'recent', messages: [{ role: 'user', content: 'hi' }] },
  });
  halfCopy(ids[0]!);
  // Before the fix: 500 Corrupt Stored Object, and again on every cleanup after.
  const first = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 7 } });
  expect({ status: first.status, body: first.json }).toEqual({ status: 200, body: { deleted: 1 } });
  await settleAll(app);
  expect((await app.call('GET', `/v1/sessions/${ids[0]}`)).status).toBe(404);
  expect((await app.call('GET', `/v1/sessions/${recent.json.id}`)).status).toBe(200);
  // The id can be created again.
  const remade = await app.call('POST', '/v1/sessions', {
    body: { id: ids[0], task: 'again', messages: [] },
  });
  expect(remade.status).toBe(201);
}, 30_000);

it('a half-copied session the manifest lists as recent is left to a DELETE of its id', async () => {
  const { app, halfCopy } = await oldSessions([]);
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'recent', messages: [{ role: 'user', content: 'hi' }] },
  });
  await settleAll(app);
  halfCopy(made.json.id);
  const out = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 7 } });
  expect({ status: out.status, body: out.json }).toEqual({ status: 200, body: { deleted: 0 } });
  expect((await app.call('GET', `/v1/sessions/${made.json.id}`)).status).toBe(500);
  expect((await app.call('DELETE', `/v1/sessions/${made.json.id}`)).status).toBe(204);
}, 30_000);

// A Worker's cleanup deletes a batch per call, oldest first: a half-copied oldest session stood at the front
// of every batch, and each call failed on it (500 when the batch was just that one).
it('a batched cleanup (a Worker) is not held up by a half-copied session at the front', async () => {
  const objects = tempLocalStore('s59a-cleanup-batch');
  const ns = 'alice';
  const ids: string[] = [];
  for (const [i, label] of ['oldest', 'older', 'old'].entries()) {
    const at = new Date(Date.now() - (30 - i) * DAY).toISOString();
    const p = storeProcess(objects, { now: () => Date.now() - (30 - i) * DAY });
    const body = { task: label, created_at: at, updated_at: at, messages: [] };
    ids.push((await p.store.create(ns, body, p.ctx)).session.id);
    await p.drain();
  }
  const listed = storeProcess(objects);
  await listed.store.manifest.compact(ns, true); // the entries in pages: the list shows them
  await listed.drain();
  await objects.put(keys.session(ns, ids[0]!), utf8(`{"id":"${ids[0]}","task":"old`));
  const worker = storeProcess(objects, { cleanupBatch: 1, recordLingerMs: 0, groupCommit: false });
  expect(await worker.store.cleanup(ns, 7, worker.ctx)).toEqual({ deleted: 1, remaining: 2 });
  await worker.drain();
  expect(await worker.store.cleanup(ns, 7, worker.ctx)).toEqual({ deleted: 1, remaining: 1 });
  await worker.drain();
  expect(await worker.store.cleanup(ns, 7, worker.ctx)).toEqual({ deleted: 1 });
  await worker.drain();
  for (const id of ids) expect(await objects.get(keys.session(ns, id))).toBeNull();
}, 30_000);
