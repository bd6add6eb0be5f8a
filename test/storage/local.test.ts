import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { utf8 } from '../../lib/storage/port.js';
import { describeConformance } from './conformance.js';

const root = mkdtempSync(join(tmpdir(), 'satchel-local-'));
describeConformance('local folder', () => new LocalStore(root));

describe('local folder specifics', () => {
  it('writes real files under the root and leaves no temp files behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    const store = new LocalStore(dir);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.put(`ns/a/sessions/s${i}.json`, utf8(`{"i":${i}}`)),
      ),
    );
    const files = readdirSync(join(dir, 'ns', 'a', 'sessions'));
    expect(files.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `s${i}.json`).sort());
  });

  it('a second process-level instance on the same folder sees the data (restart)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    await new LocalStore(dir).put('k/v', utf8('x'));
    const reopened = new LocalStore(dir);
    const got = await reopened.get('k/v');
    expect(got && new TextDecoder().decode(got.body)).toBe('x');
    await reopened.put('k/v', utf8('y'), { ifMatch: got!.etag });
  });

  it('ping reports a folder that cannot be used, without naming its absolute path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-local-'));
    writeFileSync(join(dir, 'a-file'), 'x');
    const store = new LocalStore(join(dir, 'a-file', 'data'));
    const out = await store.ping(2000);
    expect(out).toMatchObject({ ok: false, reason: 'not-found', error: 'ENOTDIR' });
    expect(JSON.stringify(out)).not.toContain(dir);
    expect(await new LocalStore(join(dir, 'fresh')).ping(2000)).toMatchObject({ ok: true });
  });
});

describe('local folder: long listings', () => {
  // A page after the first reads the rest of its listing's walk (kept 5 s) instead of walking the
  // folder again. What must hold either way: each key once, in order; keys deleted between pages left
  // out; sizes read when the page is; cursors from anywhere (another listing, a caller's own) still work.
  it('pages keep order, skip what was deleted, read sizes late, and take any cursor', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-local-')));
    const names = Array.from({ length: 2500 }, (_, i) => `x/k${String(i).padStart(5, '0')}`);
    for (let i = 0; i < names.length; i += 250)
      await Promise.all(names.slice(i, i + 250).map((n) => store.put(n, utf8('ab'))));
    const first = await store.list('x/');
    expect(first.objects).toHaveLength(1000);
    expect(first.cursor).toBe(names[999]);
    // A second listing of the same prefix, interleaved: its own pages, unaffected.
    const other = await store.list('x/', { limit: 10 });
    await store.delete(names[1500]!);
    await store.put(names[1200]!, utf8('abcdef'));
    const second = await store.list('x/', { cursor: first.cursor! });
    expect(second.objects.map((o) => o.key)).toEqual(
      names.slice(1000, 2001).filter((n) => n !== names[1500]),
    );
    expect(second.objects.find((o) => o.key === names[1200])!.size).toBe(6);
    const third = await store.list('x/', { cursor: second.cursor! });
    expect(third.objects.map((o) => o.key)).toEqual(names.slice(2001));
    expect(third.cursor).toBeUndefined();
    const next = await store.list('x/', { limit: 10, cursor: other.cursor! });
    expect(next.objects.map((o) => o.key)).toEqual(names.slice(10, 20));
    // A cursor this store never handed out, and a used one again: a walk, same answer.
    expect(
      (await store.list('x/', { limit: 3, cursor: 'x/k00041x' })).objects.map((o) => o.key),
    ).toEqual(names.slice(42, 45));
    const again = await store.list('x/', { cursor: first.cursor! });
    expect(again.objects.map((o) => o.key)).toEqual(second.objects.map((o) => o.key));
  });

  it('a key created between two pages is on the later page, as on S3 (review s62i)', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-local-')));
    for (const n of ['a', 'b', 'c', 'd']) await store.put(`p/${n}`, utf8(n));
    await new Promise((r) => setTimeout(r, 100)); // the folder's last change well before the walk
    const first = await store.list('p/', { limit: 2 });
    await store.put('p/e', utf8('e'));
    const rest = await store.list('p/', { cursor: first.cursor! });
    expect(rest.objects.map((o) => o.key)).toEqual(['p/c', 'p/d', 'p/e']);
    // In a folder of its own too (a new folder changes the one it is made in).
    const deep = await store.list('p/', { limit: 2 });
    await store.put('p/z/1', utf8('1'));
    const after = await store.list('p/', { cursor: deep.cursor! });
    expect(after.objects.map((o) => o.key)).toEqual(['p/c', 'p/d', 'p/e', 'p/z/1']);
  });
});
