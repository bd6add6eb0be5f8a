import {
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants, readFileSync, readlinkSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import {
  assertSafeKey,
  compareKeys,
  DEFAULT_PING_DEADLINE_MS,
  isSafeKey,
  PreconditionFailedError,
  sortKeys,
  StorageUnavailableError,
  type ListOptions,
  type ListPage,
  type ObjectStore,
  type PutOptions,
  type StoragePing,
  type StoredObject,
  utf8Length,
} from './port.js';
import { probe } from './retry.js';
import { mapLimit } from './concurrency.js';
import '../model/bytes-node.js';

const TEMP_MARK = '.tmp-';
/** Open for reading without waiting for a writer (a FIFO); O_NONBLOCK is not on Windows, nor needed. */
const NONBLOCKING_READ = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0);
/** Lock files and owner files live in this folder at the root, out of every listing. */
const LOCK_DIR = '.locks';
const OWNER_MARK = 'owner-';
/** The longest file or folder name, in bytes, on common file systems (ext4, APFS, NTFS in UTF-16 units). */
const MAX_NAME_BYTES = 255;
/** How long a listing's rest is kept for its next page, and how many listings at most. */
const LISTING_TTL_MS = 5_000;
const MAX_LISTINGS = 16;
/** A listing that read more folders than this walks again for each page (checking them would cost as much). */
const MAX_LISTING_FOLDERS = 256;
/** A folder changed this recently (ms) before a walk may change again within its clock's tick, unseen. */
const MTIME_SETTLE_MS = 50;
/** A temp file whose name holds no pid is taken as left behind when older than this (ms). */
const UNNAMED_TEMP_MS = 5000;
/** How long (ms) one write of the ping stands for the pings after it. */
const PING_WRITE_MS = 1000;

/** A listing's keys (sorted), the folders its walk read with their mtimes (null: not kept), and when. */
interface Listing {
  keys: string[];
  folders: [string, bigint][] | null;
  at: number;
}

export interface LocalStoreOptions {
  /** Longest wait for a key's lock held by another process before StorageUnavailableError. Default 5000 ms. */
  lockTimeoutMs?: number;
  /** A lock is broken only when its owner process is gone and the lock is older than this. Default 1000 ms. */
  staleLockMs?: number;
  /**
   * Temp files (`.tmp-<pid>-<hex>`) are removed at start when their writer process is gone, and in any case
   * when older than this (a live process whose pid was reused). Default 1 hour.
   */
  maxTempAgeMs?: number;
  /** How often this process refreshes its owner file's mtime (its heartbeat). Default 5000 ms. */
  heartbeatMs?: number;
  /**
   * An owner in another pid namespace (another container on the same volume), or where namespaces are
   * unknown (off Linux), is gone only when its heartbeat is older than this. Default 30,000 ms.
   */
  ownerTimeoutMs?: number;
}

/**
 * Local-folder adapter, the embedded default of the Node server.
 *
 * A write goes to a temp file in the target folder, is fsynced, then renamed over the key, so a crash
 * leaves either the old or the new object. Reads open the file once and take the etag from that open
 * file, so the etag always belongs to the bytes returned.
 *
 * Several processes may share one folder (on one machine): every write and delete takes a per-key lock
 * file, `.locks/<sha256 of the key>`, around the check of its precondition and the rename, so If-Match and
 * If-None-Match hold across processes. A lock is a hard link (`link`, atomic, fails when it exists) to the
 * process's owner file, which names its pid, the process start time and its pid namespace; the process
 * touches it every `heartbeatMs` (an unref'd timer), and the lock shares its mtime. A lock whose owner is
 * gone and older than `staleLockMs` is broken, under a second `.break` lock so two processes never break
 * the same lock twice. An owner in this pid namespace is gone when its pid is absent or reused by a process
 * started later; one in another (a container beside this one on the same volume) or an unknown namespace,
 * whose pid says nothing here, when its heartbeat is older than `ownerTimeoutMs`. Within one process,
 * writers to a key queue in memory first, so the lock file is only contended between processes.
 *
 * The etag is the file's inode, size and nanosecond mtime. Under the lock every write gives the new file
 * an mtime later than the one it replaces, so an etag never repeats for a key even when inode numbers are
 * reused and file times are coarse, and every process computes the same etag for the same file.
 *
 * At start, temp files left by a crashed writer (`.tmp-<owner>-<hex>`: its owner gone, by the same rule)
 * and owner files of gone processes are removed in the background (`swept` resolves when done).
 */
