// Review s68f: a LIST is no snapshot (docs/design.md, "Why a standing marker is as good as one marker per
// write"): a paged LIST (S3 past 1,000 keys) or the local folder's walk reads m/l/ before m/p/, so another
// process's write whose log record landed after the LIST passed m/l/ and whose marker went (at once on
// Workers and Lambda) before the LIST reached m/p/ was missing from that listing, its older entry in its
// place: a page walk showed the session twice, the second time at its older version below the cursor, and
// a walk whose first page met it never showed a session created before the walk began. The manifest now
// lists its markers first, then the rest. PagedList reads a LIST of m/ as such a LIST reads it.
import { expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from '../../lib/storage/local.js';
import { SessionStore } from '../../lib/sessions/store.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PassThrough } from '../support/search-process.js';
import type { ListOptions, PutOptions } from '../../lib/storage/port.js';

const ns = 'wt';

/** Writer's store: its manifest log record PUTs wait while `gate` is set. */
class HeldLogs extends PassThrough {
  gate: Promise<void> | null = null;
  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.gate && key.includes('/m/l/')) await this.gate;
    return this.inner.put(key, body, options);
  }
}

/**
 * Reader's store: when `between` is set, its LIST of m/ is read as a paged LIST reads it, keys before
 * m/p/ first, then (after `between` ran) the rest: what a LIST does when the writer's background work lands
 * in the middle of it.
 */
class PagedList extends PassThrough {
  between: (() => Promise<void>) | null = null;
  override async list(prefix: string, options?: ListOptions) {
    const hook = this.between;
    if (!hook || options?.cursor || !prefix.endsWith('/m/'))
      return this.inner.list(prefix, options);
    this.between = null;
    const first = (await this.inner.list(prefix)).objects.filter((o) => o.key < `${prefix}p/`);
    await hook();
    const second = (await this.inner.list(prefix)).objects.filter((o) => o.key >= `${prefix}p/`);
    return { objects: [...first, ...second] };
  }
}

function store(objects: PassThrough, shortLived: boolean) {
  return new SessionStore(objects, {
    pipeline: defaultPipeline({ maxSessionBytes: 4 << 20 }),
    // Workers and Lambda: a write's marker goes in its own background work, once its log record is stored.
    ...(shortLived ? { groupCommit: false, markerIdleMs: 0, recordLingerMs: 0 } : {}),
  } as any);
}

const tick = () => new Promise((r) => setTimeout(r, 3));

it('a walk (limit 1, then 3) by one process while another (Workers/Lambda settings) appends shows each session once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s68f-walk-twice-'));
  const wStore = new HeldLogs(new LocalStore(dir));
  const rStore = new PagedList(new LocalStore(dir));
  const writer = store(wStore, true);
  const reader = store(rStore, false);
  for (const id of ['x', 'y', 'z']) {
    await writer.create(ns, { id, task: `task ${id}` } as any);
    await tick();
  }
  await writer.settled();
  await reader.list(ns, { limit: 10 }); // the namespace's manifest has a root (x at its create)
  // x is appended to by the writer; its log record waits (the write has answered).
  let release!: () => void;
  wStore.gate = new Promise<void>((r) => (release = r));
  const appended = await writer.append(
    ns,
    'x',
    { messages: [{ role: 'user', content: 'more' }] } as any,
    undefined,
  );
  // Page 1: the reader finds x's marker without a log record and reads x's object: x, newest.
  const page1 = await reader.list(ns, { limit: 1 });
  // Page 2: its LIST passes m/l/ before x's log record lands, and reaches m/p/ after x's marker went.
  rStore.between = async () => {
    wStore.gate = null;
    release();
    await writer.settled();
  };
  const page2 = await reader.list(ns, { limit: 3, cursor: page1.next_cursor! });
  const walk = [...page1.sessions, ...page2.sessions].map((s: any) => `${s.id}@${s.updated_at}`);
  expect(walk[0]).toBe(`x@${appended.session.updated_at}`);
  const ids = walk.map((w) => w.split('@')[0]);
  expect(new Set(ids).size, `walk shows a session twice: ${walk.join(', ')}`).toBe(ids.length);
});

it('a walk begun after a create was answered (Workers/Lambda writer) shows that session', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-s68f-walk-skip-'));
  const wStore = new HeldLogs(new LocalStore(dir));
  const rStore = new PagedList(new LocalStore(dir));
  const writer = store(wStore, true);
  const reader = store(rStore, false);
  for (const id of ['y', 'z']) {
    await writer.create(ns, { id, task: `task ${id}` } as any);
    await tick();
  }
  await writer.settled();
  await reader.list(ns, { limit: 10 });
  let release!: () => void;
  wStore.gate = new Promise<void>((r) => (release = r));
  await tick();
  const created = await writer.create(ns, { id: 'x', task: 'created before the walk' } as any);
  rStore.between = async () => {
    wStore.gate = null;
    release();
    await writer.settled();
  };
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page: any = await reader.list(ns, { limit: 1, ...(cursor ? { cursor } : {}) });
    seen.push(...page.sessions.map((s: any) => s.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  const after = (await reader.list(ns, { limit: 10 })).sessions.map((s: any) => s.id);
  expect(after).toContain(created.session.id);
  expect(seen).toContain('x');
});
