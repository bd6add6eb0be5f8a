import type { ExternalRef, ExternalRefInput } from './session.js';

/**
 * Merges incoming external refs into the stored list: add-only, deduplicated on (kind, uri, created_by),
 * `created_at` stamped when absent.
 */
export function mergeExternalRefs(
  stored: ExternalRef[],
  incoming: ExternalRefInput[] | undefined,
  nowIso: string,
  defaultCreatedBy = 'api',
): ExternalRef[] {
  const out = stored.slice();
  // A set, not a scan of `out` per ref: 40,000 refs took 15-51 s, the event loop held (review s66m).
  const seen = new Set(out.map(refKey));
  for (const ref of incoming ?? []) {
    const createdBy = ref.created_by ?? defaultCreatedBy;
    const key = refKey({ kind: ref.kind, uri: ref.uri, created_by: createdBy });
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      kind: ref.kind,
      uri: ref.uri,
      created_by: createdBy,
      read_only: ref.read_only ?? false,
      created_at: ref.created_at ?? nowIso,
    });
  }
  return out;
}

/** What makes two refs the same ref: (kind, uri, created_by). */
export const refKey = (r: Pick<ExternalRef, 'kind' | 'uri' | 'created_by'>) =>
  JSON.stringify([r.kind, r.uri, r.created_by]);
