import type { ObjectStore } from './port.js';

/** Every key under a prefix, following cursors. */
export async function listAll(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor ? { cursor } : {});
    for (const o of page.objects) out.push(o.key);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** Deletes every key under a prefix (adapters batch large deletes themselves). */
export async function deletePrefix(store: ObjectStore, prefix: string): Promise<void> {
  const all = await listAll(store, prefix);
  if (all.length > 0) await store.delete(all);
}

/** Whether an object exists: the store's `head` (a HEAD), else a listing of its key (`listedExists`). */
export async function objectExists(store: ObjectStore, key: string): Promise<boolean> {
  return store.head ? (await store.head(key)) !== null : listedExists(store, key);
}

/**
 * Whether an object exists at exactly `key`, by a LIST of the key (every backend serves it; the key itself
 * sorts first among the keys it prefixes).
 */
export async function listedExists(store: ObjectStore, key: string): Promise<boolean> {
  const listed = await store.list(key, { limit: 1 });
  return listed.objects.some((o) => o.key === key);
}
