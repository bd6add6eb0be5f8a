import {
  PreconditionFailedError,
  StorageUnavailableError,
  text,
  utf8,
  type ObjectStore,
} from '../storage/port.js';
import { sha256Hex } from '../model/digest.js';
import { keys } from '../model/keys.js';

/**
 * How far above the revision it read a delete puts the floor. Writes that land between the delete's read
 * and its DELETE are answered (their receipts carry their revisions) and then deleted with the session:
 * the floor must pass them too, and no read can tell how many there were (review s54a found 2 on
 * radosgw in every round of an agent appending while a user deleted).
 */
export const FLOOR_MARGIN = 1000;

/** A floor as read: its value (0 when there is none) and the object's etag, for a conditional raise. */
export interface Floor {
  value: number;
  etag?: string;
}

/**
 * A bound on the revisions the sessions deleted under an id reached: a session created again under the id
 * starts above it, so no tag of an earlier life (`If-Match`, `If-None-Match`) matches the new one
 * (docs/design.md, "Revisions across incarnations"). One small object per deleted id, named by a digest
 * of the namespace and id (the id itself is not kept: a delete leaves no text of the session), holding
 * only the number: `{"r": 1007}`. It only ever goes up.
 */
export class RevisionFloors {
  constructor(private readonly objects: ObjectStore) {}

  /** The floor for `id`: value 0 when no session under it was ever deleted (or the object is unreadable). */
  async read(ns: string, id: string): Promise<Floor> {
    return this.readKey(await this.key(ns, id));
  }

  /**
   * Raises the floor for `id` to at least `to`, never lowering it: a conditional PUT on the floor as read
   * (`seen`, else read now), read again when another delete raised it meanwhile.
   */
  async raise(ns: string, id: string, to: number, seen?: Floor): Promise<void> {
    const key = await this.key(ns, id);
    let floor = seen ?? (await this.readKey(key));
    for (let tries = 0; tries < 8; tries++) {
      if (floor.value >= to) return;
      const when = floor.etag ? { ifMatch: floor.etag } : { ifNoneMatch: '*' as const };
      try {
        await this.objects.put(key, utf8(JSON.stringify({ r: to })), when);
        return;
      } catch (err) {
        // Another delete raised it (or this PUT landed with its answer lost): read it again.
        if (!PreconditionFailedError.is(err)) throw err;
      }
      floor = await this.readKey(key);
    }
    throw new StorageUnavailableError('the revision floor kept changing under this delete');
  }

  private async readKey(key: string): Promise<Floor> {
    const found = await this.objects.get(key);
    if (!found) return { value: 0 };
    let r: unknown;
    try {
      r = (JSON.parse(text(found.body)) as { r?: unknown }).r;
    } catch {
      r = undefined;
    }
    const value = typeof r === 'number' && Number.isSafeInteger(r) && r > 0 ? r : 0;
    return { value, etag: found.etag };
  }

  private async key(ns: string, id: string): Promise<string> {
    return keys.revisionFloor(ns, (await sha256Hex(`${ns}\0${id}`)).slice(0, 32));
  }
}
