import { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative, sep } from 'node:path';
import { assertSafeKey, PreconditionFailedError, type ListOptions, type ListPage, type ObjectStore, type PutOptions, type StoredObject } from './port.js';

const TEMP_MARK = '.tmp-';

/**
 * Local-folder adapter, the embedded default of the Node server.
 *
 * A write goes to a temp file in the target folder, is fsynced, then renamed over the key, so a crash
 * leaves either the old or the new object. The etag is derived from the file's inode, size and
 * nanosecond mtime (a rename always brings a new inode). Preconditions are checked and applied under
 * a per-key lock, which makes them hold for concurrent requests in this process; one process per folder.
 */
export class LocalStore implements ObjectStore {
  readonly name: string;
  private readonly locks = new Map<string, Promise<void>>();
  /**
   * Writes per key by this process. File times are coarse (a few ms) and inode numbers are reused, so
   * two quick same-size writes could repeat an etag made of stat fields alone; the count cannot repeat.
   */
  private readonly generations = new Map<string, number>();

  constructor(private readonly root: string) {
    this.name = `local:${root}`;
  }

  private path(key: string): string {
    assertSafeKey(key);
    return join(this.root, ...key.split('/'));
  }

  async get(key: string): Promise<StoredObject | null> {
    const path = this.path(key);
    // Read and stat under the lock so the etag belongs to the bytes returned.
    return this.locked(key, async () => {
      try {
        const [body, info] = await Promise.all([readFile(path), stat(path, { bigint: true })]);
        return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), etag: this.etagOf(key, info) };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    });
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const path = this.path(key);
    return this.locked(key, async () => {
      if (options.ifMatch !== undefined || options.ifNoneMatch !== undefined) {
        const current = await stat(path, { bigint: true }).catch((err) => (isNotFound(err) ? null : Promise.reject(err)));
        if (options.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
        if (options.ifMatch !== undefined && (!current || this.etagOf(key, current) !== options.ifMatch)) throw new PreconditionFailedError(key);
      }
      const temp = join(dirname(path), `${TEMP_MARK}${randomBytes(8).toString('hex')}`);
      let handle;
      for (let attempt = 0; ; attempt++) {
        await mkdir(dirname(path), { recursive: true });
        try {
          handle = await open(temp, 'w');
          break;
        } catch (err) {
          // A delete pruned the empty folder between mkdir and open: make it again.
          if (!isNotFound(err) || attempt >= 3) throw err;
        }
      }
      try {
        await handle.writeFile(body);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
      this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
      return { etag: this.etagOf(key, await stat(path, { bigint: true })) };
    });
  }

  async delete(keys: string | string[]): Promise<void> {
    for (const key of Array.isArray(keys) ? keys : [keys]) {
      const path = this.path(key);
      await this.locked(key, () => unlink(path).catch((err) => (isNotFound(err) ? undefined : Promise.reject(err))));
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
    const keys: string[] = [];
    await walk(folder ? join(this.root, ...folder.split('/')) : this.root, (file) => {
      const key = relative(this.root, file).split(sep).join('/');
      if (key.startsWith(prefix) && (!options.cursor || key > options.cursor)) keys.push(key);
    });
    keys.sort();
    const page: { key: string; size: number }[] = [];
    let i = 0;
    for (; i < keys.length && page.length < limit; i++) {
      const key = keys[i]!;
      // Deleted since the walk (a concurrent delete): simply not listed, as on S3.
      const info = await stat(join(this.root, ...key.split('/'))).catch((err: unknown) => (isNotFound(err) ? null : Promise.reject(err)));
      if (info) page.push({ key, size: Number(info.size) });
    }
    return { objects: page, ...(i < keys.length ? { cursor: page[page.length - 1]?.key ?? keys[i - 1]! } : {}) };
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

  private etagOf(key: string, info: { ino: bigint; size: bigint; mtimeNs: bigint }): string {
    return `${statTag(info)}-${(this.generations.get(key) ?? 0).toString(36)}`;
  }

  private async locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = previous.then(() => mine);
    this.locks.set(key, chained);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(key) === chained) this.locks.delete(key);
    }
  }
}

function statTag(info: { ino: bigint; size: bigint; mtimeNs: bigint }): string {
  return `${info.ino.toString(36)}-${info.size.toString(36)}-${info.mtimeNs.toString(36)}`;
}

function isNotFound(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function walk(dir: string, visit: (file: string) => void): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(TEMP_MARK)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await walk(full, visit);
    else if (entry.isFile()) visit(full);
  }
}
