// Review s66c, finding 1: a folder where a key's file should be (one Satchel never made: a copied or restored
// data folder, a tool or a script). The local store's reads took it for no object, but a create-only put took
// it for the current object: a session create answered 409 "already exists" while GET, append and DELETE
// answered 404, so the id could never be used or freed. An unconditional put met rename's EISDIR (a 500),
// and a delete unlink's EISDIR (a 500). Now every put answers 503 naming EISDIR (nothing can be stored
// there, as a key under a file answers ENOTDIR), and reads and deletes stay what they are on S3 for a
// "folder" (the conformance suite's head of a prefix): no object, nothing to delete.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, utf8 } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';

/** A store with two foreign folders at keys: `ghost.json` empty, `ghost2.json` holding a file. */
function storeWithFolders() {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s66c-'));
  mkdirSync(join(dir, 'k', 'ghost.json'), { recursive: true });
  mkdirSync(join(dir, 'k', 'ghost2.json'));
  writeFileSync(join(dir, 'k', 'ghost2.json', 'x.json'), '{}');
  return { dir, store: new LocalStore(dir) };
}

/** The put's failure: a StorageUnavailableError naming EISDIR and not the folder's path. */
async function refusal(put: Promise<unknown>, dir: string): Promise<string> {
  const err = await put.then(
    () => new Error('the put succeeded'),
    (e: unknown) => e,
  );
  expect(StorageUnavailableError.is(err), String(err)).toBe(true);
  const message = (err as Error).message;
  expect(message).toMatch(/\(EISDIR\)$/);
  expect(message).not.toContain(dir);
  return message;
}

describe('local store: a folder at a key (review s66c)', () => {
  for (const key of ['k/ghost.json', 'k/ghost2.json']) {
    it(`every put of ${key} answers 503 naming EISDIR, create-only, If-Match or unconditional`, async () => {
      const { dir, store } = storeWithFolders();
      await refusal(store.put(key, utf8('{}'), { ifNoneMatch: '*' }), dir);
      await refusal(store.put(key, utf8('{}'), { ifMatch: 'some-etag' }), dir);
      await refusal(store.put(key, utf8('{}')), dir);
      // Reads agree with the puts' "nothing is there", as S3 does for a prefix.
      expect(await store.get(key)).toBeNull();
      expect(await store.head!(key)).toBeNull();
      // Nothing to delete, as on S3; the folder Satchel did not make is left alone.
      await store.delete(key);
      expect(existsSync(join(dir, ...key.split('/')))).toBe(true);
      // No temp file left beside the key (a listing would not show one), and the folders' file still listed.
      expect(readdirSync(join(dir, 'k')).sort()).toEqual(['ghost.json', 'ghost2.json']);
      expect((await store.list('k/')).objects.map((o) => o.key)).toEqual(['k/ghost2.json/x.json']);
    });
  }

  it('a session create on such an id answers 503 naming EISDIR, not 409; the id reads as free', async () => {
    const app = await makeApp();
    mkdirSync(join(app.dir, 'ns', 'alice', 'sessions', 'ghost.json'), { recursive: true });
    const create = await app.call('POST', '/v1/sessions', { body: { task: 'mine', id: 'ghost' } });
    expect(create.status).toBe(503);
    expect(create.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(create.json)).not.toContain(app.dir);
    await settleAll(app);
    const logged = app.logs.find('storage unavailable', 'error');
    expect(logged.length).toBeGreaterThan(0);
    for (const l of logged) expect(JSON.stringify(l)).toContain('EISDIR');
    expect(app.logs.find('unhandled error', 'error')).toEqual([]);
    expect((await app.call('GET', '/v1/sessions/ghost')).status).toBe(404);
    expect((await app.call('DELETE', '/v1/sessions/ghost')).status).toBe(404);
    // The folder works: other ids are created, and health is ok.
    expect((await app.call('POST', '/v1/sessions', { body: { task: 'other' } })).status).toBe(201);
    expect((await app.call('GET', '/v1/health', { token: null })).json.status).toBe('ok');
  });
});
