import { decodeStored } from '../model/codec.js';
import { keys } from '../model/keys.js';
import type { ObjectStore } from '../storage/port.js';
import { listAll } from '../storage/prefix.js';
import { partsOf } from './cache.js';

/**
 * A large session's parts (docs/design.md, "Base, segments and delta"): the immutable objects under `b/<id>/` (its
 * bases and segments) that a delta at the session key names.
 */

/** The parts (base and segments) a stored session object names, none for a whole one; null when it does not parse. */
export function namedParts(body: Uint8Array, key: string): Set<string> | null {
  try {
    return partsOf(decodeStored(body, key));
  } catch {
    return null;
  }
}

/** The time (ms, from the writer's clock) in a part's key. */
export function partTime(ns: string, id: string, key: string): number {
  const prefix = keys.parts(ns, id);
  return Number(key.slice(prefix.length, prefix.length + 13));
}

/**
 * Deletes the session's parts that `doomed` picks, sparing the ones its object names when this runs (read
 * after the listing: another writer may have committed on any listed part meanwhile). Nothing is deleted
 * when that object does not parse.
 */
export async function deleteParts(
  objects: ObjectStore,
  ns: string,
  id: string,
  doomed: (key: string) => boolean = () => true,
): Promise<void> {
  const listed = (await listAll(objects, keys.parts(ns, id))).filter(doomed);
  if (!listed.length) return;
  const key = keys.session(ns, id);
  const found = await objects.get(key);
  const named = found ? namedParts(found.body, key) : new Set<string>();
  if (named === null) return;
  const gone = listed.filter((k) => !named.has(k));
  if (gone.length) await objects.delete(gone);
}
