// Before 2026-12-05 a DELETE whose manifest log record could not be stored still answered 204 (the object
// was gone), but the purges that erase the session's copies read the settled manifest view, which leaves a
// write without a log record to its pending marker for 15 minutes: they found no delete and erased nothing,
// so the task and text stayed in manifest pages and index segments. Now such a delete's manifest purge
// finds the object missing and writes the tombstone itself, and the indexes purge after it.
import { describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { StorageUnavailableError, type PutOptions } from '../../lib/storage/port.js';
import { LocalStore } from '../../lib/storage/local.js';
import { holders } from '../support/holders.js';
import { tempDir, word } from './unlogged-common.js';

class RefusesLogs extends LocalStore {
  refuse = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.refuse && key.includes('/m/l/'))
      throw new StorageUnavailableError(`put ${key}: refused`);
    return super.put(key, body, options);
  }
}

describe('a delete whose log record is refused (review s51b)', () => {
  it('still erases the task from pages and segments', async () => {
    const dir = tempDir('refl');
    const objects = new RefusesLogs(dir);
    const app = await makeApp({ objects });
    const w = word();
    const made = await app.call('POST', '/v1/sessions', {
      body: { task: `task ${w}`, messages: [{ role: 'user', content: `about ${w}` }] },
    });
    await app.call('POST', '/v1/sessions', { body: { task: 'other' } });
    await app.background.drain();
    await app.search.lexical.compact('alice', true);
    await app.sessions.manifest.compact('alice', true);
    await app.background.drain();
    objects.refuse = true;
    const del = await app.call('DELETE', `/v1/sessions/${made.json.id}`);
    expect(del.status).toBe(204);
    await app.background.drain();
    objects.refuse = false;
    await app.background.drain();
    // The list hides it (it checks the object), but the purge and the index's view (settled) still
    // count it live: its pages and segments are not rewritten.
    expect((await app.call('GET', '/v1/sessions')).json.sessions).toHaveLength(1);
    expect(holders(dir, [w])).toEqual([]);
    const view = await app.sessions.manifest.view('alice', undefined, { settled: true });
    expect(view.entries.map((e) => e.id)).not.toContain(made.json.id);
  });
});