export class LocalStore implements ObjectStore {
  readonly name: string;
  /** The start-up sweep of temp files and stale locks; never rejects. */
  readonly swept: Promise<{ tempFiles: number; locks: number }>;
  private readonly locks = new Map<string, Promise<void>>();
  private readonly lockDir: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly maxTempAgeMs: number;
  private readonly heartbeatMs: number;
  private readonly ownerTimeoutMs: number;
  private owner: Promise<string> | undefined;
  /** Whether a sweep after another process's crash runs (one at a time). */
  private sweeping = false;
  /** The last ping's write (writeProbe) and when it began. */
  private pinged: { at: number; done: Promise<void> } | undefined;
  /**
   * The rest of a listing's walk, sorted, by prefix and the cursor its page returned: the next page reads
   * it instead of walking the folder again (a listing of n keys walked it n/1000 times: 20,000 keys took
   * 2.4 s), unless a folder the walk read has changed since (its mtime, read before the walk read it):
   * a key created after page 1 is on a later page, as on S3 (review s62i). Keys deleted since are left
   * out by the page's stat. Used once, within LISTING_TTL_MS.
   */
  private readonly listings = new Map<string, Listing>();

  constructor(
    private readonly root: string,
    options: LocalStoreOptions = {},
  ) {
    this.name = `local:${root}`;
    this.lockDir = join(root, LOCK_DIR);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5000;
    this.staleLockMs = options.staleLockMs ?? 1000;
    this.maxTempAgeMs = options.maxTempAgeMs ?? 60 * 60 * 1000;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.ownerTimeoutMs = options.ownerTimeoutMs ?? 30_000;
    this.swept = this.sweep().catch(() => ({ tempFiles: 0, locks: 0 }));
  }

  private path(key: string): string {
    assertSafeKey(key);
    const segments = key.split('/');
    // A file or folder name is at most 255 bytes on common file systems: said here, without the path.
    if (segments.some((segment) => utf8Length(segment) > MAX_NAME_BYTES))
      throw new Error(
        `unsafe storage key for a local folder (a segment over 255 bytes): ${JSON.stringify(key)}`,
      );
    return join(this.root, ...segments);
  }

