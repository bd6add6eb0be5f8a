import { text, utf8, type ObjectStore } from '../storage/port.js';
import { sha256Hex } from '../model/digest.js';
import { keys } from '../model/keys.js';

/**
 * The highest revision any session deleted under an id reached: a session created again under the id
 * starts above it, so no tag of an earlier life (`If-Match`, `If-None-Match`) matches the new one
 * (docs/design.md, "Revisions across incarnations"). One small object per deleted id, named by a digest of
 * the namespace and id (the id itself is not kept: a delete leaves no text of the session), holding only
 * the number: `{"r": 7}`.
 */
export class RevisionFloors {
  constructor(private readonly objects: ObjectStore) {}

  /** The floor for `id` (0 when no session under it was ever deleted, or the object is unreadable). */
  async read(ns: string, id: string): Promise<number> {
    const found = await this.objects.get(await this.key(ns, id));
    if (!found) return 0;
    try {
      const r = (JSON.parse(text(found.body)) as { r?: unknown }).r;
      return typeof r === 'number' && Number.isSafeInteger(r) && r > 0 ? r : 0;
    } catch {
      return 0;
    }
  }

  /** Raises the floor for `id` to `revision` (an unconditional PUT: the caller passes the max it knows). */
  async raise(ns: string, id: string, revision: number): Promise<void> {
    await this.objects.put(await this.key(ns, id), utf8(JSON.stringify({ r: revision })));
  }

  private async key(ns: string, id: string): Promise<string> {
    return keys.revisionFloor(ns, (await sha256Hex(`${ns}\0${id}`)).slice(0, 32));
  }
}
