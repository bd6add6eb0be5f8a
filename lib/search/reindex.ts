import type { SearchEngine } from './engine.js';

/**
 * Rebuilds a namespace's indexes from the session objects alone (`npm run reindex`, corruption): the
 * manifest, the lexical index and, with an embedder, the vector index. Out of the engine, since only the
 * Node scripts call it (the Worker bundle leaves it out).
 */
export async function reindex(engine: SearchEngine, ns: string): Promise<{ sessions: number }> {
  const { manifest } = engine.sessions;
  await manifest.rebuild(ns);
  await engine.lexical.compact(ns, true);
  const vectors = engine.embedder?.available() && (await engine.vectors(ns));
  if (vectors) await vectors.compact(ns, true);
  return { sessions: (await manifest.view(ns)).entries.length };
}
