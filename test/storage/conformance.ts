import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { PreconditionFailedError, text, utf8, type ObjectStore } from '../../lib/storage/port.js';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { S3Store } from '../../lib/storage/s3.js';

/**
 * The storage conformance suite, written once and run against every adapter: the behaviour the rest
 * of Satchel relies on (etags, create-only and compare-and-swap writes, listing with cursors).
 */
export function describeConformance(name: string, open: () => ObjectStore | Promise<ObjectStore>) {
  describe(`object store conformance: ${name}`, () => {
    const fresh = async () => {
      const store = await open();
      const prefix = `conf/${Math.random().toString(36).slice(2)}/`;
      return { store, prefix };
    };

    it('get of a missing key is null', async () => {
      const { store, prefix } = await fresh();
      expect(await store.get(prefix + 'missing.json')).toBeNull();
    });

    it('put then get returns the bytes and the same etag', async () => {
      const { store, prefix } = await fresh();
      const body = utf8('{"hello":"wörld"}');
      const { etag } = await store.put(prefix + 'a.json', body);
      expect(etag).toBeTruthy();
      expect(etag).not.toMatch(/^"/);
      const got = await store.get(prefix + 'a.json');
      expect(got && text(got.body)).toBe('{"hello":"wörld"}');
      expect(got?.etag).toBe(etag);
    });

    it('an empty body round-trips', async () => {
      const { store, prefix } = await fresh();
      await store.put(prefix + 'empty', new Uint8Array(0));
      const got = await store.get(prefix + 'empty');
      expect(got?.body.byteLength).toBe(0);
    });

    it('If-None-Match: * creates once, then fails with PreconditionFailedError', async () => {
      const { store, prefix } = await fresh();
      await store.put(prefix + 'c', utf8('1'), { ifNoneMatch: '*' });
      const err = await store
        .put(prefix + 'c', utf8('2'), { ifNoneMatch: '*' })
        .catch((e: unknown) => e);
      expect(PreconditionFailedError.is(err)).toBe(true);
      expect(text((await store.get(prefix + 'c'))!.body)).toBe('1');
    });

    it('If-Match with the current etag succeeds and changes the etag; a stale one fails', async () => {
      const { store, prefix } = await fresh();
      const first = await store.put(prefix + 'm', utf8('v1'));
      const second = await store.put(prefix + 'm', utf8('v2'), { ifMatch: first.etag });
      expect(second.etag).not.toBe(first.etag);
      const err = await store
        .put(prefix + 'm', utf8('v3'), { ifMatch: first.etag })
        .catch((e: unknown) => e);
      expect(PreconditionFailedError.is(err)).toBe(true);
      expect(text((await store.get(prefix + 'm'))!.body)).toBe('v2');
    });

    it('If-Match on a missing key fails and creates nothing', async () => {
      const { store, prefix } = await fresh();
      const err = await store
        .put(prefix + 'nothing', utf8('x'), { ifMatch: 'abc' })
        .catch((e: unknown) => e);
      expect(PreconditionFailedError.is(err)).toBe(true);
      expect(await store.get(prefix + 'nothing')).toBeNull();
    });

    it("get tells the object's age since its last write, by storage's clock (continue leases expire by it)", async () => {
      const { store, prefix } = await fresh();
      const key = prefix + 'aged.json';
      // Whole seconds on S3 (Date less Last-Modified): an age may read up to a second more than it is.
      const atMost = (sent: number) => Date.now() - sent + 1000;
      const sent = Date.now();
      await store.put(key, utf8('{}'));
      const first = (await store.get(key))!;
      expect(first.age).toBeTypeOf('number');
      expect(first.age!).toBeLessThanOrEqual(atMost(sent));
      await new Promise((r) => setTimeout(r, 2200));
      const later = (await store.get(key))!;
      expect(later.age!).toBeGreaterThanOrEqual(2000);
      expect(later.age!).toBeLessThanOrEqual(atMost(sent));
      // A new write starts it again (not the object's first creation).
      const again = Date.now();
      await store.put(key, utf8('{"v":2}'), { ifMatch: later.etag });
      expect((await store.get(key))!.age!).toBeLessThanOrEqual(atMost(again));
    });

    it('of 10 concurrent create-only writes to one key exactly one wins', async () => {
      const { store, prefix } = await fresh();
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          store.put(prefix + 'race', utf8(String(i)), { ifNoneMatch: '*' }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results)
        if (r.status === 'rejected') expect(PreconditionFailedError.is(r.reason)).toBe(true);
    });

    it('of 8 concurrent compare-and-swap writes with one etag exactly one wins', async () => {
      const { store, prefix } = await fresh();
      const { etag } = await store.put(prefix + 'cas', utf8('base'));
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          store.put(prefix + 'cas', utf8(`w${i}`), { ifMatch: etag }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    });

    it('delete removes keys, and deleting a missing key is fine', async () => {
      const { store, prefix } = await fresh();
      await store.put(prefix + 'd1', utf8('1'));
      await store.put(prefix + 'd2', utf8('2'));
      await store.put(prefix + 'd3', utf8('3'));
      await store.delete(prefix + 'd1');
      await store.delete([prefix + 'd2', prefix + 'd3', prefix + 'never']);
      await store.delete(prefix + 'never');
      expect((await store.list(prefix)).objects).toEqual([]);
    });

    it('head tells an object at exactly the key, with the etag get and put give: not a prefix, a longer key or a deleted one', async () => {
      const { store, prefix } = await fresh();
      expect(store.head).toBeTypeOf('function');
      const exists = async (key: string) => (await store.head!(key)) !== null;
      expect(await exists(prefix + 's.json')).toBe(false);
      const put = await store.put(prefix + 's.json', utf8('{}'));
      await store.put(prefix + 'dir/inner.json', utf8('{}'));
      expect(await store.head!(prefix + 's.json')).toEqual({ etag: put.etag });
      expect((await store.get(prefix + 's.json'))!.etag).toBe(put.etag);
      const again = await store.put(prefix + 's.json', utf8('{"a":1}'), { ifMatch: put.etag });
      expect(await store.head!(prefix + 's.json')).toEqual({ etag: again.etag });
      expect(again.etag).not.toBe(put.etag);
      expect(await exists(prefix + 's.json')).toBe(true);
      expect(await exists(prefix + 's')).toBe(false); // a prefix of a key
      expect(await exists(prefix + 's.json.bak')).toBe(false); // a longer key
      expect(await exists(prefix + 'dir')).toBe(false); // a "folder"
      expect(await exists(prefix + 'dir/inner.json')).toBe(true);
      await store.delete(prefix + 's.json');
      expect(await exists(prefix + 's.json')).toBe(false);
      await expect(exists(prefix + '../x')).rejects.toThrow(/unsafe/);
    });

    it('lists by prefix in ascending order with sizes, paging with a cursor', async () => {
      const { store, prefix } = await fresh();
      const names = ['b/2', 'a/1', 'b/1', 'c', 'a/2'];
      for (const n of names) await store.put(prefix + n, utf8(n));
      await store.put(prefix.slice(0, -1) + 'x-outside', utf8('no'));
      const all = await store.list(prefix);
      expect(all.objects.map((o) => o.key)).toEqual(
        ['a/1', 'a/2', 'b/1', 'b/2', 'c'].map((n) => prefix + n),
      );
      expect(all.objects[0]!.size).toBe(3);
      expect(all.cursor).toBeUndefined();
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list(prefix, { limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.objects.length).toBeLessThanOrEqual(2);
        seen.push(...page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(all.objects.map((o) => o.key));
      expect((await store.list(prefix + 'b/')).objects.map((o) => o.key)).toEqual([
        prefix + 'b/1',
        prefix + 'b/2',
      ]);
      await store.delete(prefix.slice(0, -1) + 'x-outside');
    });

    it('lists and pages in UTF-8 byte order, as S3 and R2 do (not JS string order)', async () => {
      const { store, prefix } = await fresh();
      // U+FF21 sorts before U+1F600 by bytes (EF.. < F0..), after it as UTF-16 (FF21 > D83D).
      const names = ['\u{1F600}.json', 'a.json', '\uFF21.json', '\u00e9.json'];
      for (const n of names) await store.put(prefix + n, utf8(n));
      const byBytes = names
        .map((n) => prefix + n)
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(byBytes.map((k) => k.slice(prefix.length))).toEqual([
        'a.json',
        '\u00e9.json',
        '\uFF21.json',
        '\u{1F600}.json',
      ]);
      expect((await store.list(prefix)).objects.map((o) => o.key)).toEqual(byBytes);
      const first = await store.list(prefix, { limit: 3 });
      expect(first.objects.map((o) => o.key)).toEqual(byBytes.slice(0, 3));
      const rest = await store.list(prefix, { cursor: first.cursor! });
      expect(rest.objects.map((o) => o.key)).toEqual(byBytes.slice(3));
    });

    it('listings leave out keys no call could take (put there by something else), paging past them', async (ctx) => {
      const { store, prefix } = await fresh();
      // Keys assertSafeKey refuses, sorted among the safe ones: a backslash, a control character, dot-files.
      const unsafe = ['a\\copy.json', 'b\u0001.json', '._c.json', 'd/._e.json', 'd/f\\g.json'];
      const safe = ['a.json', 'b.json', 'c.json', 'd/e.json', 'z.json'];
      for (const name of unsafe)
        if (!(await plantRaw(store, prefix + name, '{}')))
          ctx.skip('nothing but the adapter writes to this store');
      for (const name of safe) await store.put(prefix + name, utf8('{}'));
      const all = await store.list(prefix);
      expect(all.objects.map((o) => o.key)).toEqual(safe.map((n) => prefix + n));
      for (const limit of [1, 2]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const page = await store.list(prefix, { limit, ...(cursor ? { cursor } : {}) });
          expect(page.objects.length).toBeLessThanOrEqual(limit);
          seen.push(...page.objects.map((o) => o.key));
          cursor = page.cursor;
          if (!cursor) break;
        }
        expect(seen).toEqual(safe.map((n) => prefix + n));
      }
      // Every listed key takes a get and a delete (a manifest rebuild reads them; a DELETE erases them).
      for (const { key } of all.objects) expect(await store.get(key)).not.toBeNull();
      await store.delete(all.objects.map((o) => o.key));
      expect((await store.list(prefix)).objects).toEqual([]);
    });

    it('refuses keys with an empty segment, which the local store would alias to another key', async () => {
      const { store, prefix } = await fresh();
      await store.put(prefix + 'a/b.json', utf8('first'), { ifNoneMatch: '*' });
      for (const key of [prefix + 'a//b.json', prefix + 'a/b.json/', prefix + '/a/b.json']) {
        await expect(store.put(key, utf8('second'))).rejects.toThrow(/unsafe/);
        await expect(store.get(key)).rejects.toThrow(/unsafe/);
      }
      expect(text((await store.get(prefix + 'a/b.json'))!.body)).toBe('first');
    });

    it('a large body (5 MiB) round-trips byte for byte', async () => {
      const { store, prefix } = await fresh();
      const body = new Uint8Array(5 * 1024 * 1024);
      for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
      const { etag } = await store.put(prefix + 'big', body);
      const got = await store.get(prefix + 'big');
      expect(got?.body.byteLength).toBe(body.byteLength);
      expect(Buffer.compare(Buffer.from(got!.body), Buffer.from(body))).toBe(0);
      await store.put(prefix + 'big', utf8('small'), { ifMatch: etag });
    });

    it('ping (when the adapter has it) answers ok within its deadline, without throwing', async () => {
      const { store } = await fresh();
      if (!store.ping) return;
      const out = await store.ping(5000);
      expect(out.ok).toBe(true);
      expect(out.latencyMs).toBeGreaterThanOrEqual(0);
      expect(out.latencyMs).toBeLessThan(5000);
      expect(out.error).toBeUndefined();
    });

    it('refuses keys that could escape their prefix', async () => {
      const { store, prefix } = await fresh();
      await expect(store.get(prefix + '../x')).rejects.toThrow(/unsafe/);
      await expect(store.put('/abs', utf8('x'))).rejects.toThrow(/unsafe/);
    });
  });
}

/**
 * Puts `key` behind the adapter's back, as another tool would (no key rules): a file in the local folder,
 * a PUT on the test's radosgw, the R2 binding. False for an adapter nothing else writes to (memory).
 */
async function plantRaw(store: ObjectStore, key: string, body: string): Promise<boolean> {
  if (store instanceof LocalStore) {
    const file = join(store.name.slice('local:'.length), ...key.split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, body);
    return true;
  }
  if (store instanceof S3Store) {
    const s3 = inject('s3');
    const raw = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    // The store's name is `s3:<bucket>/<prefix>`; conformance stores are on the run's radosgw.
    expect(store.name.startsWith(`s3:${s3.bucket}/`)).toBe(true);
    const storePrefix = store.name.slice(`s3:${s3.bucket}/`.length);
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: storePrefix + key, Body: body }));
    raw.destroy();
    return true;
  }
  if (store instanceof R2Store) {
    // The binding is private to the adapter; the test reaches it only to write what Satchel would refuse.
    await (store as unknown as { bucket: R2BucketLike }).bucket.put(key, utf8(body));
    return true;
  }
  return false;
}
