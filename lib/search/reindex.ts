import type { SearchEngine } from './engine.js';

/** What a reindex did to a namespace's vectors: none (no embedder), rebuilt, or left lagging. */
export type VectorsReindexed = 'none' | 'rebuilt' | 'lagging';

/**
 * Rebuilds a namespace's indexes from the session objects alone (`npm run reindex`, corruption): the
 * manifest, the lexical index and, with an embedder, the vector index; the rebuilds also erase the index
 * records of sessions that are gone (a delete whose purge never ran). Out of the engine, since only the
 * Node scripts call it (the Worker bundle leaves it out). An embeddings service that fails does not stop
 * it: the vector index is rebuilt with what could be embedded (the rest lags: a search's compaction
 * builds it), and `vectors` says `lagging`, with the failure in `vectorsError`.
 */
export async function reindex(
  engine: SearchEngine,
  ns: string,
): Promise<{ sessions: number; vectors: VectorsReindexed; vectorsError?: unknown }> {
  const { manifest } = engine.sessions;
  await manifest.rebuild(ns);
  await engine.lexical.compact(ns, true);
  const sessions = (await manifest.view(ns)).entries.length;
  const { embedder } = engine;
  if (!embedder) return { sessions, vectors: 'none' };
  try {
    // While the service fails, the space the vectors are stored in is rebuilt: none of the old stays.
    const index =
      (embedder.available() ? await engine.vectors(ns).catch(() => null) : null) ??
      (await engine.storedVectors(ns));
    if (index) await index.compact(ns, true);
    return { sessions, vectors: index && embedder.available() ? 'rebuilt' : 'lagging' };
  } catch (err) {
    return { sessions, vectors: 'lagging', vectorsError: err };
  }
}
