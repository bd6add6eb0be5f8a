// Cleanup picks its sessions from the manifest view, then deletes each with an unconditional DELETE after
// a GET: it never checks that the object it read is still older than the cutoff. A session another device
// appended to between the view and the delete (so updated "now", not older than n days) is deleted, with
// the append it had just acknowledged.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { AuditLog } from '../../lib/sessions/audit.js';
import { SessionStore } from '../../lib/sessions/store.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'cl';
const DAY = 86_400_000;

function proc(objects: ObjectStore, now: () => number = Date.now) {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 20 });
  const audit = new AuditLog(objects, pipeline.redactText);
  return new SessionStore(objects, { pipeline, audit, now });
}

/** Runs `hook` once, when a delete's pending marker of `id` is PUT (after cleanup's view). */
class OnDeleteMarker extends PassThrough {
  hook: (() => Promise<void>) | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    const out = await this.inner.put(key, body, options);
    if (this.hook && key.includes('/m/p/') && !/-s[0-9a-f]/.test(key.split('/').pop()!)) {
      const h = this.hook;
      this.hook = undefined;
      await h();
    }
    return out;
  }
}

describe('cleanup', () => {
  it('does not delete a session appended to after its view, within the days kept', async () => {
    const inner = tempLocalStore('cleanup-fresh');
    const old = proc(inner, () => Date.now() - 3 * DAY);
    await old.create(ns, { id: 'stale-one', task: 'old task', messages: [] });
    await old.settled();
    const device = proc(inner);
    const wrapped = new OnDeleteMarker(inner);
    const cleaner = proc(wrapped);
    wrapped.hook = async () => {
      await device.append(
        ns,
        'stale-one',
        { messages: [{ role: 'user', content: 'fresh' }] },
        undefined,
      );
      await device.settled();
    };
    const out = await cleaner.cleanup(ns, 1);
    await cleaner.settled();
    expect(wrapped.hook).toBeUndefined(); // the append ran between the view and the delete
    // The session was updated just now: it is not older than 1 day and must stay, with its new message.
    const still = await inner.get(keys.session(ns, 'stale-one'));
    expect({ deleted: out.deleted, exists: still !== null }).toEqual({ deleted: 0, exists: true });
  });
});
