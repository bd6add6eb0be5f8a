// A namespace whose manifest has no root yet, read first on Workers after more than about 490 sessions
// (sessions copied into the bucket, a manifest deleted, a namespace filled from a Node server that never
// listed): the rebuild read every session object in one request, past Cloudflare's 1,000 operations, so
// every list answered 503 for good (left at stop 60, review s60b). A Worker now reads the sessions a slice
// per request (lib/sessions/manifest.ts, rebuildSliced), answering 503 with Retry-After until it is done.
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { LocalStore } from '../../lib/storage/local.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { copiedId, copiedIn } from '../support/copied-sessions.js';
import { LIMIT, limitedWorker, type Invocation } from '../support/worker-limit.js';
import { tempDir } from '../sessions/unlogged-common.js';

const n = 1100;
const idOf = copiedId;

/** Lists until a 200, each call under the limit; every 503 says the list is being built or caught up. */
async function listUntilOk(call: ReturnType<typeof limitedWorker>['call'], isolate: () => void) {
  const statuses: number[] = [];
  for (let k = 0; k < 12; k++) {
    isolate();
    const r: Invocation = await call('GET', '/v1/sessions?limit=5');
    statuses.push(r.status);
    expect(r.used, `call ${k}: ${JSON.stringify(r.json)}`).toBeLessThanOrEqual(LIMIT);
    if (r.status === 200) return { ok: r, statuses };
    expect(r.status, JSON.stringify(r.json)).toBe(503);
    expect(r.retryAfter).toBe('1');
    expect(String(r.json.detail)).toMatch(/being built|catching up/);
  }
  throw new Error(`no 200 in 12 calls: ${statuses.join(',')}`);
}

/** Every session listed, by a cursor walk (each page its own call in a new isolate, under the limit). */
async function walkAll(call: ReturnType<typeof limitedWorker>['call'], isolate: () => void) {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    isolate();
    const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await call('GET', `/v1/sessions?limit=100${q}`);
    expect(page.status, JSON.stringify(page.json)).toBe(200);
    expect(page.used).toBeLessThanOrEqual(LIMIT);
    seen.push(...(page.json.sessions as { id: string }[]).map((s) => s.id));
    cursor = (page.json.next_cursor as string | null) ?? undefined;
  } while (cursor);
  return seen;
}

describe('a Worker lists a namespace with no manifest root and 1,100 sessions', () => {
  it('answers 200 within a few calls, each under 1,000 operations, with every session once', async () => {
    const store = new LocalStore(tempDir('sliced-rebuild'));
    await copiedIn(store, n);
    const { call, isolate } = limitedWorker(store);
    const { ok, statuses } = await listUntilOk(call, isolate);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(3); // 300 sessions a call
    expect((ok.json.sessions as { id: string }[]).map((s) => s.id)).toEqual(
      [1099, 1098, 1097, 1096, 1095].map(idOf),
    );
    const seen = await walkAll(call, isolate);
    expect(seen.slice().sort()).toEqual(Array.from({ length: n }, (_, i) => idOf(i)));
    // Its progress object went with the root's writing.
    expect(await store.get(keys.manifestRebuild('edge'))).toBeNull();
  }, 240_000);

  it('sessions deleted while it is built are not listed, nothing holds their text, and it ends', async () => {
    const store = new LocalStore(tempDir('sliced-rebuild-delete'));
    await copiedIn(store, n);
    const { call, isolate } = limitedWorker(store);
    isolate();
    expect((await call('GET', '/v1/sessions?limit=5')).status).toBe(503); // s0000..s0299 read
    const progress = await store.get(keys.manifestRebuild('edge'));
    expect(text(progress!.body)).toContain('copied task 7"');
    // A DELETE between every two lists: until review s61f each one started the rebuild again.
    const deleted = [7, 150, 300, 450, 600, 750, 820, 900, 1000, 1050].map(idOf);
    let ok: Invocation | undefined;
    for (let k = 0; k < 10 && !ok; k++) {
      isolate();
      if (deleted[k]) {
        const gone = await call('DELETE', `/v1/sessions/${deleted[k]}`);
        expect(gone.status).toBe(204);
        expect(gone.used).toBeLessThanOrEqual(LIMIT);
      }
      isolate();
      const r = await call('GET', '/v1/sessions?limit=5');
      expect(r.used).toBeLessThanOrEqual(LIMIT);
      if (r.status === 200) ok = r;
    }
    expect(ok, 'a 200 within 10 lists').toBeDefined();
    // Those not deleted yet go after the root is written.
    for (const id of deleted) {
      isolate();
      const gone = await call('DELETE', `/v1/sessions/${id}`);
      expect([204, 404]).toContain(gone.status);
    }
    const seen = await walkAll(call, isolate);
    expect(deleted.filter((id) => seen.includes(id))).toEqual([]);
    expect(seen).toHaveLength(n - deleted.length);
    for (const id of deleted) expect(seen).not.toContain(id);
    for (const key of await listAll(store, 'ns/edge/')) {
      const found = await store.get(key); // null: collected since the listing (background work)
      for (const i of [7, 150, 300, 450, 600, 750, 820, 900, 1000, 1050])
        if (found) expect(text(found.body), key).not.toContain(`copied task ${i}"`);
    }
  }, 240_000);

  it('one isolate: a request and its background work read one slice between them (review s61f)', async () => {
    const store = new LocalStore(tempDir('sliced-rebuild-one-isolate'));
    await copiedIn(store, n);
    const { call } = limitedWorker(store);
    const used: number[] = [];
    let ok = false;
    for (let k = 0; k < 16 && !ok; k++) {
      const gone = await call('DELETE', `/v1/sessions/${idOf(100 * k + 5)}`);
      used.push(gone.used);
      const r = await call('GET', '/v1/sessions?limit=5');
      used.push(r.used);
      ok = r.status === 200;
      await new Promise((done) => setTimeout(done, 1000)); // Retry-After: 1
    }
    expect(Math.max(...used), used.join(',')).toBeLessThanOrEqual(LIMIT);
    expect(ok).toBe(true);
  }, 240_000);
});