  async get(key: string): Promise<StoredObject | null> {
    const path = this.path(key);
    let handle;
    try {
      // Non-blocking: a FIFO at a key opened for reading waited for a writer, for ever, and four of them
      // held every thread of Node's file pool, every other read with them (review s68d). It is not a
      // regular file, so it holds no object; a regular file reads as ever.
      handle = await open(path, NONBLOCKING_READ);
    } catch (err) {
      if (await this.folderGone(err)) throw folderError('read', err);
      if (isNotFound(err) || (err as { code?: string }).code === 'EISDIR') return null;
      throw folderError('read', err);
    }
    try {
      // One open file: a concurrent rename replaces the name, never these bytes, so etag and body agree.
      const info = await handle.stat({ bigint: true });
      if (!info.isFile()) return null;
      const body = await handle.readFile();
      return {
        body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
        etag: statTag(info),
        // Written (its temporary file) after its put began, by this machine's clock.
        age: Date.now() - Number(info.mtimeNs / 1_000_000n),
      };
    } catch (err) {
      throw folderError('read', err);
    } finally {
      await handle.close();
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const path = this.path(key);
    // The slow part (writing and fsyncing the bytes) happens before the lock; only check and rename are under it.
    // The temp file names this process's owner file, whose heartbeat tells a sweep its writer is alive.
    const temp = await this.ownerFile()
      .then((owner) => this.writeTemp(path, body, owner))
      .catch((err: unknown) => {
        throw this.refused('write', err);
      });
    let renamed = false;
    try {
      const written = await this.locked(key, async () => {
        const current = await stat(path, { bigint: true }).catch((err) =>
          isNotFound(err) ? null : Promise.reject(err),
        );
        // A folder at the key (no Satchel key is another's folder) holds no object, as reads say, and none
        // can be stored there: 503 naming the code, never "exists" (review s66c).
        if (current?.isDirectory())
          throw new StorageUnavailableError('the local folder refused a write (EISDIR)');
        if (options.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
        if (options.ifMatch !== undefined && (!current || statTag(current) !== options.ifMatch))
          throw new PreconditionFailedError(key);
        if (current) await laterThan(temp.path, temp.mtimeNs, current.mtimeNs);
        await rename(temp.path, path);
        renamed = true;
        let info = await stat(path, { bigint: true });
        // Coarse file times (a filesystem with 1 s or 2 s resolution): push the mtime on until it is later.
        for (let step = 0; current && info.mtimeNs <= current.mtimeNs && step < 3; step++) {
          await laterThan(
            path,
            info.mtimeNs,
            current.mtimeNs,
            [1_000_000n, 1_000_000_000n, 2_000_000_000n][step]!,
          );
          info = await stat(path, { bigint: true });
        }
        return { etag: statTag(info) };
      });
      // The new name is durable once its folder is (after the lock: it only has to precede the answer).
      await syncDir(dirname(path));
      return written;
    } catch (err) {
      // Renamed: the object is in place, whatever failed after (the write is answered as maybe landed).
      if (renamed && !PreconditionFailedError.is(err))
        throw new StorageUnavailableError('the local folder failed after a write', err, {
          mayHaveLanded: true,
          noAnswer: false,
        });
      // The temp file vanished before its rename (removed by another process's sweep): nothing landed.
      if (!renamed && isNotFound(err))
        throw new StorageUnavailableError('the local folder lost a write before its rename', err);
      throw this.refused('write', err);
    } finally {
      if (!renamed) await unlink(temp.path).catch(() => undefined);
    }
  }

  /** The etag of the file at the key's path (what `get` would read), or null when there is none. */
  async head(key: string): Promise<{ etag: string } | null> {
    const info = await stat(this.path(key), { bigint: true }).catch(async (err) =>
      isNotFound(err) && !(await this.folderGone(err))
        ? null
        : Promise.reject(folderError('read', err)),
    );
    return info?.isFile() ? { etag: statTag(info) } : null;
  }

  /**
   * folderError for a write or delete; one the folder refused also drops the ping's last write, so the next
   * health check writes again and names the failure at once, not a success of the second before.
   */
  private refused(op: string, err: unknown): unknown {
    const mapped = folderError(op, err);
    if (mapped !== err) this.pinged = undefined;
    return mapped;
  }

  /**
   * ENOTDIR names a key under a file (not found), or a file where the data folder should be: the folder
   * is unusable then, and a read must not answer "no such session".
   */
  private async folderGone(err: unknown): Promise<boolean> {
    if ((err as { code?: string } | null)?.code !== 'ENOTDIR') return false;
    const info = await stat(this.root).catch(() => null);
    return !info?.isDirectory();
  }

  async delete(keys: string | string[]): Promise<void> {
    for (const key of Array.isArray(keys) ? keys : [keys]) {
      const path = this.path(key);
      const removed = await this.locked(key, () =>
        unlink(path).then(
          () => true,
          // A folder at the key is no object (get and head say so, as S3 does of a prefix): nothing to delete.
          (err) => (isNotFound(err) || err.code === 'EISDIR' ? false : Promise.reject(err)),
        ),
      ).catch((err: unknown) => {
        // The lock's own files too (a read-only disk refuses its hard link).
        throw this.refused('delete', err);
      });
      // A removed name is gone for good once its folder is synced (a missing key changed nothing).
      if (removed)
        await syncDir(dirname(path)).catch((err: unknown) => {
          throw this.refused('delete', err);
        });
      await this.prune(dirname(path));
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = Math.min(options.limit ?? 1000, 1000);
    // Walk only the deepest folder the prefix names, then filter by the prefix's last part. Names first:
    // only the page's own files are stat'ed for their sizes, so paging through a big folder stays cheap.
    const cut = prefix.lastIndexOf('/');
    const folder = cut >= 0 ? prefix.slice(0, cut) : '';
    if (folder) assertSafeKey(folder);
    const cursor = options.cursor;
    const listing =
      (await this.resumed(prefix, cursor)) ?? (await this.walkSorted(folder, prefix, cursor));
    const keys = listing.keys;
    const page: { key: string; size: number }[] = [];
    let i = 0;
    while (i < keys.length && page.length < limit) {
      const batch = keys.slice(i, i + limit - page.length);
      i += batch.length;
      // Deleted since the walk (a concurrent delete): simply not listed, as on S3.
      const sizes = await mapLimit(batch, 32, (key) =>
        stat(join(this.root, ...key.split('/'))).then(
          (info) => Number(info.size),
          (err: unknown) => (isNotFound(err) ? null : Promise.reject(folderError('list', err))),
        ),
      );
      batch.forEach((key, j) => sizes[j] !== null && page.push({ key, size: sizes[j]! }));
    }
    if (i >= keys.length) return { objects: page };
    const next = page[page.length - 1]?.key ?? keys[i - 1]!;
    if (listing.folders) this.keepListing(prefix, next, { ...listing, keys: keys.slice(i) });
    return { objects: page, cursor: next };
  }

  /**
   * The keys under `prefix` after `cursor`, sorted, from one walk of the prefix's deepest folder, with the
   * mtime of each folder read (none when one changed within MTIME_SETTLE_MS before: a file created later in
   * the same tick of a coarse clock would not change it; nor past MAX_LISTING_FOLDERS folders).
   */
  private async walkSorted(folder: string, prefix: string, cursor?: string): Promise<Listing> {
    const keys: string[] = [];
    const folders: [string, bigint][] = [];
    const at = Date.now();
    await walkAll(
      folder ? join(this.root, ...folder.split('/')) : this.root,
      this.lockDir,
      (file, name) => {
        if (name.startsWith('.')) return;
        const key = relative(this.root, file).split(sep).join('/');
        // Files no key can name (a backslash, a control character: not Satchel's) are left out, as on S3
        // and R2 (isSafeKey); before sorting and paging, so the cursor skips them too (review s60c).
        if (!key.startsWith(prefix) || !isSafeKey(key)) return;
        if (!cursor || compareKeys(key, cursor) > 0) keys.push(key);
      },
      folders,
    ).catch((err: unknown) => {
      throw folderError('list', err);
    });
    const settled = BigInt(at - MTIME_SETTLE_MS) * 1_000_000n;
    const kept = folders.length <= MAX_LISTING_FOLDERS && folders.every(([, m]) => m < settled);
    return { keys: sortKeys(keys), folders: kept ? folders : null, at };
  }

  /** The kept rest of a listing whose page answered `cursor`, while none of its folders has changed. */
  private async resumed(prefix: string, cursor: string | undefined): Promise<Listing | null> {
    if (cursor === undefined) return null;
    const name = `${prefix}\n${cursor}`;
    const kept = this.listings.get(name);
    if (!kept) return null;
    this.listings.delete(name);
    if (Date.now() - kept.at > LISTING_TTL_MS || !kept.folders) return null;
    const now = await mapLimit(kept.folders, 32, ([dir]) =>
      stat(dir, { bigint: true }).then(
        (info) => info.mtimeNs,
        () => -1n,
      ),
    );
    return kept.folders.every(([, m], i) => now[i] === m) ? kept : null;
  }

  private keepListing(prefix: string, cursor: string, listing: Listing): void {
    const now = Date.now();
    for (const [name, kept] of this.listings)
      if (now - kept.at > LISTING_TTL_MS || this.listings.size >= MAX_LISTINGS)
        this.listings.delete(name);
    this.listings.set(`${prefix}\n${cursor}`, listing);
  }

  /**
   * Checks that the folder exists (or can be made) and takes writes: the lock folder, made if missing, this
   * process's owner file, and a byte written to a new file there (a full or read-only disk refuses that).
   * The error names the failure class only, never the absolute path.
   */
  async ping(deadlineMs = DEFAULT_PING_DEADLINE_MS): Promise<StoragePing> {
    return probe(
      deadlineMs,
      async () => {
        await makeFolders(this.lockDir);
        await this.ownerFile();
        await this.writeProbe();
      },
      (err) => {
        const code = (err as { code?: string }).code ?? '';
        if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
          return { reason: 'denied', error: code };
        if (code === 'ENOENT' || code === 'ENOTDIR') return { reason: 'not-found', error: code };
        return { reason: 'error', error: /^[A-Z]{2,16}$/.test(code) ? code : 'error' };
      },
    );
  }

  /**
   * Writes one byte to a new file in the lock folder and removes it: the folders and the owner file exist
   * once made, so only a write tells a disk that filled or turned read-only since. One write stands for the
   * pings of the next PING_WRITE_MS (health needs no token: a flood of it writes once a second).
   */
  private writeProbe(): Promise<void> {
    const now = Date.now();
    if (this.pinged && now - this.pinged.at < PING_WRITE_MS) return this.pinged.done;
    // Left behind by a crash in between, it is swept as a stale lock (it names no owner).
    const file = join(this.lockDir, `.ping-${process.pid}-${randomBytes(6).toString('hex')}`);
    const done = writeFile(file, 'p', { flag: 'wx' }).then(
      () =>
        unlink(file).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err))),
      async (err: unknown) => {
        await unlink(file).catch(() => undefined);
        throw err;
      },
    );
    done.catch(() => undefined);
    this.pinged = { at: now, done };
    return done;
  }

