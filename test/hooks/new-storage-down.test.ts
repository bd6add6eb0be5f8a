// Review s50b: a `new` hook's answer waits for the delivery's claim (one GET of its marker, one create-only
// PUT) so that the 202 can name the session. When storage was unreachable the claim failed before the
// answer, and the sender was still told `202 {"accepted": true}`: GitHub records the delivery as delivered
// and never sends it again, though nothing was stored. The contract: 503 with Retry-After.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';

const SECRET = 'new-hook-secret-storage-down-01';

/** Storage that does not answer (every call fails as an unreachable backend does). */
class DownStore extends MemoryStore {
  down = false;
  private fail() {
    return Promise.reject(new StorageUnavailableError('storage unreachable (ECONNREFUSED)'));
  }
  override get(key: string) {
    return this.down ? this.fail() : super.get(key);
  }
  override put(...args: Parameters<MemoryStore['put']>) {
    return this.down ? this.fail() : super.put(...args);
  }
  override delete(...args: Parameters<MemoryStore['delete']>) {
    return this.down ? this.fail() : super.delete(...args);
  }
  override list(...args: Parameters<MemoryStore['list']>) {
    return this.down ? this.fail() : super.list(...args);
  }
}

describe('a `new` hook while storage is down', () => {
  it('is not acknowledged with 202 when its claim failed before the answer', async () => {
    const objects = new DownStore();
    const built = await makeApp({
      objects,
      env: {
        SATCHEL_HOOKS: JSON.stringify({
          ci: { secret: SECRET, namespace: 'alice', session: 'new' },
        }),
      },
    });
    objects.down = true;
    const body = JSON.stringify({ type: 'deploy.failed', service: 'api' });
    const t = Math.floor(Date.now() / 1000);
    const sig = `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
    const res = await built.call('POST', '/v1/hooks/ci', {
      token: null,
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-satchel-signature': sig,
        'x-satchel-delivery': 'deploy-42',
      },
    });
    await built.background.drain();
    expect(built.logs.find('webhook delivery failed')).toHaveLength(1); // nothing was stored
    // What the sender is told must not be "accepted".
    expect({ status: res.status, body: res.json }).toMatchObject({ status: 503 });
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
