// Review s64c, finding 2: one data folder shared by processes in different pid namespaces (two containers on
// one volume, a rolling deploy). A pid from another namespace says nothing here (unseen, or someone else's:
// both containers run node as pid 1), yet the local store judged owners by pid alone: a starting process
// deleted another's in-flight temp file (its put failed with a raw ENOENT: a 500) and broke its live locks
// after 1 s (two writers could pass If-Match on one etag). Now an owner in another (or unknown) namespace is
// gone only when its heartbeat (the owner file's mtime, refreshed every few seconds) is older than a bound.
// The second process runs in a real pid namespace of its own (`unshare -p -f --mount-proc`, root on Linux).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalStore, type LocalStoreOptions } from '../../lib/storage/local.js';
import { StorageUnavailableError, text, utf8 } from '../../lib/storage/port.js';

const helper = fileURLToPath(new URL('./review-s64c-ns-process.ts', import.meta.url));
const KEY = 'ns/alice/sessions/s1.json';

/** Why a second pid namespace cannot be made here (unshare needs root on Linux), or null when it can. */
function noNamespace(): string | null {
  if (process.platform !== 'linux') return 'pid namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'unshare -p needs root';
  const probe = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true'], { stdio: 'ignore' });
  return probe.status === 0 ? null : 'unshare -p -f --mount-proc is not available';
}
const skipReason = noNamespace();

/** The helper in a pid namespace of its own; `lines` yields its stdout lines as they come. */
function inOwnNamespace(args: string[]) {
  const child = spawn(
    'unshare',
    [
      '-p',
      '-f',
      '--mount-proc',
      '--kill-child',
      process.execPath,
      '--import',
      'tsx',
      helper,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const w of waiters) if (stdout.includes(w.text)) w.resolve();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ text, resolve });
      if (stdout.includes(text)) resolve();
      void done.then(() => reject(new Error(`exited before printing ${text}: ${stderr}`)));
    });
  return { done, printed };
}