  /**
   * Removes what crashed processes left: temp files whose writer is gone (or older than maxTempAgeMs),
   * owner files of gone processes, and locks whose owner is gone. Runs at start; safe at any time.
   */
  async sweep(): Promise<{ tempFiles: number; locks: number }> {
    const tempFiles = await this.sweepTemps();
    let locks = 0;
    let names: string[] = [];
    try {
      names = await readdir(this.lockDir);
    } catch {
      return { tempFiles, locks };
    }
    for (const name of names) {
      const file = join(this.lockDir, name);
      if (name.startsWith(OWNER_MARK)) {
        if ((await this.holderAlive(file)) === false) await unlink(file).catch(() => undefined);
      } else if (name.endsWith('.break')) {
        const info = await stat(file).catch(() => null);
        if (info && Date.now() - info.ctimeMs > this.staleLockMs && !(await this.holderAlive(file)))
          await unlink(file).catch(() => undefined);
      } else if (await this.breakIfStale(file)) {
        locks++;
      }
    }
    return { tempFiles, locks };
  }

  /** Removes temp files whose writer is gone, or older than maxTempAgeMs; returns how many. */
  private async sweepTemps(): Promise<number> {
    let removed = 0;
    const temps: string[] = [];
    await walkAll(this.root, this.lockDir, (file, name) => {
      if (name.startsWith(TEMP_MARK)) temps.push(file);
    });
    for (const file of temps) {
      const info = await stat(file).catch(() => null);
      if (!info) continue;
      const age = Date.now() - info.mtimeMs;
      const name = file.slice(file.lastIndexOf(sep) + 1);
      if (age > this.maxTempAgeMs || !(await this.writerAlive(name, age)))
        await unlink(file).then(
          () => removed++,
          () => undefined,
        );
    }
    return removed;
  }

