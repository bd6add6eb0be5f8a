// Review s58e, 1: client.delete threw 404 for a delete that worked. The server deleted the session object,
// then failed erasing its audit records: 503 "session … is gone, but erasing what may be left of it failed
// …: delete it again". The client retried (it retries every 503); the retry erased the rest and answered
// 404, which the client threw, because only a *lost* answer made a later 404 "its own doing". Now the
// server's 503 says `"deleted": true` (an RFC 9457 extension member), and the client takes a 404 after it
// as the delete's success.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SatchelApiError, SatchelClient } from '../../lib/client/index.js';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';

/** A local store that refuses the next `refusals` deletes of audit records. */
class RefuseErasing extends PassThrough {
  refusals = 0;
  override async delete(k: string | string[]) {
    if (this.refusals > 0 && [k].flat().some((x) => /\/audit\//.test(x))) {
      this.refusals--;
      throw new StorageUnavailableError('refused');
    }
    return this.inner.delete(k);
  }
}

/** A client of the in-process app on real files; `answers` records each attempt's status and body. */
async function setUp(retries = 4) {
  const objects = new RefuseErasing(new LocalStore(mkdtempSync(join(tmpdir(), 's58e-delete-'))));
  const built = await makeApp({ objects });
  const answers: { status: number; body: string }[] = [];
  const client = new SatchelClient({
    url: 'http://satchel.test',
    token: TOKENS.laptop,
    retry: { retries },
    sleep: async () => undefined,
    fetch: async (input, init) => {
      const res = await built.app.fetch(new Request(input as string, init));
      answers.push({ status: res.status, body: await res.clone().text() });
      return res;
    },
  });
  const { session } = await client.create({
    task: 'to delete',
    messages: [{ role: 'user', content: 'x' }],
  });
  answers.length = 0;
  return { client, objects, answers, id: session.id };
}

describe('review s58e: a delete whose first answer is "is gone, but erasing … failed"', () => {
  it('says "deleted": true in its 503, and the retry\'s 404 resolves the delete', async () => {
    const { client, objects, answers, id } = await setUp();
    objects.refusals = 1;
    // Before the fix: SatchelApiError 404 "session … does not exist".
    await expect(client.delete(id)).resolves.toBeUndefined();
    expect(answers.map((a) => a.status)).toEqual([503, 404]);
    expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: 503, deleted: true });
    await expect(client.get(id)).rejects.toMatchObject({ status: 404 });
  });

  it('a 503 that the retries cannot get past is thrown, after an attempt that took effect', async () => {
    const { client, objects, answers, id } = await setUp(1);
    objects.refusals = 2;
    const err = await client.delete(id).catch((e: unknown) => e);
    expect(answers.map((a) => a.status)).toEqual([503, 503]);
    // The first answer says the session went; the retry found no session, and says only that erasing
    // what an earlier delete left failed (review s58g: a 503 of a call that found nothing never says
    // `deleted`). The leftovers are not all erased: not a success, but the caller can tell an earlier
    // attempt took effect.
    expect(JSON.parse(answers[0]!.body).deleted).toBe(true);
    expect(JSON.parse(answers[1]!.body).deleted).toBeUndefined();
    expect(SatchelApiError.is(err) && err.status).toBe(503);
    expect((err as SatchelApiError).afterLostAttempt).toBe(true);
    expect((err as SatchelApiError).problem.detail).toMatch(
      /erasing .* failed .*: delete it again$/,
    );
    await expect(client.delete(id)).rejects.toMatchObject({ status: 404 });
  });
});
