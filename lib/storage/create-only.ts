import {
  PreconditionFailedError,
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from './port.js';

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

/** True when a failed write may still have happened (its answer was lost, or the adapter cannot tell). */
export function mayHaveLanded(err: unknown): boolean {
  if (PreconditionFailedError.is(err)) return err.afterLostAnswer;
  return StorageUnavailableError.is(err) && err.mayHaveLanded;
}

/**
 * A conditional PUT of an object that names its writer (a lease's owner): true when it landed, false when
 * its condition failed. When its answer was lost it may have landed (a retry then meets it as a 412): the
 * object is read back, and it landed when `ours` finds this writer named in what is there.
 */
export async function putNamed(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  options: PutOptions,
  ours: (stored: Uint8Array) => boolean,
): Promise<boolean> {
  try {
    await store.put(key, body, options);
    return true;
  } catch (err) {
    if (!mayHaveLanded(err)) {
      if (PreconditionFailedError.is(err)) return false;
      throw err;
    }
    const read = await store.get(key);
    return read !== null && ours(read.body);
  }
}
