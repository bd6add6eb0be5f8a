// Review s58b, finding 1 (fixed 2026-12-06; both tests failed on the code before the fix). Every DELETE
// purges the manifest: a new root, and at once every older root, unreferenced page and erased log record
// deleted. A reader on another device that found what it had listed gone (ManifestMoved) listed again at
// once 5 times, then rebuilt the manifest from the session objects (a LIST of sessions/ and a GET of each:
// a scan of the namespace on the hot path, and a rewrite of every page), rebuilt again, and then threw the
// internal error, which GET /v1/sessions answered 500. Now it lists again after a short jittered wait, never
// rebuilds for that, and answers 503 with Retry-After when the manifest keeps changing under it.
// A root that names an object that is not there (a broken manifest, not a race) still heals by a rebuild.
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';
import { keys } from '../../lib/model/keys.js';
import { listAll } from '../../lib/storage/prefix.js';

/** The reader's view of the folder: before each of its first `purges` root GETs, `before` runs. */
class Purged extends PassThrough {
  purges = 0;
  before?: () => Promise<void>;
  /** LISTs of the session objects (a rebuild's scan). */
  scans = 0;
  override async get(key: string) {
    if (this.before && this.purges > 0 && key.includes('/m/r/')) {
      this.purges--;
      await this.before();
    }
    return super.get(key);
  }
  override list(prefix: string, options?: Parameters<PassThrough['list']>[1]) {
    if (prefix.includes('/sessions/')) this.scans++;
    return super.list(prefix, options);
  }
}

async function setup(label: string, count: number) {
  const shared = tempLocalStore(label);
  const writer = await makeApp({ objects: shared });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const made = await writer.call('POST', '/v1/sessions', { body: { task: `task ${i}` } });
    expect(made.status).toBe(201);
    ids.push(made.json.id as string);
  }
  await settleAll(writer);
  await writer.sessions.manifest.compact('alice', true); // a root, as a namespace in use has
  await settleAll(writer);
  const watched = new Purged(shared);
  const reader = await makeApp({ objects: watched }); // a fresh process: no root cached
  // Each time the reader is about to read the newest root it listed, the writer deletes a session: its
  // purge replaces that root and deletes it first.
  const deleted: string[] = [];
  watched.before = async () => {
    const id = ids[deleted.length]!;
    deleted.push(id);
    expect((await writer.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    await settleAll(writer);
  };
  return { shared, writer, reader, watched, ids, deleted };
}

describe('GET /v1/sessions while another device deletes (review s58b)', () => {
  it('lists again until it reads a root in force: 200, the truth, no scan of the session objects', async () => {
    const { reader, watched, ids, deleted } = await setup('s58b-list-purging', 12);
    watched.purges = 8; // more than the 5 quick retries and 2 rebuilds the code before the fix allowed
    const res = await reader.call('GET', '/v1/sessions?limit=20');
    expect(res.status).toBe(200);
    expect(deleted.length).toBe(8);
    // Its last LIST came after the last delete: it lists exactly the sessions left.
    const listed = res.json.sessions.map((s: { id: string }) => s.id);
    expect(listed.sort()).toEqual(ids.filter((id) => !deleted.includes(id)).sort());
    expect(watched.scans).toBe(0);
  }, 60_000);

  it('answers 503 with Retry-After, not 500, when the manifest keeps changing under it', async () => {
    const { reader, watched } = await setup('s58b-list-moving', 20);
    watched.purges = 20;
    const res = await reader.call('GET', '/v1/sessions?limit=20');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(res.json.detail).toMatch(/kept changing/);
    expect(watched.scans).toBe(0);
    watched.purges = 0;
    expect((await reader.call('GET', '/v1/sessions?limit=20')).status).toBe(200);
  }, 60_000);

  it('still rebuilds when the newest root names a page that is not there (a broken manifest)', async () => {
    const shared = tempLocalStore('s58b-broken-root');
    const writer = await makeApp({ objects: shared });
    for (let i = 0; i < 3; i++)
      expect(
        (await writer.call('POST', '/v1/sessions', { body: { task: `task ${i}` } })).status,
      ).toBe(201);
    await settleAll(writer);
    await writer.sessions.manifest.compact('alice', true);
    await settleAll(writer);
    const pages = await listAll(shared, `${keys.manifest('alice')}g/`);
    expect(pages.length).toBeGreaterThan(0);
    await shared.delete(pages); // by hand: the root in force names pages that are gone for good
    const watched = new Purged(shared);
    const reader = await makeApp({ objects: watched });
    const res = await reader.call('GET', '/v1/sessions?limit=20');
    expect(res.status).toBe(200);
    expect(res.json.sessions.map((s: { task: string }) => s.task).sort()).toEqual([
      'task 0',
      'task 1',
      'task 2',
    ]);
    expect(watched.scans).toBe(1); // the rebuild's
  }, 60_000);
});
