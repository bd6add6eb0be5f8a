// A process's own write is in its next list, though a LIST is no snapshot (found by a review on 2026-12-04:
// a session deleted and created again was missing from the list right after its 201).
//
// Mechanism: a LIST of `m/` is not
// an atomic snapshot. LocalStore.list walks the folders for the names first and then stats each name,
// leaving out those deleted since the walk (lib/storage/local.ts, list). With markerIdleMs 0 the standing
// marker of the create is deleted as soon as its log record is stored, so when both happen while the list's
// LIST is running:
//   1. create: PUT marker m/p/s/<at>-s<epoch><n>, PUT sessions/s.json (If-None-Match) -> 201 answered
//   2. list:   snapshot() takes settledMarkers() (the create's marker is NOT settled: its log is not stored)
//   3. list:   LIST m/ enumerates the names: the marker, no log record of the create yet
//   4. create's background: PUT m/l/<at>-<write>.json lands; the write ends; markers.retire DELETEs the marker
//   5. list:   LIST m/ second pass: the marker is gone since the walk and is left out
//   6. list:   the listing holds neither the create's log record nor its marker; nothing sends the reader to
//              the object; the snapshot (root tombstone / old pages, or a cached snapshot with the same
//              signature) answers without the session.
// The wrapper below makes a LIST behave exactly like LocalStore's (names at one moment, existence checked at
// a later one) and holds the pieces in that order.
import { expect, it } from 'vitest';
import { SessionStore, type SessionStoreOptions } from '../../lib/sessions/store.js';
import type { ListOptions, ListPage, ObjectStore, PutOptions } from '../../lib/storage/port.js';
import { tempLocalStore } from '../support/temp-store.js';

const ns = 'm';
const manifestPrefix = `ns/${ns}/m/`;

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Passes everything through, except what a test arms: held log-record PUTs and one two-phase LIST of m/. */
class GatedStore implements ObjectStore {
  readonly name: string;
  /** While set, PUTs of manifest log records wait for it. */
  holdLogs: Promise<void> | null = null;
  /** The next LIST of m/: names taken, then `entered`, then waits for `release` before checking them. */
  gateList: { entered: () => void; release: Promise<void> } | null = null;
  readonly deleted: string[] = [];
  readonly markers: string[] = [];
  private deleteWaiters: { match: (k: string) => boolean; done: () => void }[] = [];

  constructor(
    private readonly inner: ObjectStore & { head(key: string): Promise<{ etag: string } | null> },
  ) {
    this.name = inner.name;
  }

  get(key: string) {
    return this.inner.get(key);
  }
  head(key: string) {
    return this.inner.head(key);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.holdLogs && key.startsWith(`${manifestPrefix}l/`)) await this.holdLogs;
    if (key.startsWith(`${manifestPrefix}p/`)) this.markers.push(key);
    return this.inner.put(key, body, options);
  }
  async delete(keys: string | string[]) {
    await this.inner.delete(keys);
    for (const k of ([] as string[]).concat(keys)) {
      this.deleted.push(k);
      for (const w of this.deleteWaiters.filter((w) => w.match(k))) w.done();
    }
  }
  /** Resolves once a key matching `match` has been deleted. */
  whenDeleted(match: (k: string) => boolean): Promise<void> {
    if (this.deleted.some(match)) return Promise.resolve();
    const d = deferred();
    this.deleteWaiters.push({ match, done: d.resolve });
    return d.promise;
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const gate = prefix === manifestPrefix ? this.gateList : null;
    if (!gate) return this.inner.list(prefix, options);
    this.gateList = null;
    const names = await this.inner.list(prefix, options); // the walk: names as of now
    gate.entered();
    await gate.release;
    // LocalStore's second pass: a name deleted since the walk is left out ("as on S3").
    const objects = [];
    for (const o of names.objects) if (await this.inner.head(o.key)) objects.push(o);
    return { ...names, objects };
  }
}

