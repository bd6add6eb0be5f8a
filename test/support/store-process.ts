import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import type { ObjectStore } from '../../lib/storage/port.js';

/** A process: its store, a request context whose background work `drain` awaits. */
export function storeProcess(objects: ObjectStore, opts: Partial<SessionStoreOptions> = {}) {
  const work: Promise<unknown>[] = [];
  const ctx = { schedule: (w: Promise<unknown>) => void work.push(w.catch(() => undefined)) };
  const store = new SessionStore(objects, { onError: () => undefined, markerIdleMs: 0, ...opts });
  const drain = async () => {
    for (let i = 0; i < 5; i++) {
      while (work.length > 0) await Promise.all(work.splice(0));
      await store.settled();
    }
    await store.retireMarkers();
  };
  return { store, ctx, drain };
}
