import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import { SearchEngine } from '../../lib/search/engine.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { listAll } from '../../lib/storage/prefix.js';
import { StorageUnavailableError, text, type PutOptions } from '../../lib/storage/port.js';

/** A memory store that counts the manifest and index roots written. */
class RootCounting extends MemoryStore {
  roots = 0;
  /** While set, every root PUT fails as storage that does not answer. */
  refuseRoots = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (/\/(m|x)\/r\//.test(key)) {
      if (this.refuseRoots) throw new StorageUnavailableError(`put ${key}: refused`);
      this.roots++;
    }
    return super.put(key, body, options);
  }
}

function setup() {
  const objects = new RootCounting();
  const sessions = new SessionStore(objects);
  const search = new SearchEngine(sessions, null, { lsm: { compactAfter: 1_000 } });
  sessions.addListener(search);
  const work: Promise<unknown>[] = [];
  const ctx = { schedule: (w: Promise<unknown>) => void work.push(w) };
  const drain = async () => {
    while (work.length > 0) await Promise.all(work.splice(0));
  };
  return { objects, sessions, search, ctx, drain };
}

async function holding(objects: MemoryStore, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await listAll(objects, ''))
    if (text((await objects.get(key))!.body).includes(needle)) out.push(key);
  return out;
}

describe('purging deleted sessions', () => {
  it('a cleanup of 40 sessions shares its purges: a few roots, not one rewrite per session', async () => {
    const { objects, sessions, search, ctx, drain } = setup();
    for (let i = 0; i < 50; i++)
      await sessions.create('ns', { task: `purgeable task ${i < 40 ? 'old' : 'new'} ${i}` }, ctx);
    await search.search('ns', 'purgeable task', 5, ctx);
    await drain();
    await sessions.manifest.compact('ns', true);
    await search.lexical.compact('ns');
    await drain();
    const ids = (await sessions.manifest.view('ns')).entries
      .filter((e) => e.task.includes(' old '))
      .map((e) => e.id);
    expect(ids).toHaveLength(40);
    objects.roots = 0;
    await Promise.all(ids.map((id) => sessions.delete('ns', id, ctx)));
    await drain();
    expect(objects.roots).toBeLessThanOrEqual(6); // manifest and index: at most a few purges each
    expect(await holding(objects, ' old ')).toEqual([]);
    expect((await sessions.manifest.view('ns')).entries).toHaveLength(10);
    expect((await search.search('ns', 'purgeable task new', 20, ctx)).length).toBeGreaterThan(0);
  });

  it("a purge deletes log records it cannot read (they may be an erased version's), and the list still works", async () => {
    const { objects, sessions, ctx, drain } = setup();
    const gone = await sessions.create('ns', { task: 'to be erased' }, ctx);
    const kept = await sessions.create('ns', { task: 'to be kept' }, ctx);
    await drain();
    const logs = await listAll(objects, 'ns/ns/m/l/');
    const erased = (
      await Promise.all(logs.map(async (k) => [k, text((await objects.get(k))!.body)] as const))
    ).find(([, body]) => body.includes(gone.session.id))![0];
    await sessions.manifest.compact('ns', true); // its root covers both records and collects them
    // A covered record that is still there (its collection failed, or it landed again) and unreadable.
    await objects.put(erased, new TextEncoder().encode('garbage{'));
    await sessions.delete('ns', gone.session.id, ctx);
    await drain();
    expect(await listAll(objects, 'ns/ns/m/l/')).not.toContain(erased);
    expect((await sessions.manifest.view('ns')).entries.map((e) => e.id)).toEqual([
      kept.session.id,
    ]);
  });

  it("a purge that failed is run again with the namespace's next one (manifest and index)", async () => {
    // Before: its ids were dropped, and the deleted task stayed in pages and segments until a major
    // compaction.
    const { objects, sessions, search, ctx, drain } = setup();
    const first = await sessions.create('ns', { task: 'first doomed zqvrtask' }, ctx);
    const second = await sessions.create('ns', { task: 'second doomed task' }, ctx);
    await sessions.create('ns', { task: 'kept task' }, ctx);
    await search.search('ns', 'doomed task', 5, ctx);
    await drain();
    await sessions.manifest.compact('ns', true);
    await search.lexical.compact('ns');
    await drain();
    expect((await holding(objects, 'zqvrtask')).length).toBeGreaterThan(0);
    objects.refuseRoots = true;
    await sessions.delete('ns', first.session.id, ctx);
    await drain();
    expect(await holding(objects, 'zqvrtask')).not.toEqual([]); // both purges failed
    objects.refuseRoots = false;
    await sessions.delete('ns', second.session.id, ctx);
    await drain();
    expect(await holding(objects, 'zqvrtask')).toEqual([]);
    expect((await sessions.manifest.view('ns')).entries.map((e) => e.task)).toEqual(['kept task']);
  });

  it('the delete record names only the id', async () => {
    const { objects, sessions, ctx } = setup();
    const { session } = await sessions.create('ns', { task: 'a task to forget' }, ctx);
    // Keep the log record: a purge would erase it together with the rest.
    (sessions.manifest as { purge: unknown }).purge = async () => undefined;
    await sessions.delete('ns', session.id, ctx);
    const logs = await listAll(objects, 'ns/ns/m/l/');
    const bodies = await Promise.all(logs.map(async (k) => text((await objects.get(k))!.body)));
    const del = bodies.map((b) => JSON.parse(b)).find((r) => r.op === 'del');
    expect(Object.keys(del).sort()).toEqual(['at', 'id', 'op', 'v']);
  });
});
