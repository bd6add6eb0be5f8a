import { randomHex } from './ids.js';

/** Where things live in the bucket; docs/design.md describes the layout. */
export const keys = {
  namespace: (ns: string) => `ns/${ns}/`,
  sessions: (ns: string) => `ns/${ns}/sessions/`,
  session: (ns: string, id: string) => `ns/${ns}/sessions/${id}.json`,
  manifest: (ns: string) => `ns/${ns}/m/`,
  root: (ns: string, seq: number) => `ns/${ns}/m/r/${String(seq).padStart(12, '0')}.json`,
  /** Pages carry a random part: two compactors racing for one seq must never overwrite each other's pages. */
  page: (ns: string, seq: number, i: number) => `ns/${ns}/m/g/${String(seq).padStart(12, '0')}-${randomHex(6)}-${i}.json`,
  log: (ns: string, at: number, writeId: string) => `ns/${ns}/m/l/${String(at).padStart(13, '0')}-${writeId}.json`,
  pending: (ns: string, id: string, writeId: string) => `ns/${ns}/m/p/${id}/${writeId}`,
  audit: (ns: string, id: string) => `ns/${ns}/audit/${id}/`,
  /** The session's continue lease: at most one model turn runs on a session at a time. */
  lease: (ns: string, id: string) => `ns/${ns}/lease/${id}.json`,
  /** Which session `continue` on `latest` chose for an Idempotency-Key (by its hash), so a repeat goes there too. */
  latestChoice: (ns: string, keyHash: string) => `ns/${ns}/continue/latest/${keyHash}.json`,
  /** One webhook delivery's marker: which session it went to, and whether it is done. */
  hookDelivery: (ns: string, hook: string, deliveryHash: string) => `ns/${ns}/hooks/${hook}/${deliveryHash}.json`,
};
