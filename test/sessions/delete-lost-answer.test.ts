// Before 2026-12-05 a DELETE whose object DELETE landed but whose answer was lost, and whose read again
// failed too, answered 503 (true: it could not tell), but nothing erased the session's copies afterwards:
// the client's retry found no object and answered 404 without running the search indexes' purge or the
// manifest's, and a cleanup's retry no longer listed the session. Its task and text stayed in index
// segments and manifest pages. Now the delete reads the object again in the background and, once it is
// gone, erases them; a DELETE that finds no object for an id the manifest still lists erases them too; and
// a cleanup names such sessions ("may have been deleted: delete each again").
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { StorageUnavailableError, type ListOptions } from '../../lib/storage/port.js';
import { LocalStore } from '../../lib/storage/local.js';
import { holders } from '../support/holders.js';
import { tempDir, word } from './unlogged-common.js';

class LosesDeleteAnswer extends LocalStore {
  armed = false;
  /** How many reads of the session object fail after the lost answer. */
  failGetsAfter = 1;
  failGets = 0;
  /** How many listings of audit records fail. */
  failAuditLists = 0;
  override async delete(keys: string | string[]) {
    const k = typeof keys === 'string' ? keys : undefined;
    await super.delete(keys);
    if (this.armed && k?.includes('/sessions/')) {
      this.armed = false;
      this.failGets = this.failGetsAfter;
      throw new StorageUnavailableError(`delete ${k}: no answer`, undefined, {
        mayHaveLanded: true,
      });
    }
  }
  override async get(key: string) {
    if (this.failGets > 0 && key.includes('/sessions/')) {
      this.failGets--;
      throw new StorageUnavailableError(`get ${key}: no answer`);
    }
    return super.get(key);
  }
  override async list(prefix: string, options?: ListOptions) {
    if (this.failAuditLists > 0 && prefix.includes('/audit/')) {
      this.failAuditLists--;
      throw new StorageUnavailableError(`list ${prefix}: no answer`);
    }
    return super.list(prefix, options);
  }
}

/** A session whose text is in index segments and manifest pages too, on a store that loses a delete's answer. */
async function seeded(label: string) {
  const dir = tempDir(label);
  const objects = new LosesDeleteAnswer(dir);
  const app = await makeApp({ objects });
  const secretWord = word();
  const made = await app.call('POST', '/v1/sessions', {
    body: {
      task: `task ${secretWord}`,
      messages: [{ role: 'user', content: `about ${secretWord}` }],
    },
  });
  expect(made.status).toBe(201);
  await app.background.drain();
  await app.search.lexical.compact('alice', true);
  await app.sessions.manifest.compact('alice', true);
  await app.background.drain();
  expect(holders(dir, [secretWord]).length).toBeGreaterThan(1);
  return { dir, objects, app, secretWord, id: made.json.id as string };
}

describe('a DELETE whose storage answer was lost (review s51b)', () => {
  it('the retry (404) still erases the task and text from the index and the manifest', async () => {
    const { dir, objects, app, secretWord, id } = await seeded('lostdel');
    objects.armed = true;
    const first = await app.call('DELETE', `/v1/sessions/${id}`);
    expect(first.status).toBe(503); // storage did not answer: the client retries
    await app.background.drain();
    const retry = await app.call('DELETE', `/v1/sessions/${id}`);
    expect([204, 404]).toContain(retry.status);
    await app.background.drain();
    expect((await app.call('GET', `/v1/sessions/${id}`)).status).toBe(404);
    // Deleted means gone: nothing in the bucket holds its text once the retry answered and drained.
    expect(holders(dir, [secretWord])).toEqual([]);
  });

  it('cleanup: it names the session, and its text leaves the index and the manifest', async () => {
    const { dir, objects, app, secretWord, id } = await seeded('lostclean');
    objects.armed = true;
    const first = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 0 } });
    expect(first.status).toBe(503);
    expect(first.json.detail).toContain(`may have been deleted`);
    expect(first.json.detail).toContain(id);
    await app.background.drain();
    const retry = await app.call('POST', '/v1/sessions/cleanup', { body: { older_than_days: 0 } });
    expect(retry.status).toBe(200);
    await app.background.drain();
    expect(holders(dir, [secretWord])).toEqual([]);
  });

  it('a retry that finds no object still starts the purges when erasing the parts fails (review s56e)', async () => {
    const { dir, objects, app, secretWord, id } = await seeded('lostgone');
    // The object goes, its answer is lost, and every read of it fails until the background gave up.
    objects.failGetsAfter = 4;
    objects.armed = true;
    expect((await app.call('DELETE', `/v1/sessions/${id}`)).status).toBe(503);
    await app.background.drain();
    expect(objects.failGets).toBe(0);
    expect(holders(dir, [secretWord]).length).toBeGreaterThan(0); // nothing erased it yet
    // The retry finds no object, and its listing of the audit records fails: 503 again, true.
    objects.failAuditLists = 1;
    const retry = await app.call('DELETE', `/v1/sessions/${id}`);
    expect(retry.status).toBe(503);
    await app.background.drain();
    // Before the fix nothing was erased until a retry the client might never make.
    expect(holders(dir, [secretWord])).toEqual([]);
  });
});
