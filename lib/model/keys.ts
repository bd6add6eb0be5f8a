import { randomHex } from './ids.js';

/** Where things live in the bucket; docs/design.md describes the layout. */
export const keys = {
  namespace: (ns: string) => `ns/${ns}/`,
  sessions: (ns: string) => `ns/${ns}/sessions/`,
  session: (ns: string, id: string) => `ns/${ns}/sessions/${id}.json`,
  /** A large session's parts, its bases and segments (immutable, create-only; `<ms, 13 digits>-<random>.json`). */
  parts: (ns: string, id: string) => `ns/${ns}/b/${id}/`,
  part: (ns: string, id: string, at: number) =>
    `ns/${ns}/b/${id}/${pad(at, 13)}-${randomHex(6)}.json`,
  manifest: (ns: string) => `ns/${ns}/m/`,
  /** The manifest's sequenced roots (lib/storage/sequenced.ts names each `<seq>.json`). */
  manifestRoots: (ns: string) => `ns/${ns}/m/r/`,
  /** Pages carry a random part: two compactors racing for one seq must never overwrite each other's pages. */
  page: (ns: string, seq: number, i: number) =>
    `ns/${ns}/m/g/${pad(seq, 12)}-${randomHex(6)}-${i}.json`,
  // The entry's time may carry microseconds (`instantOf`): the name holds whole milliseconds.
  log: (ns: string, at: number, writeId: string) =>
    `ns/${ns}/m/l/${pad(Math.floor(at), 13)}-${writeId}.json`,
  pending: (ns: string, id: string, writeId: string) => `ns/${ns}/m/p/${id}/${writeId}`,
  /** A rebuild in slices (short-lived runtimes): the entries read so far, until the root is written. */
  manifestRebuild: (ns: string) => `ns/${ns}/m/s/rebuild.json`,
  audit: (ns: string, id: string) => `ns/${ns}/audit/${id}/`,
  /** Keyed write records stored out of the session object (`<key hash>.json`, create-only). */
  keyRecords: (ns: string, id: string) => `ns/${ns}/k/${id}/`,
  /** A bound above the revisions of the sessions deleted under an id (`RevisionFloors`), by a digest of the id. */
  revisionFloor: (ns: string, idHash: string) => `ns/${ns}/rev/${idHash}.json`,
  /** The session's continue lease: at most one model turn runs on a session at a time. */
  lease: (ns: string, id: string) => `ns/${ns}/lease/${id}.json`,
  /** Which session `continue` on `latest` chose for an Idempotency-Key (by its hash), so a repeat goes there too. */
  latestChoice: (ns: string, keyHash: string) => `ns/${ns}/continue/latest/${keyHash}.json`,
  /** One webhook delivery's marker: which session it went to, and whether it is done. */
  hookDelivery: (ns: string, hook: string, deliveryHash: string) =>
    `ns/${ns}/hooks/${hook}/${deliveryHash}.json`,
};

/** Where one log-structured search index lives: the lexical index, or the vectors of one embedding space. */
export const indexKeys = {
  /** Every search object of a namespace. */
  all: (ns: string) => `ns/${ns}/x/`,
  /** The lexical index. */
  lexical: (ns: string) => `ns/${ns}/x/`,
  /** The vector index of one embedding space (by the space's hash). */
  vectors: (ns: string, spaceHash: string) => `ns/${ns}/x/v/${spaceHash}/`,
  /** Which embedding space the stored vectors are in. */
  vectorsMeta: (ns: string) => `ns/${ns}/x/vectors_meta.json`,
  /** The record of one session version (`c` = created_at ms, `r` = revision). */
  record: (prefix: string, id: string, c: number, r: number, ext: string) =>
    `${prefix}d/${id}/${pad(c, 13)}-${r}${ext}`,
  /** A new segment's base key (each part adds its extension). */
  segment: (prefix: string, seq: number) => `${prefix}g/${pad(seq, 12)}-${randomHex(6)}`,
  /** The index's sequenced roots. */
  roots: (prefix: string) => `${prefix}r/`,
};

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