/** The last JSON line the helper printed. */
function report(out: { stdout: string; stderr: string }): Record<string, unknown> {
  const line = out.stdout.trim().split('\n').pop() ?? '';
  expect(line, out.stderr).toMatch(/^\{/);
  return JSON.parse(line) as Record<string, unknown>;
}

function lockOf(root: string, key: string): string {
  return join(root, '.locks', createHash('sha256').update(key).digest('hex').slice(0, 40));
}

/** Holds the key's lock in this process (through a second store, as a put holds it) until `release`. */
function holdLock(root: string, key: string): { held: Promise<void>; release: () => void } {
  const holder = new LocalStore(root) as unknown as {
    locked(k: string, fn: () => Promise<void>): Promise<void>;
  };
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let taken!: () => void;
  const held = new Promise<void>((r) => (taken = r));
  void holder.locked(key, async () => {
    taken();
    await gate;
  });
  return { held, release };
}

function tempFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.startsWith('.tmp-'))
    .map((e) => join(e.parentPath, e.name));
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skipReason !== null)(
  `local store shared across pid namespaces${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    it('a put from another pid namespace waits for a live lock instead of breaking it', async () => {
      const root = mkdtempSync(join(tmpdir(), 'satchel-s64c-lock-'));
      const { held, release } = holdLock(root, KEY);
      await held;
      const lock = lockOf(root, KEY);
      const ino = statSync(lock).ino;
      // staleLockMs 0: before, a lock whose owner looked gone was broken at once (the default waits 1 s).
      const options: LocalStoreOptions = { staleLockMs: 0, lockTimeoutMs: 1500 };
      const b = report(await inOwnNamespace(['put', root, KEY, JSON.stringify(options)]).done);
      const lockNow = existsSync(lock) ? statSync(lock).ino : null;
      release();
      // Before: {"ok":true,"ms":5}, and this process's lock file was gone.
      expect(b, JSON.stringify(b)).toMatchObject({ ok: false, name: 'StorageUnavailableError' });
      expect(lockNow).toBe(ino);
    }, 30_000);

    it('a lock holder in another pid namespace keeps its lock while it beats, then loses it', async () => {
      const root = mkdtempSync(join(tmpdir(), 'satchel-s64c-beat-'));
      const store = new LocalStore(root, {
        staleLockMs: 0,
        ownerTimeoutMs: 1000,
        lockTimeoutMs: 1500,
      });
      await store.swept;
      await store.put(KEY, utf8('v1'));
      const holder = inOwnNamespace([
        'hold',
        root,
        KEY,
        JSON.stringify({ heartbeatMs: 150 } satisfies LocalStoreOptions),
        '4000',
      ]);
      await holder.printed('held');
      await sleep(1200); // older than the owner timeout, and than staleLockMs
      const before = (await store.get(KEY))!.etag;
      const started = Date.now();
      const blocked = await store.put(KEY, utf8('v2'), { ifMatch: before }).then(
        () => 'written',
        (err: unknown) => err,
      );
      // Before: the holder is pid 1 in its namespace; this namespace's pid 1 started at another time, so the
      // lock was taken for a dead owner's and broken ('written').
      expect(StorageUnavailableError.is(blocked), String(blocked)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect((await holder.done).code).toBe(0);
      // It exited holding the lock: its heartbeat stops, and the lock is broken once it is 1 s old.
      await sleep(1100);
      await store.put(KEY, utf8('v3'), { ifMatch: before });
      expect(text((await store.get(KEY))!.body)).toBe('v3');
    }, 30_000);

    it("a store starting in another pid namespace leaves a live writer's temp file and owner file alone", async () => {
      const root = mkdtempSync(join(tmpdir(), 'satchel-s64c-sweep-'));
      const store = new LocalStore(root, { lockTimeoutMs: 30_000 });
      await store.swept;
      // The put stalls between its temp file and its rename (the key's lock is held), as a large body's does.
      const { held, release } = holdLock(root, KEY);
      await held;
      const put = store.put(KEY, utf8('in flight')).then(
        () => 'written',
        (err: unknown) => err,
      );
      await waitFor(() => tempFiles(root).length === 1, 'the temp file');
      const owners = readdirSync(join(root, '.locks')).filter((n) => n.startsWith('owner-'));
      const b = report(await inOwnNamespace(['sweep', root]).done);
      const left = tempFiles(root).length;
      const ownersLeft = readdirSync(join(root, '.locks')).filter((n) => n.startsWith('owner-'));
      release();
      // Before: {"tempFiles":1,...}, and the put failed with a raw ENOENT of its rename (a 500).
      expect(b).toMatchObject({ swept: { tempFiles: 0, locks: 0 } });
      expect(left).toBe(1);
      expect(ownersLeft.sort()).toEqual(owners.sort());
      expect(await put).toBe('written');
      expect(text((await store.get(KEY))!.body)).toBe('in flight');
    }, 30_000);
  },
);

describe('local store owners judged by namespace', () => {
  it('a put whose temp file vanished before its rename is StorageUnavailableError, and nothing lands', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-s64c-enoent-'));
    const store = new LocalStore(root, { lockTimeoutMs: 30_000 });
    await store.swept;
    const { held, release } = holdLock(root, KEY);
    await held;
    const put = store.put(KEY, utf8('lost')).catch((err: unknown) => err);
    await waitFor(() => tempFiles(root).length === 1, 'the temp file');
    unlinkSync(tempFiles(root)[0]!);
    release();
    const err = await put;
    // Before: the rename's raw ENOENT (answered 500).
    expect(StorageUnavailableError.is(err), String(err)).toBe(true);
    expect((err as StorageUnavailableError).mayHaveLanded).toBe(false);
    expect(await store.get(KEY)).toBeNull();
  });

  it('an owner of another namespace is judged by its heartbeat, not by a pid of this one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-s64c-judge-'));
    const locks = join(root, '.locks');
    mkdirSync(join(root, 'ns'), { recursive: true });
    mkdirSync(locks, { recursive: true });
    const store = new LocalStore(root, { staleLockMs: 0, lockTimeoutMs: 600 });
    await store.swept;
    // Tokens: 12 random hex digits, then another namespace's 16-digit tag.
    const a = 'aaaaaaaaaaaa' + 'f'.repeat(16);
    const b = 'bbbbbbbbbbbb' + 'f'.repeat(16);
    // A live owner there whose pid is dead here (its heartbeat is fresh): its lock is waited for.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(join(locks, `owner-${dead}-${a}`), `${dead} - ${a}\n`);
    linkSync(join(locks, `owner-${dead}-${a}`), lockOf(root, 'k'));
    const waited = await store.put('k', utf8('v1')).catch((err: unknown) => err);
    expect(StorageUnavailableError.is(waited), String(waited)).toBe(true);
    // Gone there (its heartbeat a minute old) while its pid is alive here (this very process): broken.
    unlinkSync(lockOf(root, 'k'));
    const own = process.pid;
    writeFileSync(join(locks, `owner-${own}-${b}`), `${own} - ${b}\n`);
    const minuteAgo = Date.now() / 1000 - 60;
    utimesSync(join(locks, `owner-${own}-${b}`), minuteAgo, minuteAgo);
    linkSync(join(locks, `owner-${own}-${b}`), lockOf(root, 'k'));
    await store.put('k', utf8('v2'));
    expect(text((await store.get('k'))!.body)).toBe('v2');
    // The sweep: the stale owner's file and temp file go, the fresh owner's stay.
    writeFileSync(join(root, 'ns', `.tmp-${own}-${b}-0011223344556677`), 'half');
    writeFileSync(join(root, 'ns', `.tmp-${dead}-${a}-8899aabbccddeeff`), 'in flight');
    utimesSync(join(root, 'ns', `.tmp-${own}-${b}-0011223344556677`), minuteAgo, minuteAgo);
    expect((await new LocalStore(root).swept).tempFiles).toBe(1);
    expect(tempFiles(root).map((f) => f.slice(root.length))).toEqual([
      `/ns/.tmp-${dead}-${a}-8899aabbccddeeff`,
    ]);
    const owners = readdirSync(locks).filter((n) => n.startsWith('owner-'));
    expect(owners).toContain(`owner-${dead}-${a}`);
    expect(owners).not.toContain(`owner-${own}-${b}`);
  });

  it('owner lines keep the form a Satchel from before namespaces reads: `<pid> <start> <hex>` (review s64h)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-s64h-owner-'));
    const store = new LocalStore(root);
    await store.put('k', utf8('v'));
    const owners = readdirSync(join(root, '.locks')).filter((n) => n.startsWith('owner-'));
    expect(owners).toHaveLength(1);
    const line = readFileSync(join(root, '.locks', owners[0]!), 'utf8');
    // The parser of 6eb994b: a line it cannot read made it take a live lock for no one's and break it after 1 s.
    expect(line).toMatch(/^(\d+) (\S+) [0-9a-f]+\n?$/);
    expect(line.split(' ')[2]!.trim()).toMatch(/^[0-9a-f]{28}$/);
  });

  it('a lock of the version that wrote a fourth field (97691c6) is waited for while its owner beats (review s64i)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'satchel-s64i-owner4-'));
    const locks = join(root, '.locks');
    mkdirSync(locks, { recursive: true });
    const store = new LocalStore(root, { staleLockMs: 0, lockTimeoutMs: 600 });
    await store.swept;
    const own = process.pid;
    writeFileSync(
      join(locks, `owner-${own}-cccccccccccc`),
      `${own} - cccccccccccc 4026531836@b00t\n`,
    );
    linkSync(join(locks, `owner-${own}-cccccccccccc`), lockOf(root, 'k'));
    // Before: read as no one's, and broken at once (staleLockMs 0).
    const waited = await store.put('k', utf8('v')).catch((err: unknown) => err);
    expect(StorageUnavailableError.is(waited), String(waited)).toBe(true);
  });
});
