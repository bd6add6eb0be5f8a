import type { PutOptions } from '../../lib/storage/port.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { PassThrough } from './search-process.js';

/**
 * A store whose next conditional PUT of session `id` lands, then runs `then` (what other writers do
 * meanwhile), then loses its answer (a StorageUnavailableError that may have landed).
 */
export class LoseCommit extends PassThrough {
  then: (() => Promise<void>) | undefined;
  id = 's';

  override async put(k: string, body: Uint8Array, options?: PutOptions) {
    const put = await this.inner.put(k, body, options);
    const t = k.endsWith(`/sessions/${this.id}.json`) && options?.ifMatch ? this.then : undefined;
    if (!t) return put;
    this.then = undefined;
    await t();
    throw new StorageUnavailableError('no answer', undefined, { mayHaveLanded: true });
  }
}
