// Review s58f, finding 2 (a regression of 526c215, fixed the same day). snapshot() fetches the root's
// newest page at once, beside its other reads; it swallowed any failure of that fetch and cached nothing,
// so top() GETs the same page again. When storage answers that GET only after the
// adapter's whole retry budget (the S3 adapter: 4 attempts within 8 s, then StorageUnavailableError), a
// list now waits that budget twice, one after the other, before its 503 (about 16 s instead of 8 s; the
// design's "an HTTP answer (503) comes within 10 s", retry.ts defaultRetryPolicy).
import { describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { keys } from '../../lib/model/keys.js';

/** Page GETs take `ms` and then fail as the adapter fails after its retries; counts them. */
class SlowPages extends PassThrough {
  failing = false;
  pageGets = 0;
  ms = 400;
  override async get(key: string) {
    if (this.failing && key.startsWith(`${keys.manifest('alice')}g/`)) {
      this.pageGets++;
      await new Promise((r) => setTimeout(r, this.ms));
      throw new StorageUnavailableError(`GET ${key} failed after 4 attempts in ${this.ms} ms`);
    }
    return super.get(key);
  }
}

describe('a list whose page GET runs out of retries (review s58f)', () => {
  it('pays the storage wait once, not twice', async () => {
    const shared = tempLocalStore('s58f-early-page');
    const writer = await makeApp({ objects: shared });
    for (let i = 0; i < 3; i++)
      expect((await writer.call('POST', '/v1/sessions', { body: { task: `t${i}` } })).status).toBe(
        201,
      );
    await settleAll(writer);
    await writer.sessions.manifest.compact('alice', true);
    await settleAll(writer);
    const slow = new SlowPages(shared);
    const reader = await makeApp({ objects: slow }); // cold: no page cached
    slow.failing = true;
    const res = await reader.call('GET', '/v1/sessions?limit=20');
    expect(res.status).toBe(503);
    // One storage wait: the page asked for once (the adapter already retried inside that one call).
    expect(slow.pageGets).toBe(1);
  }, 60_000);
});
