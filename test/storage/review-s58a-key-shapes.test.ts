// Review s58a, findings 3 and 4: assertSafeKey (every adapter's key check) accepted keys that some adapter
// could not keep apart, list or delete:
// - a segment starting with `.`: the local store took `x/.tmp-…` for its own temp file (never listed, and
//   deleted by the next start's sweep) and `.locks/…` for its lock folder (never listed);
// - lone surrogates: the local store wrote `id\uD800` and `id\uDC00` to one file (both U+FFFD), and both S3
//   transports threw a raw URIError;
// - characters XML 1.0 cannot carry (C0 controls, U+FFFE/U+FFFF): written on radosgw, but DeleteObjects
//   failed with 400, so a prefix delete threw and the key stayed;
// - the 1024 limit counted UTF-16 units, not UTF-8 bytes (S3's and R2's limit).
// Now every adapter refuses them up front, the same way. Satchel's own keys never hold them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { MemoryStore } from '../../lib/storage/memory.js';
import { text, utf8, type ObjectStore } from '../../lib/storage/port.js';
import { deletePrefix, listAll } from '../../lib/storage/prefix.js';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { openTestS3 } from '../support/s3.js';
import { tempLocalStore } from '../support/temp-store.js';

const mf = new Miniflare({
  modules: true,
  script: 'export default { fetch() { return new Response("") } }',
  r2Buckets: ['BUCKET'],
});
const roots: string[] = [];
afterAll(async () => {
  await mf.dispose();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A fresh folder for a LocalStore, removed after the file. */
function folder(label: string): string {
  const root = mkdtempSync(join(tmpdir(), `satchel-${label}-`));
  roots.push(root);
  return root;
}

const refused: [string, string][] = [
  ['a temp-file name', 'ns/a/notes/.tmp-4000000-draft.json'],
  ['a hidden segment', 'ns/a/.notes.json'],
  ['the lock folder', '.locks/notes.json'],
  ['a lone high surrogate', 'ns/x/s/id\uD800.json'],
  ['a lone low surrogate', 'ns/x/s/id\uDC00.json'],
  ['a C0 control', 'ns/x/s/ctl\u0001id.json'],
  ['U+FFFE', 'ns/x/s/\uFFFE.json'],
  ['U+FFFF', 'ns/x/s/\uFFFF.json'],
  ['1025 UTF-8 bytes in 513 UTF-16 units', 'ns/' + 'é'.repeat(511)],
  ['1025 UTF-8 bytes in 1024 UTF-16 units', 'ns/x/' + 'é'.repeat(1) + 'z'.repeat(1018)],
];

/** Keys every adapter still takes: dots inside segments, tab, a surrogate pair, 1000 UTF-8 bytes. */
const accepted = [
  'ns/x/a..b/c.d.json',
  'ns/x/tab\there.json',
  'ns/x/\u{1F600}.json',
  'ns/x/' + ('é'.repeat(100) + '/').repeat(4) + 'z'.repeat(191),
];

const adapters: [string, () => ObjectStore | Promise<ObjectStore>][] = [
  ['memory', () => new MemoryStore()],
  ['local', () => tempLocalStore('s58a-keys')],
  ['s3 (Node wire)', () => openTestS3('s58a')],
  ['s3 (SDK only)', () => openTestS3('s58a-sdk', { sdk: true })],
  [
    'r2 (miniflare)',
    async () => new R2Store((await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike),
  ],
];

describe.each(adapters)('keys some adapter cannot keep apart or delete (%s)', (_, open) => {
  it.each(refused)(
    '%s is refused up front by every call, and nothing is stored',
    async (_what, key) => {
      const store = await open();
      await expect(store.put(key, utf8('v'), { ifNoneMatch: '*' })).rejects.toThrow(
        /unsafe storage key/,
      );
      await expect(store.put(key, utf8('v'))).rejects.toThrow(/unsafe storage key/);
      await expect(store.get(key)).rejects.toThrow(/unsafe storage key/);
      await expect(store.delete(key)).rejects.toThrow(/unsafe storage key/);
      expect(await listAll(store, '')).toEqual([]);
    },
  );

  it('keys that only look odd are stored, listed, and deleted by a prefix delete', async () => {
    const store = await open();
    for (const key of accepted) await store.put(key, utf8(key), { ifNoneMatch: '*' });
    for (const key of accepted) expect(text((await store.get(key))!.body)).toBe(key);
    expect((await listAll(store, 'ns/x/')).sort()).toEqual([...accepted].sort());
    await deletePrefix(store, 'ns/x/');
    expect(await listAll(store, 'ns/x/')).toEqual([]);
  }, 30_000);
});

describe('local store: names that are never keys', () => {
  it('dot-files and dot-folders in a key folder (.DS_Store, .git) are not listed; a prefix delete works', async () => {
    const root = folder('s58a-dotfiles');
    const store = new LocalStore(root);
    await store.put('ns/a/s/1.json', utf8('one'));
    // Before, both were listed as keys: only `.tmp-` names and the root's `.locks` were passed over.
    writeFileSync(join(root, 'ns', 'a', 's', '.DS_Store'), 'finder');
    mkdirSync(join(root, 'ns', 'a', '.git'));
    writeFileSync(join(root, 'ns', 'a', '.git', 'config'), 'x');
    expect(await listAll(store, 'ns/a/')).toEqual(['ns/a/s/1.json']);
    await deletePrefix(store, 'ns/a/');
    expect(await listAll(store, 'ns/a/')).toEqual([]);
  });

  it("a segment over 255 bytes is refused in words, without the folder's absolute path", async () => {
    const root = folder('s58a-longname');
    const store = new LocalStore(root);
    const err = await store
      .put('ns/a/' + 'é'.repeat(128) + '.json', utf8('v'))
      .catch((e: unknown) => e);
    // Before, a raw ENAMETOOLONG naming the absolute path.
    expect((err as Error).message).toMatch(
      /unsafe storage key for a local folder \(a segment over 255 bytes\)/,
    );
    expect((err as Error).message).not.toContain(root);
  });
});
