// Before 2026-12-05 the local store fsynced a put's temp file and renamed it over the key, but never fsynced
// a folder: not the one holding the new name, not those mkdir made for a new key, not the one a delete
// unlinked from. On ext4 or xfs a power loss right after the answer could bring back the old object, or no
// object for a new key, or a deleted one. Now a put fsyncs the key's folder after the rename (and, when
// mkdir made folders, the parent of each), and a delete fsyncs the folder after the unlink, before they
// answer; one folder fsync per operation otherwise.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

/** What the store did to the filesystem, in order: renames and unlinks once done, fsyncs by path. */
const events = vi.hoisted(() => [] as [string, string][]);
vi.mock('node:fs/promises', async (orig) => {
  const real = await orig<typeof import('node:fs/promises')>();
  return {
    ...real,
    open: (async (path: string, ...rest: unknown[]) => {
      const handle = await (real.open as (...a: unknown[]) => ReturnType<typeof real.open>)(
        path,
        ...rest,
      );
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        await sync();
        events.push(['sync', String(path)]);
      };
      return handle;
    }) as typeof real.open,
    rename: async (from: string, to: string) => {
      await real.rename(from, to);
      events.push(['rename', String(to)]);
    },
    unlink: async (path: string) => {
      await real.unlink(path);
      events.push(['unlink', String(path)]);
    },
  };
});

const { LocalStore } = await import('../../lib/storage/local.js');
const { utf8 } = await import('../../lib/storage/port.js');

/** The folders fsynced since event `from` (a temp file's fsync is not one). */
function folderSyncs(from = 0): string[] {
  return events
    .slice(from)
    .filter(([e, p]) => e === 'sync' && !p.includes('.tmp-'))
    .map(([, p]) => p);
}

async function open() {
  const root = mkdtempSync(join(tmpdir(), 'satchel-dir-fsync-'));
  const store = new LocalStore(root);
  await store.swept;
  return { root, store };
}

beforeEach(() => {
  events.length = 0;
});

describe('local store: folders are fsynced before an answer', () => {
  it('a put of a new key fsyncs the folders mkdir made, and the key folder after the rename', async () => {
    const { root, store } = await open();
    const path = join(root, 'ns', 'a', 'sessions', 's1.json');
    await store.put('ns/a/sessions/s1.json', utf8('{"v":1}'), { ifNoneMatch: '*' });
    const renamed = events.findIndex(([e, p]) => e === 'rename' && p === path);
    expect(renamed).toBeGreaterThanOrEqual(0);
    // mkdir made ns, ns/a and ns/a/sessions: their parents hold new names.
    expect(folderSyncs().slice().sort()).toEqual(
      [root, join(root, 'ns'), join(root, 'ns', 'a'), dirname(path)].sort(),
    );
    expect(folderSyncs(renamed + 1), JSON.stringify(events)).toEqual([dirname(path)]);
  });

  it('a put into an existing folder fsyncs that folder once, after the rename', async () => {
    const { root, store } = await open();
    await store.put('ns/s1.json', utf8('1'));
    const start = events.length;
    await store.put('ns/s1.json', utf8('2'));
    await store.put('ns/s2.json', utf8('3'));
    expect(folderSyncs(start)).toEqual([join(root, 'ns'), join(root, 'ns')]);
    const renamed = events.findIndex(([e], i) => i >= start && e === 'rename');
    expect(events.slice(start, renamed).some(([, p]) => p === join(root, 'ns'))).toBe(false);
  });

  it('a delete fsyncs the folder after the unlink; a delete of a missing key syncs nothing', async () => {
    const { root, store } = await open();
    await store.put('ns/s1.json', utf8('1'));
    await store.put('ns/s2.json', utf8('2'));
    const start = events.length;
    await store.delete('ns/s1.json');
    const unlinked = events.findIndex(
      ([e, p], i) => i >= start && e === 'unlink' && p === join(root, 'ns', 's1.json'),
    );
    expect(unlinked).toBeGreaterThanOrEqual(0);
    expect(folderSyncs(start)).toEqual([join(root, 'ns')]);
    expect(folderSyncs(unlinked + 1)).toEqual([join(root, 'ns')]);
    const after = events.length;
    await store.delete(['ns/gone.json', 'other/gone.json']);
    expect(folderSyncs(after)).toEqual([]);
  });
});