  /**
   * Whether the writer of a temp file `age` ms old may still rename it: its owner (`.tmp-<pid>-<token>-…`
   * names `owner-<pid>-<token>`) is alive. An owner file that is gone (a wiped lock folder) leaves the temp
   * file for ownerTimeoutMs. Names without a token (written before, by pid) are judged by pid, as then.
   */
  private async writerAlive(name: string, age: number): Promise<boolean> {
    const m = /^\.tmp-(\d+)-(?:([0-9a-f]{28}|[0-9a-f]{12})-)?[0-9a-f]+$/.exec(name);
    const pid = Number(m?.[1]);
    if (!m || !(pid > 0)) return age <= UNNAMED_TEMP_MS;
    if (m[2] === undefined) return pidAlive(pid);
    const alive = await this.holderAlive(join(this.lockDir, `${OWNER_MARK}${pid}-${m[2]}`));
    return alive ?? age <= this.ownerTimeoutMs;
  }

  /**
   * Whether the owner named in `file` (an owner file, or a lock or break lock linked to one: the same
   * inode, so its mtime is the owner's heartbeat) is alive; null when the file is gone or names no owner.
   */
  private async holderAlive(file: string): Promise<boolean | null> {
    const info = await stat(file).catch(() => null);
    const owner = info && parseOwner(await readFile(file, 'utf8').catch(() => ''));
    return owner ? ownerAlive(owner, Date.now() - info!.mtimeMs, this.ownerTimeoutMs) : null;
  }

