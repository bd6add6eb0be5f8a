// One "process" of the search tests: a session store and its search engine over shared storage, with its
// own background work (test/search/index.test.ts and the sliced-compaction tests of review s60b).
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { LocalEmbedder, type Embedder } from '../../lib/search/embed.js';
import { SearchEngine, type SearchOptions } from '../../lib/search/engine.js';
import {
  SessionStore,
  type SessionStoreOptions,
  type WriteContext,
} from '../../lib/sessions/store.js';
import type { ObjectStore } from '../../lib/storage/port.js';

/**
 * A store and its engine over `objects`. `store`: the session cap in bytes, or the store's options.
 * `drain` waits for the background work; `drainAll` also stores the index records still lingering.
 */
export function searchDevice(
  objects: ObjectStore,
  options: SearchOptions = {},
  embedder: Embedder | null = new LocalEmbedder(),
  store: number | SessionStoreOptions = 1 << 20,
) {
  const sessions = new SessionStore(
    objects,
    typeof store === 'number' ? { pipeline: defaultPipeline({ maxSessionBytes: store }) } : store,
  );
  // Tests look across "processes" at once; the 1 s freshness window has its own test.
  const engine = new SearchEngine(sessions, embedder, { freshnessMs: 0, ...options });
  sessions.addListener(engine);
  const running = new Set<Promise<unknown>>();
  const schedule = (w: Promise<unknown>) => {
    const p = w.catch(() => undefined);
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const ctx: WriteContext = { schedule };
  const drain = async () => {
    while (running.size) await Promise.all([...running]);
  };
  const drainAll = async () => {
    await drain();
    await engine.flushRecords();
    await drain();
  };
  const search = (ns: string, q: string, limit = 10) => engine.search(ns, q, limit, { schedule });
  return { sessions, engine, ctx, drain, drainAll, search, schedule };
}
