// Review s58g (a regression of feed648, fixed the same day: goneAlready answers a 503 without `deleted`). the client takes a 404 after a 503 whose problem says "deleted": true as the delete's own
// doing, and resolves. But the server also answers that 503 for an id that never held a session:
// SessionStore.goneAlready (lib/sessions/store.ts) throws notErased (deleted: true, "session X is gone,
// but erasing ... failed") whenever its sweep of the id's leftovers fails, found or not. A storage blip on
// that LIST makes client.delete('typo-id') resolve: a delete that did not happen (the contract: 404).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, type ListOptions } from '../../lib/storage/port.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';

/** A local store whose next `refusals` LISTs under the id `never-there` fail. */
class RefuseListing extends PassThrough {
  refusals = 0;
  override async list(prefix: string, options?: ListOptions) {
    if (this.refusals > 0 && prefix.includes('never-there')) {
      this.refusals--;
      throw new StorageUnavailableError('refused');
    }
    return this.inner.list(prefix, options);
  }
}

describe('client.delete of an id that never held a session', () => {
  it('is a 404 even when the first attempt met a storage blip', async () => {
    const objects = new RefuseListing(new LocalStore(mkdtempSync(join(tmpdir(), 's58g-delete-'))));
    const built = await makeApp({ objects });
    const answers: { status: number; body: string }[] = [];
    const client = new SatchelClient({
      url: 'http://satchel.test',
      token: TOKENS.laptop,
      retry: { retries: 4 },
      sleep: async () => undefined,
      fetch: async (input, init) => {
        const res = await built.app.fetch(new Request(input as string, init));
        answers.push({ status: res.status, body: await res.clone().text() });
        return res;
      },
    });
    objects.refusals = 1;
    const outcome = await client.delete('never-there').then(
      () => 'resolved',
      (e: { status?: number }) => e.status,
    );
    expect({ outcome, answers: answers.map((a) => a.status), first: answers[0]?.body }).toEqual({
      outcome: 404,
      answers: expect.anything(),
      first: expect.anything(),
    });
  });
});
