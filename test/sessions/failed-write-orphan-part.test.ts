// A write whose commit lost its answer (it did not land) and which then failed (its next attempt's part PUT
// was refused) left the first attempt's part (a segment holding the session's messages and the failed
// request's own message) beside the live session until it was deleted: `checkLeft` erased such parts only
// when the session turned out gone, and a session trimmed below the split size never folds (sweeps) again.
// Now the parts go once the object has moved past the etag their PUT was conditional on and does not name
// them: at once when the read after the run shows that, else at this process's next commit to the session.
//
// The parts a commit rules out (`ruledOut`: those of lost attempts whose PUT could still have landed) are
// spared when the committed object names them. Until 2026-12-04 (not released) that was read from the
// cache's copy, which a delete of any session of the process during the PUT leaves empty: a segment a
// delayed PUT had made live was deleted, and the session named a missing part (its whole reads failed).
import { expect, it } from 'vitest';
import { decodeStored } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';

const ns = 'fo';

/** Holds a session CAS back (no answer now; `release` lands it), then refuses the next part PUT. */
class Faults extends PassThrough {
  holdCas = false;
  refusePart = false;
  held?: { key: string; body: Uint8Array; options: PutOptions };
  beforeCas?: () => Promise<void>;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (options?.ifMatch && key.includes('/sessions/')) {
      if (this.holdCas) {
        // The PUT is delayed in the network: no answer now, it lands later (`release`).
        this.holdCas = false;
        this.refusePart = true;
        this.held = { key, body, options };
        throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
      }
      if (this.beforeCas && options.ifMatch !== this.held?.options.ifMatch) {
        const f = this.beforeCas;
        this.beforeCas = undefined;
        await f();
      }
    }
    if (key.includes('/b/') && this.refusePart) {
      this.refusePart = false;
      throw new StorageUnavailableError('refused');
    }
    return super.put(key, body, options);
  }
  release() {
    const h = this.held!;
    return this.inner.put(h.key, h.body, h.options);
  }
}

const user = (content: string) => ({ role: 'user' as const, content });

/** A session store that splits sessions at 4 KiB (512 B segments). */
function open(objects: ObjectStore) {
  const pipeline = defaultPipeline({ maxSessionBytes: 4 * 1024 * 1024 });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    splitBytes: 4096,
    segmentBytes: 512,
  });
}

/**
 * A store over a fresh local folder behind the fault store, holding session `id` split (base + delta, the
 * split at 4 KiB) and, when asked, a second session `other`.
 */
async function splitSession(id: string, other = false) {
  const objects = tempLocalStore(ns);
  const faults = new Faults(objects);
  const store = open(faults);
  await store.create(ns, { id, task: 'orphan parts', messages: [user('h0 ' + 'x'.repeat(4200))] });
  if (other) await store.create(ns, { id: 'other', task: 'other', messages: [user('o')] });
  await store.append(ns, id, { messages: [user('a0')] }, undefined); // folds: base + delta
  await store.settled();
  return { objects, faults, store };
}

it('a failed write leaves no part of its lost attempt behind a live session', async () => {
  const id = 'orphan';
  const { objects, faults, store } = await splitSession(id);
  expect(decodeStored((await objects.get(keys.session(ns, id)))!.body, id).base).toBeDefined();

  // An append that seals a segment: its commit's answer is lost (it did not land), and the next attempt's
  // segment PUT is refused: the write fails.
  faults.holdCas = true; // never released: it did not land
  const secretish = 'trimmed-away-words ' + 'y'.repeat(700);
  await expect(store.append(ns, id, { messages: [user(secretish)] }, undefined)).rejects.toThrow();
  // The session lives on: later writes move the object past the lost attempt's etag.
  await store.append(ns, id, { messages: [user('a1 ' + 'z'.repeat(700))] }, undefined);
  await store.append(ns, id, { messages: [user('a2')] }, undefined);
  // The user trims the session below the split size: it is stored whole again.
  await store.trim(ns, id, 1);
  await store.settled();
  await new Promise((r) => setTimeout(r, 300));
  await store.settled();
  const form = decodeStored((await objects.get(keys.session(ns, id)))!.body, id);
  expect(form.base).toBeUndefined(); // whole again: nothing names a part

  const left = await listAll(objects, keys.parts(ns, id));
  const holding: string[] = [];
  for (const k of left)
    if (
      Buffer.from((await objects.get(k))!.body)
        .toString('utf8')
        .includes('trimmed-away-words')
    )
      holding.push(k);
  expect(holding, 'parts nothing names that hold the trimmed text').toEqual([]);
});

it('a part kept for the next commit is not deleted while the live object names it', async () => {
  const id = 'keep';
  const { objects, faults, store } = await splitSession(id, true);

  // Run A: its segment-sealing commit is delayed (no answer); its next attempt's part is refused.
  faults.holdCas = true;
  await expect(
    store.append(ns, id, { messages: [user('seg-msg ' + 'y'.repeat(700))] }, undefined),
  ).rejects.toThrow();
  await store.settled(); // checkLeft -> dropUnnamed: object still at the etag: parts kept in leftParts
  await new Promise((r) => setTimeout(r, 100));
  await store.settled();

  // The delayed PUT lands now: the live object names the lost attempt's segment.
  await faults.release();
  const landed = decodeStored((await objects.get(keys.session(ns, id)))!.body, id);
  expect(landed.segs?.length).toBeGreaterThan(0);

  // Run B: a small append on it (keeps the segment). Meanwhile another session is deleted in this process.
  faults.beforeCas = () => store.delete(ns, 'other');
  await store.append(ns, id, { messages: [user('b0')] }, undefined);
  await store.settled();
  await new Promise((r) => setTimeout(r, 100));
  await store.settled();

  const now = decodeStored((await objects.get(keys.session(ns, id)))!.body, id);
  const missing: string[] = [];
  for (const k of [now.base!.key, ...(now.segs ?? []).map((s) => s.key)])
    if (!(await objects.get(k))) missing.push(k);
  expect(missing, 'parts the live object names that were deleted').toEqual([]);
  const fresh = open(objects);
  const s = await fresh.get(ns, id);
  expect(s.messages.map((m) => String(m.content).slice(0, 7))).toContain('seg-msg');
});
