import { describe, expect, it } from 'vitest';
import { StandingMarkers } from '../../lib/sessions/markers.js';
import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { tempLocalStore } from '../support/temp-store.js';

// Review s58j (suspected, fixed 2026-12-06): on Workers a standing marker's PUT is the work of the request
// that began it, and a second write of the same session that took that marker waited for it; workerd
// cancels a request that waits on another request's storage work as hung. Without sharing
// (`shareUnstored: false`, SessionStore groupCommit false) a write never takes a marker whose PUT has not
// answered: it stores its own. Once a marker is stored, writes take it as before (one request per append).

/** A local folder whose marker PUTs wait until `release` is called. */
function gatedStore(): { store: ObjectStore; puts: string[]; release: () => void } {
  const inner = tempLocalStore('markers-unshared');
  const puts: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const store = Object.create(inner) as ObjectStore;
  store.put = async (key: string, body: Uint8Array, options?: PutOptions) => {
    puts.push(key);
    await gate;
    return inner.put(key, body, options);
  };
  return { store, puts, release: open };
}

describe('standing markers of one session begun while the first PUT is on its way', () => {
  it('are shared by default: the second write waits for the first PUT', async () => {
    const { store, puts, release } = gatedStore();
    const markers = new StandingMarkers(store, { now: Date.now });
    const a = markers.begin('ns', 's1');
    const b = markers.begin('ns', 's1');
    expect(puts).toHaveLength(1);
    expect(b.ready).toBe(a.ready);
    release();
    await Promise.all([a.ready, b.ready]);
  });

  it('without sharing: the second write stores a marker of its own, and takes a stored one after', async () => {
    const { store, puts, release } = gatedStore();
    const markers = new StandingMarkers(store, { now: Date.now, shareUnstored: false });
    const a = markers.begin('ns', 's1');
    const b = markers.begin('ns', 's1');
    expect(puts).toHaveLength(2);
    expect(new Set(puts).size).toBe(2);
    expect(b.ready).not.toBe(a.ready);
    release();
    await Promise.all([a.ready, b.ready]);
    const c = markers.begin('ns', 's1');
    expect(puts).toHaveLength(2);
    expect(c.ready).toBe(b.ready);
  });
});
