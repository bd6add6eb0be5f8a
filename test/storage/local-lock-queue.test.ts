// Before 2026-12-05 lockTimeoutMs did not bound a write's wait for a key's lock: the writes of one process
// to a key queued in memory without a limit, and each then waited a full lockTimeoutMs for the lock file,
// so with the lock held by a stuck process the n-th of n writes failed only after n x lockTimeoutMs. Now a
// write or delete has one deadline, lockTimeoutMs after it came in, for the queue and the lock file
// together; one that gives up in the queue leaves the others queued in order.
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

/** While `hold` is set, the next rename onto `hold.path` waits for `hold.opened`; `renamed`: the bodies. */
const gate = vi.hoisted(() => ({
  hold: null as null | { path: string; opened: Promise<void> },
  renamed: [] as string[],
}));
vi.mock('node:fs/promises', async (orig) => {
  const real = await orig<typeof import('node:fs/promises')>();
  return {
    ...real,
    rename: async (from: string, to: string) => {
      const hold = gate.hold;
      if (hold && String(to) === hold.path) {
        gate.hold = null;
        await hold.opened;
      }
      gate.renamed.push(await real.readFile(from, 'utf8'));
      await real.rename(from, to);
    },
  };
});

const { LocalStore } = await import('../../lib/storage/local.js');
const { StorageUnavailableError, text, utf8 } = await import('../../lib/storage/port.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Settles to how the call ended and when, in ms since `started`. */
function outcome(call: Promise<unknown>, started: number) {
  return call.then(
    () => ({ ok: true, unavailable: false, ms: Date.now() - started }),
    (err: unknown) => ({
      ok: false,
      unavailable: StorageUnavailableError.is(err),
      ms: Date.now() - started,
    }),
  );
}

describe('local store: lockTimeoutMs bounds the whole wait for a key', () => {
  it('writes queued behind a lock another live process holds all fail within about lockTimeoutMs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-lock-queue-'));
    const store = new LocalStore(root, { staleLockMs: 50, lockTimeoutMs: 1000 });
    await store.swept;
    await store.put('k', utf8('v1'));
    // Another owner's lock (this pid, so alive: never broken as stale).
    const locks = join(root, '.locks');
    mkdirSync(locks, { recursive: true });
    writeFileSync(join(locks, `owner-${process.pid}-beef`), `${process.pid} - beef\n`);
    const lockFile = join(locks, createHash('sha256').update('k').digest('hex').slice(0, 40));
    linkSync(join(locks, `owner-${process.pid}-beef`), lockFile);

    const started = Date.now();
    const calls = [
      ...Array.from({ length: 4 }, (_, i) => store.put('k', utf8(`v${i + 2}`))),
      store.delete('k'),
    ];
    const ended = await Promise.all(calls.map((c) => outcome(c, started)));
    expect(ended.every((e) => !e.ok && e.unavailable)).toBe(true);
    // Before: the n-th answered after n x 1,000 ms (5 s for the last). A wide margin for a loaded machine.
    expect(Math.max(...ended.map((e) => e.ms)), JSON.stringify(ended)).toBeLessThan(3000);
    expect(text((await store.get('k'))!.body)).toBe('v1');
  }, 15_000);

  it('a write that gives up in the queue leaves those behind it queued, in order', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-lock-queue-'));
    const store = new LocalStore(root, { lockTimeoutMs: 600 });
    await store.swept;
    const path = join(root, 'k');
    let open!: () => void;
    gate.hold = { path, opened: new Promise<void>((r) => (open = r)) };
    gate.renamed.length = 0;
    const started = Date.now();

    // A holds the key (its rename waits for the gate); B queues behind it and gives up at 600 ms.
    const a = outcome(store.put('k', utf8('A')), started);
    await sleep(20);
    const b = await outcome(store.put('k', utf8('B')), started);
    expect(b).toMatchObject({ ok: false, unavailable: true });
    expect(b.ms).toBeLessThan(1000);
    // C and D come after B gave up, while A still holds the key.
    const c = outcome(store.put('k', utf8('C')), started);
    await sleep(20);
    const d = outcome(store.put('k', utf8('D')), started);
    await sleep(50);
    expect(gate.renamed).toEqual([]);
    open();

    expect(await a).toMatchObject({ ok: true });
    expect(await c).toMatchObject({ ok: true });
    expect(await d).toMatchObject({ ok: true });
    // A first; C and D after it, each once (which of them enters the queue first depends on its temp
    // file's write, so their order is not fixed), and the key holds the last.
    expect(gate.renamed[0]).toBe('A');
    expect(gate.renamed.slice(1).sort()).toEqual(['C', 'D']);
    expect(text((await store.get('k'))!.body)).toBe(gate.renamed[2]);
    // The queue is empty again: a write goes through at once.
    await store.put('k', utf8('E'));
    expect(text((await store.get('k'))!.body)).toBe('E');
  }, 15_000);
});
