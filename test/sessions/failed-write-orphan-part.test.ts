// A write whose commit lost its answer (it did not land) and which then failed (its next attempt's part PUT
// was refused) left the first attempt's part (a segment holding the session's messages and the failed
// request's own message) beside the live session until it was deleted: `checkLeft` erased such parts only
// when the session turned out gone, and a session trimmed below the split size never folds (sweeps) again.
// Now the parts go once the object has moved past the etag their PUT was conditional on and does not name
// them: at once when the read after the run shows that, else at this process's next commit to the session.
import { expect, it } from 'vitest';
import { decodeStored } from '../../lib/model/codec.js';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { listAll } from '../../lib/storage/prefix.js';
import { tempLocalStore } from '../support/temp-store.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';

const ns = 'fo';

/** Loses the answer of the next session CAS (not landed), then refuses the next part PUT. */
class Faults implements ObjectStore {
  readonly name: string;
  loseCas = false;
  refusePart = false;
  constructor(readonly inner: ObjectStore) {
    this.name = inner.name;
  }
  get(key: string) {
    return this.inner.get(key);
  }
  list(prefix: string, o?: { cursor?: string; limit?: number }) {
    return this.inner.list(prefix, o);
  }
  delete(k: string | string[]) {
    return this.inner.delete(k);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (options?.ifMatch && key.includes('/sessions/') && this.loseCas) {
      this.loseCas = false;
      this.refusePart = true; // the next attempt's part is refused
      throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
    }
    if (key.includes('/b/') && this.refusePart) {
      this.refusePart = false;
      throw new StorageUnavailableError('refused');
    }
    return this.inner.put(key, body, options);
  }
}

function open(objects: ObjectStore) {
  const pipeline = defaultPipeline({ maxSessionBytes: 4 * 1024 * 1024 });
  return new SessionStore(objects, {
    pipeline,
    audit: new AuditLog(objects, pipeline.redactText),
    splitBytes: 4096,
    segmentBytes: 512,
  });
}
const user = (content: string) => ({ role: 'user' as const, content });

it('a failed write leaves no part of its lost attempt behind a live session', async () => {
  const objects = tempLocalStore('fo');
  const faults = new Faults(objects);
  const store = open(faults);
  const id = 'orphan';
  await store.create(ns, { id, task: 'orphan parts', messages: [user('h0 ' + 'x'.repeat(4200))] });
  await store.append(ns, id, { messages: [user('a0')] }, undefined); // folds: base + delta
  await store.settled();
  expect(decodeStored((await objects.get(keys.session(ns, id)))!.body, id).base).toBeDefined();

  // An append that seals a segment: its commit's answer is lost (it did not land), and the next attempt's
  // segment PUT is refused: the write fails.
  faults.loseCas = true;
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
