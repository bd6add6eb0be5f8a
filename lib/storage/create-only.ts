import { PreconditionFailedError, type ObjectStore, type PutOptions } from './port.js';

/**
 * Writes an object under a key only this writer uses (a write id or random part in the key), create-only.
 * A precondition failure can then only mean an earlier attempt of this very call landed and its answer
 * was lost (the adapter retried): the object is ours, so that is success, not an error.
 */
export async function putOwn(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  options: Omit<PutOptions, 'ifMatch' | 'ifNoneMatch'> = {},
): Promise<void> {
  try {
    await store.put(key, body, { ...options, ifNoneMatch: '*' });
  } catch (err) {
    if (!PreconditionFailedError.is(err)) throw err;
  }
}
