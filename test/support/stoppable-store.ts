import type { ObjectStore, PutOptions } from '../../lib/storage/port.js';

/**
 * The bucket as one process sees it: once `stopped`, the PUTs of keys `held` picks never land (the process
 * died after sending them), while everything it sent before has.
 */
export class Stoppable implements ObjectStore {
  readonly name = 'stoppable';
  stopped = false;
  constructor(
    private readonly inner: ObjectStore,
    private readonly held: (key: string) => boolean,
  ) {}
  get(key: string) {
    return this.inner.get(key);
  }
  put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.stopped && this.held(key)) return new Promise<never>(() => undefined);
    return this.inner.put(key, body, options);
  }
  delete(k: string | string[]) {
    return this.inner.delete(k);
  }
  list(prefix: string, options?: { cursor?: string; limit?: number }) {
    return this.inner.list(prefix, options);
  }
}
