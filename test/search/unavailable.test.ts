import { expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { PassThrough } from '../support/search-process.js';

/**
 * Once armed, reads of session objects fail as storage that does not answer, from the first read of the
 * index on (after the manifest's view, which may read objects too: that would fail the search anyway).
 */
class SessionsUnreadable extends PassThrough {
  armed = false;
  private failing = false;
  /** The index's objects read as garbage, so that a search scans the objects (DeepSearch). */
  indexUnreadable = false;
  override async get(key: string) {
    if (this.armed && key.includes('/x/')) this.failing = true;
    if (this.failing && key.includes('/sessions/'))
      throw new StorageUnavailableError('storage did not answer (test)');
    const found = await this.inner.get(key);
    if (found && this.indexUnreadable && key.includes('/x/'))
      return { ...found, body: new TextEncoder().encode('not an index object') };
    return found;
  }
}

// Storage that does not answer is a 503 (contract), not "nothing matches": the reads behind the results
// (snippets on the index path, every read of DeepSearch) used to drop such a session as deleted, and the
// agent got a 200 with no results.
it.each(['index', 'DeepSearch'])(
  'search answers 503 when the session objects cannot be read (%s)',
  async (path) => {
    const writer = await makeApp();
    const created = await writer.call('POST', '/v1/sessions', {
      body: {
        task: 'rotate the signing keys',
        messages: [{ role: 'user', content: 'rotate keys' }],
      },
    });
    expect(created.status).toBe(201);
    await writer.sessions.settled();
    await writer.background.drain();
    // A quiet namespace: no marker for the manifest's view to check (it would read, and cache, the object).
    await writer.sessions.retireMarkers();
    await new Promise((r) => setTimeout(r, 600));
    const objects = new SessionsUnreadable(new LocalStore(writer.dir));
    objects.indexUnreadable = path === 'DeepSearch';
    const body = { action: 'search', query: 'rotate keys' };
    const ok = await (await makeApp({ objects })).call('POST', '/v1/session_search', { body });
    expect(ok.status).toBe(200);
    expect(ok.json.results).toHaveLength(1);
    objects.armed = true;
    const fresh = await makeApp({ objects }); // nothing cached
    const res = await fresh.call('POST', '/v1/session_search', { body });
    expect(res.status, JSON.stringify(res.json)).toBe(503);
    expect(res.json.results).toBeUndefined();
  },
);
