// The check after a background record that its session still exists (lib/sessions/existence.ts): a later
// commit of the process answers it without a request; else one LIST per session once it has waited.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/model/log.js';
import { Background } from '../../lib/server/background.js';
import { ExistenceChecks } from '../../lib/sessions/existence.js';
import type { ListOptions } from '../../lib/storage/port.js';
import { PassThrough } from '../support/search-process.js';
import { tempLocalStore } from '../support/temp-store.js';

class CountedLists extends PassThrough {
  lists = 0;
  override list(prefix: string, options?: ListOptions) {
    this.lists++;
    return this.inner.list(prefix, options);
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
    checks.proven(KEY, 'i1', checks.tick());
    expect(await answer).toBe(true);
    expect(objects.lists).toBe(0);
    expect(checks.pending).toBe(0);
  });

  it('a commit on a session created again under the id answers "gone" for the older one, with no LIST', async () => {
    const { objects, checks } = await setUp(60_000);
    const answer = checks.confirm(KEY, 'old');
    checks.proven(KEY, 'new', checks.tick());
    expect(await answer).toBe(false);
    expect(objects.lists).toBe(0);
  });

  it('a commit sent before the record landed answers nothing: the check LISTs when flushed', async () => {
    const { objects, checks } = await setUp(60_000);
    const sent = checks.tick();
    const answer = checks.confirm(KEY, 'i1');
    checks.proven(KEY, 'i1', sent);
    checks.proven('ns/e/sessions/other.json', 'i1', checks.tick());
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

  it('a strict check (a record named by its incarnation) GETs the object and compares, for every check waiting', async () => {
    const { objects, checks } = await setUp(60_000, false);
    const session = (i: string) =>
      new TextEncoder().encode(
        JSON.stringify({ id: 's1', created_at: '2026-12-01T00:00:00Z', satchel: { i } }),
      );
    await objects.put(KEY, session('0a0a0a0a'));
    const gets: string[] = [];
    const get = objects.get.bind(objects);
    objects.get = (key: string) => (gets.push(key), get(key));
    const mine = checks.confirm(KEY, '0a0a0a0a', { strict: true });
    const older = checks.confirm(KEY, '0b0b0b0b');
    await checks.flush();
    expect([await mine, await older]).toEqual([true, false]);
    expect(gets).toEqual([KEY]);
    expect(objects.lists).toBe(0);
    await objects.delete(KEY);
    expect(await new ExistenceChecks(objects, 0).confirm(KEY, '0a0a0a0a', { strict: true })).toBe(
      false,
    );
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
    checks.proven(KEY, 'i1', checks.tick());
    expect(await after).toBe(true);
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

  it('a LIST that fails rejects every check it answers', async () => {
    const { objects, checks } = await setUp(60_000);
    const answers = [1, 2].map(() => checks.confirm(KEY, 'i1'));
    objects.list = () => Promise.reject(new Error('storage down'));
    await checks.flush();
    for (const a of answers) await expect(a).rejects.toThrow('storage down');
  });
});