const opts: Partial<SessionStoreOptions> = {
  markerIdleMs: 0,
  recordLingerMs: 0,
  manifest: { compactAfter: 4, pageSize: 3 },
};

function setup(options = opts) {
  const objects = new GatedStore(tempLocalStore('race-list'));
  const work: Promise<unknown>[] = [];
  const ctx = { schedule: (w: Promise<unknown>) => void work.push(w.catch(() => undefined)) };
  const store = new SessionStore(objects, options);
  const drain = async () => {
    for (let i = 0; i < 20 && work.length > 0; i++) await Promise.all(work.splice(0));
    await store.settled();
  };
  return { objects, store, ctx, drain };
}

/**
 * Creates `body` while its log record is held, lists with the LIST split around the log record's landing and
 * the marker's retirement, and answers what the list showed.
 */
async function createThenListAcrossTheRace(
  s: ReturnType<typeof setup>,
  body: { id: string; task: string; metadata?: Record<string, string> },
) {
  const { objects, store, ctx, drain } = s;
  const logs = deferred();
  objects.holdLogs = logs.promise;
  const markersBefore = objects.markers.length;
  await store.create(ns, body, ctx); // 201: the marker and the object are stored; the log record is held
  // The create's standing marker (`<at>-s<epoch><n>`), stored before its commit.
  const marker = objects.markers
    .slice(markersBefore)
    .find((k) => k.startsWith(`${manifestPrefix}p/${body.id}/`));
  expect(marker, 'the create stored a standing marker').toMatch(/-s[0-9a-f]+$/);
  const entered = deferred();
  const release = deferred();
  objects.gateList = { entered: entered.resolve, release: release.promise };
  const listing = store.list(ns, { limit: 20 });
  await entered.promise; // the LIST has its names: the create's marker, no log record of it
  const markerGone = objects.whenDeleted((k) => k === marker);
  objects.holdLogs = null;
  logs.resolve(); // the create's log record lands ...
  await markerGone; // ... and its standing marker is retired (markerIdleMs 0)
  release.resolve(); // the LIST checks its names: the marker is gone
  const listed = await listing;
  await drain();
  const again = await store.list(ns, { limit: 20 });
  return { listed, again };
}

it('a session deleted and created again is listed at once by the process that created it (no root before the delete)', async () => {
  const s = setup();
  const { store, ctx, drain } = s;
  for (const other of ['o1', 'o2', 'o3'])
    await store.create(ns, { id: other, task: other, metadata: { team: 'b' } }, ctx);
  await store.create(ns, { id: 's', task: 'v1', metadata: { team: 'a' } }, ctx);
  for (let i = 2; i < 6; i++) {
    const cur = await store.get(ns, 's');
    await store.replace(
      ns,
      's',
      { task: `v${i}`, messages: [], metadata: { team: 'a' } },
      cur.revision,
      ctx,
    );
  }
  await store.delete(ns, 's', ctx);
  await drain(); // the delete's purge builds the first root (rebuild) and purges, as in the failing trials
  const { listed, again } = await createThenListAcrossTheRace(s, {
    id: 's',
    task: 'again',
    metadata: { team: 'a' },
  });
  // Sanity: once everything settled the session is there (nothing is lost for good, only that answer).
  expect(again.sessions.map((x) => `${x.id}:${x.task}`)).toContain('s:again');
  expect(
    listed.sessions.map((x) => `${x.id}:${x.task}`),
    'the list right after the 201',
  ).toContain('s:again');
});

it('the same race without any delete: a plain create is missing from the next list of its own process', async () => {
  const s = setup();
  const { store, ctx, drain } = s;
  await store.create(ns, { id: 'o1', task: 'o1' }, ctx);
  await store.list(ns, { limit: 20 }); // builds the first root (rebuild), so the list below does not rebuild
  await drain();
  const { listed, again } = await createThenListAcrossTheRace(s, { id: 'n', task: 'new' });
  expect(again.sessions.map((x) => x.id)).toContain('n');
  expect(
    listed.sessions.map((x) => x.id),
    'the list right after the 201',
  ).toContain('n');
});
