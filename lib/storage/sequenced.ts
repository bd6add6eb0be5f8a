import { listAll } from './prefix.js';
import { PreconditionFailedError, text, utf8, type ObjectStore } from './port.js';

/**
 * One protocol for every log-structured object (docs/design.md, "Sequenced roots"): the state in force is
 * the newest *root*, an immutable JSON object at `<prefix><seq, 12 digits>.json` written create-only, so
 * of two writers racing for one sequence number exactly one wins and the loser simply stops (its
 * unreferenced objects are collected later). Readers take the newest root; garbage collection keeps the
 * root before the one in force, since a reader may have just loaded it. The manifest and both search
 * indexes use it (as SlateDB's manifest and compaction stores share one sequenced-storage protocol).
 */
export interface SequencedRef {
  key: string;
  seq: number;
}

/** A root could not be read or parsed; the owner decides (the manifest and the indexes rebuild). */
export class CorruptRootError extends Error {
  constructor(
    readonly key: string,
    reason: string,
    /** The root is gone (a compactor collected it after a newer one landed): list again. */
    readonly vanished = false,
  ) {
    super(`root ${key}: ${reason}`);
    this.name = 'CorruptRootError';
  }
}

/** Zero-padded sequence number, so keys sort in sequence order. */
export function padSeq(seq: number): string {
  return String(seq).padStart(12, '0');
}

/** The sequence number at the start of a key's last segment (`<seq>.json`, `<seq>-<rand>…`), or 0. */
export function seqOfName(key: string): number {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return Number(name.slice(0, 12)) || 0;
}

export class SequencedRoots<T extends { seq: number }> {
  constructor(
    private readonly store: ObjectStore,
    /** The folder of the roots, ending in `/`. */
    readonly prefix: string,
    /** Checks a parsed root's shape; false makes it corrupt. */
    private readonly isRoot: (value: unknown) => value is T,
  ) {}

  /** The key of the root with sequence number `seq`. */
  keyOf(seq: number): string {
    return `${this.prefix}${padSeq(seq)}.json`;
  }

  /** The roots among already listed keys, oldest first (an owner that lists a wider prefix once). */
  rootsIn(listed: string[]): SequencedRef[] {
    const out: SequencedRef[] = [];
    for (const key of listed) {
      if (!key.startsWith(this.prefix) || !key.endsWith('.json')) continue;
      const seq = Number(key.slice(this.prefix.length, -'.json'.length));
      if (Number.isSafeInteger(seq)) out.push({ key, seq });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Lists the roots, oldest first. */
  async list(): Promise<SequencedRef[]> {
    return this.rootsIn(await listAll(this.store, this.prefix));
  }

  /** Reads one root; CorruptRootError when it is gone or not a root. */
  async read(key: string): Promise<T> {
    const found = await this.store.get(key);
    if (!found) throw new CorruptRootError(key, 'vanished', true);
    let value: unknown;
    try {
      value = JSON.parse(text(found.body));
    } catch {
      throw new CorruptRootError(key, 'not JSON');
    }
    if (!this.isRoot(value)) throw new CorruptRootError(key, 'not a root');
    return value;
  }

  /** Writes `root` create-only at its sequence number; false when another writer took that number. */
  async tryWrite(root: T): Promise<boolean> {
    const body = JSON.stringify(root);
    try {
      await this.store.put(this.keyOf(root.seq), utf8(body), { ifNoneMatch: '*' });
      return true;
    } catch (err) {
      if (!PreconditionFailedError.is(err)) throw err;
      // After a lost answer the root there may be our own: then this writer won.
      if (!err.afterLostAnswer) return false;
      const found = await this.store.get(this.keyOf(root.seq));
      return found !== null && text(found.body) === body;
    }
  }
}

/**
 * The roots that may be deleted once `inForce` is the newest: all older than the one before it, or all
 * older than `inForce` itself after a rebuild (which replaces everything before it).
 */
export function obsoleteRoots(
  roots: SequencedRef[],
  inForce: number,
  rebuilt = false,
): { drop: string[]; keep: SequencedRef[] } {
  const keepFrom = rebuilt ? inForce : inForce - 1;
  return {
    drop: roots.filter((r) => r.seq < keepFrom).map((r) => r.key),
    keep: roots.filter((r) => r.seq >= keepFrom),
  };
}