  /** Removes empty folders left by deletes (up to the root): listing walks folders, so they would cost. */
  private async prune(dir: string): Promise<void> {
    while (dir.length > this.root.length && dir.startsWith(this.root)) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty (or already gone): stop
      }
      dir = dirname(dir);
    }
  }

  /**
   * Writes and fsyncs the body to `.tmp-<pid>-<owner token>-<hex>` beside the key (named after the owner
   * file `owner`); returns its path and mtime.
   */
  private async writeTemp(
    path: string,
    body: Uint8Array,
    owner: string,
  ): Promise<{ path: string; mtimeNs: bigint }> {
    const id = owner.slice(owner.lastIndexOf(sep) + 1 + OWNER_MARK.length);
    const temp = join(dirname(path), `${TEMP_MARK}${id}-${randomBytes(8).toString('hex')}`);
    let handle;
    // The highest folder mkdir made (of any attempt): it and those below it are new names to make durable.
    let made: string | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        const first = await makeFolders(dirname(path));
        if (first !== undefined && (made === undefined || first.length < made.length)) made = first;
        handle = await open(temp, 'wx');
        break;
      } catch (err) {
        // A delete pruned an empty folder between mkdir and open, or a parent while mkdir made its
        // children (mkdir then fails with ENOENT too): make them again.
        if (!isNotFound(err) || attempt >= 3) throw err;
      }
    }
    try {
      await handle.writeFile(body);
      await handle.sync();
      if (made !== undefined) await syncCreated(made, dirname(path));
      const info = await handle.stat({ bigint: true });
      return { path: temp, mtimeNs: info.mtimeNs };
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    } finally {
      await handle.close();
    }
  }

  /**
   * In-process queue per key, then the cross-process lock file around `fn`. Both waits together end at
   * one deadline, lockTimeoutMs after the call came in: then StorageUnavailableError. A call that gives
   * up in the queue leaves its place to those behind it, who still wait for those ahead of it.
   */
  private async locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.lockTimeoutMs;
    const previous = this.locks.get(key);
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = (previous ?? Promise.resolve()).then(() => mine);
    this.locks.set(key, chained);
    try {
      if (previous && !(await until(previous, deadline)))
        throw new StorageUnavailableError(
          `writes of this process to ${key} waited for more than ${this.lockTimeoutMs} ms`,
        );
      const lockFile = await this.acquire(key, deadline);
      try {
        return await fn();
      } finally {
        await unlink(lockFile).catch(() => undefined);
      }
    } finally {
      release();
      // Once those ahead are done too (at once unless this call gave up in the queue).
      void chained.then(() => {
        if (this.locks.get(key) === chained) this.locks.delete(key);
      });
    }
  }

  /**
   * Takes the key's lock file: a hard link to this process's owner file. Returns the lock's path. Held by
   * another process past `deadline`: StorageUnavailableError.
   */
  private async acquire(key: string, deadline: number): Promise<string> {
    const lockFile = join(
      this.lockDir,
      createHash('sha256').update(key).digest('hex').slice(0, 40),
    );
    let wait = 1;
    for (;;) {
      const owner = await this.ownerFile();
      let missing = false;
      try {
        await link(owner, lockFile);
        return lockFile;
      } catch (err) {
        const code = (err as { code?: string }).code;
        // The lock folder or our owner file was removed (a wiped data folder): make them again.
        if (code === 'ENOENT') missing = true;
        else if (code !== 'EEXIST') throw err;
      }
      if (missing) this.owner = undefined;
      else if (await this.breakIfStale(lockFile)) continue;
      if (Date.now() >= deadline) {
        const holder = parseOwner(await readFile(lockFile, 'utf8').catch(() => ''));
        throw new StorageUnavailableError(
          `the lock of ${key} is held by ${holder ? `process ${holder.pid}` : 'another process'} ` +
            `for more than ${this.lockTimeoutMs} ms`,
        );
      }
      const pause = Math.min(wait * (0.5 + Math.random()), deadline - Date.now());
      await new Promise((r) => setTimeout(r, pause));
      wait = Math.min(wait * 2, 20);
    }
  }

  /**
   * Breaks a lock whose owner process is gone and which is older than staleLockMs; true when it did (or
   * the lock was gone already). The check and the unlink run under `<lock>.break`, so that two processes
   * that both saw the same stale lock cannot remove a fresh lock taken in between.
   */
  private async breakIfStale(lockFile: string): Promise<boolean> {
    const seen = await stat(lockFile).catch(() => null);
    if (!seen) return true;
    // link() sets the ctime, so the lock was taken before it (the owner's heartbeat moves it on, as its mtime).
    if (Date.now() - seen.ctimeMs < this.staleLockMs) return false;
    if (await this.holderAlive(lockFile)) return false;
    const breakFile = `${lockFile}.break`;
    try {
      await link(await this.ownerFile(), breakFile);
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') return false;
      // A breaker that died mid-break (a window of microseconds) leaves its break lock: clear it.
      const breaker = await stat(breakFile).catch(() => null);
      if (
        breaker &&
        Date.now() - breaker.ctimeMs > this.staleLockMs &&
        !(await this.holderAlive(breakFile))
      ) {
        await unlink(breakFile).catch(() => undefined);
      }
      return false;
    }
    try {
      const now = await stat(lockFile).catch(() => null);
      if (!now) return true;
      // Taken again meanwhile (by a live process: its own owner file, another inode). All locks of one
      // owner share its owner file's inode, so the inode alone says whose lock this is.
      if (now.ino !== seen.ino) return false;
      await unlink(lockFile).catch(() => undefined);
      return true;
    } finally {
      await unlink(breakFile).catch(() => undefined);
    }
  }

  /**
   * This process's owner file, `.locks/owner-<pid>-<hex>`, holding `<pid> <start time> <hex>` (the hex ending
   * with its pid namespace's tag), its heartbeat started.
   */
  private ownerFile(): Promise<string> {
    this.owner ??= (async () => {
      await makeFolders(this.lockDir);
      // Random, then the pid namespace's tag: the line stays `<pid> <start> <hex>`, which a Satchel from before
      // namespaces reads too (a fourth field made it take live locks for no one's and break them, review s64h).
      const token = randomBytes(6).toString('hex') + pidNamespace();
      const file = join(this.lockDir, `${OWNER_MARK}${process.pid}-${token}`);
      const start = startTimeOf(process.pid) ?? '-';
      await writeFile(file, `${process.pid} ${start} ${token}\n`, { flag: 'wx' });
      this.beat(file);
      return file;
    })().catch((err: unknown) => {
      this.owner = undefined;
      throw err;
    });
    return this.owner;
  }

  /**
   * Touches the owner file every heartbeatMs: processes in other pid namespaces, which cannot see our pid,
   * take us for alive while it is fresh. An unref'd timer (it never keeps the process up); it stops once the
   * file is gone (a wiped folder, or taken for gone), and the next lock makes a new owner file.
   */
  private beat(file: string): void {
    const timer = setInterval(() => {
      const now = Date.now() / 1000;
      utimes(file, now, now).catch((err: unknown) => {
        if (!isNotFound(err)) return;
        clearInterval(timer);
        const owner = this.owner;
        void owner?.then((current) => {
          if (current === file && this.owner === owner) this.owner = undefined;
        });
      });
      void this.sweepAfterCrash(file);
    }, this.heartbeatMs);
    timer.unref();
  }

  /**
   * A sweep, on a heartbeat, once another process's owner file says it is gone: the temp files it left
   * hold the bytes of the writes it crashed in (a session's text, which a DELETE does not erase), and a
   * sweep at start alone left them for as long as this process ran (a peer killed beside it; a container
   * restarted within ownerTimeoutMs of its crash, its dead owner still taken for alive), review s68d.
   */
  private async sweepAfterCrash(own: string): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const name of await readdir(this.lockDir).catch(() => [])) {
        const file = join(this.lockDir, name);
        if (name.startsWith(OWNER_MARK) && file !== own && (await this.holderAlive(file)) === false)
          return void (await this.sweep());
      }
    } catch {
      // The next heartbeat looks again.
    } finally {
      this.sweeping = false;
    }
  }
}

