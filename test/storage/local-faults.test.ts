// The local store's folder failures outside the calls first wrapped: the lock's hard link on a read-only
// disk (a delete), a stat of a listed file (EIO). Found by review, 2026-12-04 (they were raw errors: 500).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Fault injection: a filesystem that turned read-only (EROFS) refuses the lock's hard link; a disk
// with a bad sector answers EIO to a stat. Only paths under `faulty` fail, only while set.
const faults = vi.hoisted(() => ({
  link: null as null | string,
  stat: null as null | string,
  under: '',
}));
vi.mock('node:fs/promises', async (orig) => {
  const real = await orig<typeof import('node:fs/promises')>();
  const fail = (code: string) => Object.assign(new Error(`${code}: injected`), { code });
  return {
    ...real,
    link: (a: string, b: string) =>
      faults.link && String(b).startsWith(faults.under)
        ? Promise.reject(fail(faults.link))
        : real.link(a, b),
    stat: ((p: string, o?: unknown) =>
      faults.stat && String(p).startsWith(faults.under) && !String(p).includes('.locks')
        ? Promise.reject(fail(faults.stat))
        : real.stat(p, o as never)) as typeof real.stat,
  };
});

const { LocalStore } = await import('../../lib/storage/local.js');
const { StorageUnavailableError, utf8 } = await import('../../lib/storage/port.js');

afterEach(() => {
  faults.link = null;
  faults.stat = null;
});

describe('local folder failures outside the wrapped calls', () => {
  it('a delete whose lock link fails with EROFS is StorageUnavailableError (as a put is)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-rofs-'));
    const store = new LocalStore(dir);
    await store.put('a/b.json', utf8('{}'));
    faults.under = dir;
    faults.link = 'EROFS';
    const put = await store.put('a/c.json', utf8('{}')).catch((e: unknown) => e);
    expect(StorageUnavailableError.is(put)).toBe(true); // the put is wrapped
    const del = await store.delete('a/b.json').catch((e: unknown) => e);
    expect(StorageUnavailableError.is(del)).toBe(true); // the delete is not: raw EROFS (a 500 where it reaches HTTP)
  });

  it("list: a stat of a listed file that fails with EIO is StorageUnavailableError (the walk's is)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-eio-'));
    const store = new LocalStore(dir);
    await store.put('x/one.json', utf8('{}'));
    faults.under = join(dir, 'x', 'one.json');
    faults.stat = 'EIO';
    const err = await store.list('x/').catch((e: unknown) => e);
    expect(StorageUnavailableError.is(err)).toBe(true);
  });
});
