// The check after a background record that its session still exists (lib/sessions/existence.ts): a later
// commit of the process answers it without a request; else one request per session once it has waited
// (`exists`, a HEAD on S3 and R2, where the store has it; a LIST of the key where it has not).
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../../lib/http/app.js';
import { createLogger } from '../../lib/model/log.js';
import { loadConfig } from '../../lib/server/config.js';
import { Background } from '../../lib/server/background.js';
import { ExistenceChecks } from '../../lib/sessions/existence.js';
import { CountingStore } from '../../lib/storage/counting.js';
import type { ListOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

/** Counts the checks of whether a key exists, by either request (`lists` counts both). */
class CountedLists extends PassThrough {
  lists = 0;
  listed: string[] = [];
  /** Of `lists`, those sent as `exists` (a HEAD), by key. */
  headed: string[] = [];
  override list(prefix: string, options?: ListOptions) {
    this.lists++;
    this.listed.push(prefix);
    return this.inner.list(prefix, options);
  }
  head(key: string) {
    this.lists++;
    this.listed.push(key);
    this.headed.push(key);
    return this.inner.head!(key);
  }
}

const KEY = 'ns/e/sessions/s1.json';

async function setUp(lingerMs: number, exists = true) {
  const objects = new CountedLists(tempLocalStore('existence'));
  if (exists) await objects.put(KEY, new TextEncoder().encode('{}'));
  return { objects, checks: new ExistenceChecks(objects, lingerMs) };
}

/** Whether `p` has settled after the pending callbacks ran. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setTimeout(r, 10));
  return done;
}

describe('existence checks after background records', () => {
  it('a commit of the same incarnation sent after the record landed answers "exists" with no LIST', async () => {
    const { objects, checks } = await setUp(60_000);
    const answer = checks.confirm(KEY, 'i1');
    expect(await settledYet(answer)).toBe(false);
    checks.proven(KEY, 'i1', checks.tick(), 'e');
    expect(await answer).toBe(true);
    expect(objects.lists).toBe(0);
    expect(checks.pending).toBe(0);
  });

  it('a commit on a session created again under the id answers "gone" for the older one, with no LIST', async () => {
    const { objects, checks } = await setUp(60_000);
    const answer = checks.confirm(KEY, 'old');
    checks.proven(KEY, 'new', checks.tick(), 'e');
    expect(await answer).toBe(false);
    expect(objects.lists).toBe(0);
  });

  it('a commit sent before the record landed answers nothing: the check LISTs when flushed', async () => {
    const { objects, checks } = await setUp(60_000);
    const sent = checks.tick();
    const answer = checks.confirm(KEY, 'i1');
    checks.proven(KEY, 'i1', sent, 'e');
    checks.proven('ns/e/sessions/other.json', 'i1', checks.tick(), 'e');
    expect(await settledYet(answer)).toBe(false);
    expect(checks.pending).toBe(1);
    await checks.flush();
    expect(await answer).toBe(true);
    expect(objects.lists).toBe(1);
  });

  it('with no commit, the checks of a session share one LIST once they have waited', async () => {
    const { objects, checks } = await setUp(40, false);
    const answers = [1, 2, 3].map(() => checks.confirm(KEY, 'i1'));
    expect(await Promise.all(answers)).toEqual([false, false, false]);
    expect(objects.lists).toBe(1);
    expect(checks.pending).toBe(0);
  });

  it('without a wait (Workers, Lambda), and during a flush, a check LISTs at once', async () => {
    const now = await setUp(0);
    expect(await now.checks.confirm(KEY, 'i1')).toBe(true);
    expect(now.objects.lists).toBe(1);

    const { objects, checks } = await setUp(60_000);
    const first = checks.confirm(KEY, 'i1');
    const flushing = checks.flush();
    const during = checks.confirm(KEY, 'i1');
    expect(await during).toBe(true);
    await flushing;
    expect(await first).toBe(true);
    expect(objects.lists).toBe(2);
    expect(checks.pending).toBe(0);
  });

  const session = (i: string) =>
    new TextEncoder().encode(
      JSON.stringify({ id: 's1', created_at: '2026-12-01T00:00:00Z', satchel: { i } }),
    );

  it('an object this process did not write last is read (a GET) and its incarnation compared, for every check waiting', async () => {
    const { objects, checks } = await setUp(60_000, false);
    await objects.put(KEY, session('0a0a0a0a'));
    const gets: string[] = [];
    const get = objects.get.bind(objects);
    objects.get = (key: string) => (gets.push(key), get(key));
    const mine = checks.confirm(KEY, '0a0a0a0a', { strict: true });
    const older = checks.confirm(KEY, '0b0b0b0b');
    await checks.flush();
    expect([await mine, await older]).toEqual([true, false]);
    expect(gets).toEqual([KEY]);
    expect(objects.headed).toEqual([KEY]);
    await objects.delete(KEY);
    expect(await new ExistenceChecks(objects, 0).confirm(KEY, '0a0a0a0a', { strict: true })).toBe(
      false,
    );
  });

  it("a HEAD with the etag of this process's last commit names that commit's session: no GET", async () => {
    const { objects, checks } = await setUp(60_000, false);
    const gets: string[] = [];
    const get = objects.get.bind(objects);
    objects.get = (key: string) => (gets.push(key), get(key));
    const sent = checks.tick();
    const { etag } = await objects.put(KEY, session('0a0a0a0a'));
    checks.proven(KEY, '0a0a0a0a', sent, etag);
    const mine = checks.confirm(KEY, '0a0a0a0a', { strict: true });
    const older = checks.confirm(KEY, '0b0b0b0b');
    await checks.flush();
    expect([await mine, await older]).toEqual([true, false]);
    expect([objects.headed, gets]).toEqual([[KEY], []]);
  });

  it('a session deleted and created again under the id by another process answers "gone" for the records of the first', async () => {
    const { objects, checks } = await setUp(60_000, false);
    const sent = checks.tick();
    const { etag } = await objects.put(KEY, session('0a0a0a0a'));
    checks.proven(KEY, '0a0a0a0a', sent, etag);
    const record = checks.confirm(KEY, '0a0a0a0a'); // a log record of that commit
    await objects.delete(KEY); // another process deletes it and creates it again
    await objects.put(KEY, session('0c0c0c0c'));
    await checks.flush();
    expect(await record).toBe(false);
  });

  it("a record of a version older than a write that removed text (`satchel.x`) is 'stale', by a GET or by a commit", async () => {
    // Another process's trim, pop or replace pruned the index and scrubbed the manifest before this
    // process's log or index record of an older version landed: that record goes, the session stays.
    const { objects, checks } = await setUp(60_000, false);
    const removed = (x: number) =>
      new TextEncoder().encode(
        JSON.stringify({
          id: 's1',
          created_at: '2026-12-01T00:00:00Z',
          satchel: { i: '0a0a0a0a', x },
        }),
      );
    await objects.put(KEY, removed(5));
    const older = checks.confirm(KEY, '0a0a0a0a/0');
    const same = checks.confirm(KEY, '0a0a0a0a/5');
    const key = checks.confirm(KEY, '0a0a0a0a', { strict: true }); // a keyed record: the incarnation alone
    const other = checks.confirm(KEY, '0b0b0b0b/5');
    await checks.flush();
    expect([await older, await same, await key, await other]).toEqual(['stale', true, true, false]);
    // This process's own commit answers the same, with no request.
    const before = objects.lists;
    const waiting = [checks.confirm(KEY, '0a0a0a0a/5'), checks.confirm(KEY, '0a0a0a0a/7')];
    checks.proven(KEY, '0a0a0a0a/7', checks.tick(), 'e');
    expect(await Promise.all(waiting)).toEqual(['stale', true]);
    expect(objects.lists).toBe(before);
    // Only a gone session's records are erased as gone: a stale one's audit record stays (store.ts).
    const erased: boolean[] = [];
    const erase = async (gone: boolean) => void erased.push(gone);
    const stale = checks.eraseUnlessLive(KEY, '0a0a0a0a/0', erase);
    const live = checks.eraseUnlessLive(KEY, '0a0a0a0a/5', erase);
    const gone = checks.eraseUnlessLive(KEY, '0c0c0c0c/5', erase);
    await checks.flush();
    await Promise.all([stale, live, gone]);
    expect(erased.sort()).toEqual([false, true]);
  });

  it('a drain holds them to run at once: a check that arrives during it does not wait', async () => {
    const { objects, checks } = await setUp(60_000);
    const background = new Background(createLogger({ quiet: true }));
    background.whileDraining(() => checks.hurry());
    const waiting = checks.confirm(KEY, 'i1');
    background.track(waiting);
    // A record that lands while the drain runs, and its check.
    background.track(new Promise((r) => setTimeout(r, 20)).then(() => checks.confirm(KEY, 'i1')));
    await background.drain(); // without the hold, it would wait 60 s
    expect(await waiting).toBe(true);
    expect(objects.lists).toBe(2);
    // Released: a check waits again.
    const after = checks.confirm(KEY, 'i1');
    expect(await settledYet(after)).toBe(false);
    checks.proven(KEY, 'i1', checks.tick(), 'e');
    expect(await after).toBe(true);
  });

  it("without a wait, a held session's checks wait for its last hold and share one LIST", async () => {
    const { objects, checks } = await setUp(0);
    const log = checks.hold(KEY);
    const index = checks.hold(KEY);
    const first = checks.confirm(KEY, 'i1');
    const flushing = checks.flush(); // a drain does not LIST a held session either
    log();
    expect(await settledYet(first)).toBe(false);
    const second = checks.confirm(KEY, 'i1');
    index();
    log(); // a second release changes nothing
    expect(await Promise.all([first, second])).toEqual([true, true]);
    await flushing;
    expect(objects.lists).toBe(1);
    // Unheld, a check LISTs at once again; a commit still answers a held one without a LIST.
    expect(await checks.confirm(KEY, 'i1')).toBe(true);
    expect(objects.lists).toBe(2);
    const release = checks.hold(KEY);
    const held = checks.confirm(KEY, 'i1');
    checks.proven(KEY, 'i1', checks.tick(), 'e');
    expect(await held).toBe(true);
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect(objects.lists).toBe(2);
  });

  it('a hold is bounded: its checks LIST after HOLD_MAX_MS even if it is never released', async () => {
    vi.useFakeTimers();
    try {
      const { objects, checks } = await setUp(0);
      checks.hold(KEY);
      const answer = checks.confirm(KEY, 'i1');
      await vi.advanceTimersByTimeAsync(9_000);
      expect(objects.lists).toBe(0);
      await vi.advanceTimersByTimeAsync(1_001);
      expect(await answer).toBe(true);
      expect(objects.lists).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('with a wait (the Node server), a hold does nothing', async () => {
    const { objects, checks } = await setUp(60_000);
    checks.hold(KEY);
    const answer = checks.confirm(KEY, 'i1');
    await checks.flush();
    expect(await answer).toBe(true);
    expect(objects.lists).toBe(1);
  });

  it('a flush waits for what follows the checks (the erasing)', async () => {
    const { checks } = await setUp(60_000, false);
    let erased = false;
    checks.follow(
      checks
        .confirm(KEY, 'i1')
        .then((exists) => new Promise((r) => setTimeout(r, 30)).then(() => (erased = !exists))),
    );
    await checks.flush();
    expect(erased).toBe(true);
  });

  it('a check that fails rejects every check it answers', async () => {
    const { objects, checks } = await setUp(60_000);
    const answers = [1, 2].map(() => checks.confirm(KEY, 'i1'));
    objects.head = () => Promise.reject(new Error('storage down'));
    await checks.flush();
    for (const a of answers) await expect(a).rejects.toThrow('storage down');
  });

  it('a store without `head` (a test double, say) is asked by a LIST of the key, or a GET when strict', async () => {
    const asked: string[] = [];
    const objects = new (class extends PassThrough {
      override list(prefix: string, options?: ListOptions) {
        asked.push(`LIST ${prefix}`);
        return this.inner.list(prefix, options);
      }
      override get(key: string) {
        asked.push(`GET ${key}`);
        return this.inner.get(key);
      }
    })(tempLocalStore('existence-list'));
    expect('head' in objects).toBe(false);
    await objects.put(KEY, session('0a0a0a0a'));
    const checks = new ExistenceChecks(objects, 0);
    expect(await checks.confirm(KEY, '0b0b0b0b')).toBe(true); // an object is all a LIST tells
    expect(await checks.confirm(KEY, '0b0b0b0b', { strict: true })).toBe(false);
    await objects.delete(KEY);
    expect(await checks.confirm(KEY, '0a0a0a0a')).toBe(false);
    expect(asked).toEqual([`LIST ${KEY}`, `GET ${KEY}`, `LIST ${KEY}`]);
  });

  it('CountingStore counts a HEAD, or over a store without `head` a GET (it does not ask itself again)', async () => {
    const local = tempLocalStore('existence-counting');
    const { etag } = await local.put(KEY, new TextEncoder().encode('{}'));
    const over = new CountingStore(local);
    expect(await over.head(KEY)).toEqual({ etag });
    expect([over.counts.head, over.counts.get]).toEqual([1, 0]);
    const bare = new CountingStore(new PassThrough(local));
    expect(await bare.head(KEY)).toEqual({ etag });
    expect(await bare.head(KEY + '.old')).toBe(null);
    expect([bare.counts.head, bare.counts.get]).toEqual([0, 2]);
  });

  it("Workers and Lambda (checks without a wait): a write's log, audit and index records share one LIST", async () => {
    const objects = new CountedLists(tempLocalStore('existence-app'));
    const config = await loadConfig({}, 'local');
    const app = () =>
      createApp({
        config,
        objects,
        allowOpen: true,
        shortLived: true,
        log: createLogger({ quiet: true }),
      });
    const first = app();
    const send = (a: ReturnType<typeof app>, path: string, body: unknown) =>
      a.app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await send(first, '/v1/sessions', { id: 's1', task: 't' })).status).toBe(201);
    await first.background.drain();
    const sessionKey = 'ns/default/sessions/s1.json';
    for (let i = 0; i < 3; i++) {
      const fresh = app(); // a new instance, as a cold function
      objects.listed = [];
      objects.headed = [];
      const res = await send(fresh, '/v1/sessions/s1/messages', {
        messages: [{ role: 'user', content: `turn ${i} about kittens` }],
      });
      expect(res.status).toBe(200);
      await fresh.background.drain();
      // Checked once for the log, audit and index records together (it was one LIST after the log and
      // audit records, and another after the index record), by `exists` (a HEAD), not a LIST.
      expect(objects.listed.filter((p) => p === sessionKey)).toEqual([sessionKey]);
      expect(objects.headed).toContain(sessionKey);
    }
    // The index record was stored: a search finds the last turn.
    const found = await send(app(), '/v1/session_search', { action: 'search', query: 'kittens' });
    expect(JSON.stringify(await found.json())).toContain('s1');
  });
});