/** Whether `ahead` settles before `deadline` (a time in ms since the epoch). */
async function until(ahead: Promise<void>, deadline: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(r, deadline - Date.now(), false)));
  try {
    return await Promise.race([ahead.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Makes a folder's entries durable (a rename, a new file or folder, an unlink in it): fsync of the folder
 * itself. A folder that is gone has nothing left to keep; a platform that cannot open or fsync a folder
 * (Windows) is not asked.
 */
async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * After `mkdir -p` made `top` and the folders below it down to `leaf`: fsyncs the parent of each (the
 * leaf's own entries are synced by the write that follows).
 */
async function syncCreated(top: string, leaf: string): Promise<void> {
  for (let dir = leaf; dir.length > top.length; dir = dirname(dir)) await syncDir(dirname(dir));
  await syncDir(dirname(top));
}

/** The etag: inode, size and nanosecond mtime, in base 36. */
function statTag(info: { ino: bigint; size: bigint; mtimeNs: bigint }): string {
  return `${info.ino.toString(36)}-${info.size.toString(36)}-${info.mtimeNs.toString(36)}`;
}

/** Sets the file's mtime after `previousNs` (by at least `stepNs`) unless it already is. */
async function laterThan(
  file: string,
  mtimeNs: bigint,
  previousNs: bigint,
  stepNs = 10_000n,
): Promise<void> {
  if (mtimeNs > previousNs) return;
  // Whole microseconds as a number of seconds: a double holds them to ~0.25 µs, far below the 10 µs step.
  const targetUs = (previousNs + stepNs) / 1000n + 1n;
  const seconds = Number(targetUs) / 1e6;
  await utimes(file, Date.now() / 1000, seconds);
}

interface Owner {
  pid: number;
  start: string;
  /** Its pid namespace's tag (pidNamespace); undefined in owner files written before namespaces were recorded. */
  ns?: string;
}

/** `<pid> <start> <token>`: a token of 28 hex digits ends with the namespace's tag (12 before them). */
function parseOwner(content: string): Owner | null {
  // A fourth field: a namespace as the version of 97691c6 wrote it, judged by its heartbeat (review s64i).
  const m = /^(\d+) (\S+) ([0-9a-f]+)(?: (\S+))?\n?$/.exec(content);
  if (!m) return null;
  const ns = m[4] ?? (m[3]!.length === 28 ? m[3]!.slice(12) : undefined);
  return { pid: Number(m[1]), start: m[2]!, ...(ns ? { ns } : {}) };
}

/**
 * Whether the owner is still there. In this pid namespace: its pid is alive and is the process that wrote
 * the owner file (not a later process given its pid). In another or an unknown one its pid says nothing
 * (unseen here, or another process's): its heartbeat is younger than `timeoutMs`. Owner files written
 * before namespaces were recorded are judged by pid, as then.
 */
function ownerAlive(owner: Owner, heartbeatAgeMs: number, timeoutMs: number): boolean {
  const here = pidNamespace();
  if (owner.ns !== undefined && (owner.ns !== here || here === UNKNOWN_NAMESPACE))
    return heartbeatAgeMs < timeoutMs;
  if (!pidAlive(owner.pid)) return false;
  if (owner.start === '-') return true;
  const start = startTimeOf(owner.pid);
  return start === undefined || start === owner.start;
}

let namespace: string | undefined;
/** The tag of a namespace that cannot be told (a /proc that is not this namespace's). */
const UNKNOWN_NAMESPACE = '0'.repeat(16);

/**
 * A tag of this process's pid namespace, 16 hex digits of the SHA-256 of `<inode>@<boot id>`; off Linux,
 * of the platform's name (no namespaces there); UNKNOWN_NAMESPACE where it cannot be told. The boot id
 * tells machines and boots apart: the first namespace's inode is the same on every Linux.
 */
function pidNamespace(): string {
  namespace ??= namespaceTag();
  return namespace;
}

function namespaceTag(): string {
  const tag = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 16);
  // Only Linux has pid namespaces: elsewhere (macOS, Windows) a pid names one process machine-wide.
  if (process.platform !== 'linux') return tag(process.platform);
  try {
    const inode = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const ours = readlinkSync('/proc/self') === String(process.pid);
    return inode && ours && /^[0-9a-f-]{8,64}$/.test(boot)
      ? tag(`${inode}@${boot}`)
      : UNKNOWN_NAMESPACE;
  } catch {
    return UNKNOWN_NAMESPACE;
  }
}

function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** The process start time (field 22 of /proc/<pid>/stat, in clock ticks since boot); undefined off Linux. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * Failures of the folder itself (no permission, a read-only or full disk, a file where a folder should be
 * or a folder where a key's file should be, an I/O error, out of file handles): storage that does not
 * answer (503, as the start-up check says), not a bug (500). The message names the operation and the code,
 * never the path.
 */
const FOLDER_FAILURES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EISDIR',
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EMFILE',
  'ENFILE',
  'EBUSY',
]);

function folderError(op: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !FOLDER_FAILURES.has(code)) return err;
  return new StorageUnavailableError(`the local folder refused a ${op} (${code})`, err);
}

/**
 * `mkdir -p` that says why a folder cannot be made; returns the highest folder it made, as mkdir does.
 * Node's recursive mkdir answers ENOENT to EROFS (it stats the path after a code it does not handle): then
 * the folders are made one level at a time, whose plain mkdir names the real code (review s65g). ENOENT
 * still means what it did: a parent went away meanwhile (a delete pruned it), and the caller tries again.
 * An ENOTDIR (a file in a parent's place) comes back from the first plain mkdir as it was.
 */
async function makeFolders(dir: string): Promise<string | undefined> {
  try {
    return await mkdir(dir, { recursive: true });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  // Up to the deepest folder that exists (or that a plain mkdir makes), then down again.
  const missing: string[] = [];
  let made: string | undefined;
  for (let at = dir; ; at = dirname(at)) {
    const code = await mkdir(at).then(
      () => null,
      (err: { code?: string }) => {
        if (err.code === 'EEXIST') return err.code;
        if (err.code !== 'ENOENT' || dirname(at) === at) throw err;
        return err.code;
      },
    );
    if (code !== 'ENOENT') {
      if (code === null) made = at;
      break;
    }
    missing.push(at);
  }
  for (const at of missing.reverse())
    await mkdir(at).then(
      () => void (made ??= at),
      (err: { code?: string }) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)),
    );
  return made;
}

function isNotFound(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function walkAll(
  dir: string,
  lockDir: string,
  visit: (file: string, name: string) => void,
  folders?: [string, bigint][],
): Promise<void> {
  let entries;
  try {
    // Its mtime before its names: a file created after the names were read changes it.
    if (folders) folders.push([dir, (await stat(dir, { bigint: true })).mtimeNs]);
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (full === lockDir) continue;
    // Temp files are written in a key's own folder, and no key's folder starts with `.`.
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.')) await walkAll(full, lockDir, visit, folders);
    } else if (entry.isFile()) visit(full, entry.name);
  }
}
