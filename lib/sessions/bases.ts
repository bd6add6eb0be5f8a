import { decodeStored } from '../model/codec.js';
import { keys } from '../model/keys.js';
import type { ObjectStore } from '../storage/port.js';
import { listAll } from '../storage/prefix.js';

/**
 * A large session's bases (docs/design.md, "Base and delta"): the immutable objects under `b/<id>/` that
 * a delta at the session key names.
 */

/** The base a stored session object names: undefined for a whole one, null when it does not parse. */
export function namedBase(body: Uint8Array, key: string): string | undefined | null {
  try {
    return decodeStored(body, key).base?.key;
  } catch {
    return null;
  }
}

/** The time (ms, from the writer's clock) in a base's key. */
export function baseTime(ns: string, id: string, key: string): number {
  const prefix = keys.bases(ns, id);
  return Number(key.slice(prefix.length, prefix.length + 13));
}

/**
 * Deletes the session's bases that `doomed` picks, sparing the one its object names when this runs (read
 * after the listing: another writer may have committed on any listed base meanwhile). Nothing is deleted
 * when that object does not parse.
 */
export async function deleteBases(
  objects: ObjectStore,
  ns: string,
  id: string,
  doomed: (key: string) => boolean = () => true,
): Promise<void> {
  const listed = (await listAll(objects, keys.bases(ns, id))).filter(doomed);
  if (!listed.length) return;
  const key = keys.session(ns, id);
  const found = await objects.get(key);
  const named = found ? namedBase(found.body, key) : undefined;
  if (named === null) return;
  const gone = listed.filter((k) => k !== named);
  if (gone.length) await objects.delete(gone);
}
