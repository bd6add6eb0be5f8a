import { decodeStored } from '../model/codec.js';
import { keys } from '../model/keys.js';
import { randomHex } from '../model/ids.js';
import { encodeLease, leaseLeft, parseLease } from '../model/lease.js';
import { putNamed } from '../storage/create-only.js';
import type { ObjectStore } from '../storage/port.js';
import { listAll } from '../storage/prefix.js';
import { partsOf } from './cache.js';
import { staleAudit } from './audit.js';
import { incarnationOf } from './key-records.js';

/**
 * A large session's parts (docs/design.md, "Base, segments and delta"): the immutable objects under `b/<id>/` (its
 * bases and segments) that a delta at the session key names.
 */

/** A base nobody names is swept once it is this old: far longer than any write between base and commit. */
const PART_GRACE_MS = 15 * 60_000;

/** The time (ms, from the writer's clock) in a part's key. */
function partTime(ns: string, id: string, key: string): number {
  const prefix = keys.parts(ns, id);
  // 0 for a name with no time (not Satchel's): it goes as old, and keeps no stale marker for good.
  return Number(key.slice(prefix.length, prefix.length + 13)) || 0;
}

/**
 * Deletes the session's parts, sparing the ones its object names when this runs (read after the listing:
 * another writer may have committed on any listed part meanwhile) and, while an object exists, those
 * younger than PART_GRACE_MS and than its create (a write of it may have stored them for a commit still
 * on its way; a session created again under a deleted one's id sweeps the rest with its next fold).
 * Nothing is deleted when that object does not parse. True when it spared a part nothing names (a young one).
 *
 * With `records` (a delete, and a DELETE that finds no object: what an earlier delete left when its
 * erasing failed after the object went), the session's keyed and audit records and its continue lease
 * when nobody holds it any more (expired: a turn that crashed or outran it) too, but only while the
 * object is still absent after the listing (a session's audit and keyed records are stored only once it
 * has committed). When a session was created again under the id meanwhile, only its own records stay:
 * its packs, and audit records from its first revision on (review s63a: the deleted one's stayed, labels
 * and all, and its audit showed them).
 */
export async function deleteParts(
  objects: ObjectStore,
  ns: string,
  id: string,
  { records: withRecords = false, now = Date.now() } = {},
): Promise<boolean | void> {
  const prefixes = withRecords ? [keys.parts, keys.keyRecords, keys.audit] : [keys.parts];
  const lease = keys.lease(ns, id);
  const [leased, [parts, ...records]] = await Promise.all([
    withRecords ? objects.get(lease) : null,
    Promise.all(prefixes.map((p) => listAll(objects, p(ns, id)))),
  ]);
  const all = [...parts!, ...records.flat()];
  // A live lease is its turn's, still running: that turn releases it (and a continue of a session created
  // again under the id meanwhile waits for it, as for any turn). One nobody holds any more goes.
  const expired = leased && leaseLeft(leased, now) <= 0 ? leased : null;
  if (!all.length && !expired) return;
  const key = keys.session(ns, id);
  const found = await objects.get(key);
  if (!found) {
    if (all.length) await objects.delete(all);
    // Taken first, as a continue takes an expired lease (If-Match on the version read): a continue of a
    // session created again under the id that takes it over before that leaves it be, and one that comes
    // after waits for this delete's DELETE (a plain DELETE of the lease read could land after a takeover).
    if (expired && (await holdForDelete(objects, lease, expired.etag, now)))
      await objects.delete(lease);
    return;
  }
  let form: ReturnType<typeof decodeStored>;
  try {
    form = decodeStored(found.body, key);
  } catch {
    return;
  }
  const named = partsOf(form);
  // A write keys its parts after the `updated_at` it read, so after its session's create, and commits on
  // them within PART_GRACE_MS; a session deleted before this one was created stored its parts before.
  const before = Math.max(now - PART_GRACE_MS, Date.parse(form.session.created_at));
  const unnamed = parts!.filter((k) => !named.has(k));
  const gone = unnamed.filter((k) => partTime(ns, id, k) < before);
  const young = gone.length < unnamed.length;
  if (withRecords) {
    // The id was created again: the deleted session's keyed-record packs (named by its incarnation) and
    // audit records (below the new one's first revision, its create's) go; the new session's stay.
    const pack = `/p-${incarnationOf(form.session)}_`;
    const first = form.session.satchel?.writes.find((w) => w.a?.o === 'create')?.r['revision'];
    gone.push(
      ...records[0]!.filter((k) => !k.includes(pack)),
      ...(await staleAudit(objects, records[1]!, first as number | undefined)),
    );
  }
  if (gone.length) await objects.delete(gone);
  return young;
}

/** How long a delete holds an expired lease it is about to delete: far longer than its DELETE may take. */
const DELETE_HOLD_MS = 60_000;

/** Replaces an expired lease with one of the delete's own, unless it changed since read: true when held. */
function holdForDelete(
  objects: ObjectStore,
  key: string,
  etag: string,
  now: number,
): Promise<boolean> {
  const owner = `delete-${randomHex(8)}`;
  const mine = { owner, expiresAt: now + DELETE_HOLD_MS, ttlMs: DELETE_HOLD_MS };
  // Taken over meanwhile (412): its turn's now. A hold whose answer was lost is this delete's when the
  // lease read back names its owner (review s55d).
  return putNamed(
    objects,
    key,
    encodeLease(mine),
    { ifMatch: etag, contentType: 'application/json' },
    (stored) => parseLease(stored)?.owner === owner,
  );
}
