import type { ExternalRef, ExternalRefInput } from './session.js';

/**
 * Merges incoming external refs into the stored list: add-only, deduplicated on (kind, uri, created_by),
 * `created_at` stamped when absent. `sameUri` lets the save pipeline treat a stored redacted uri as equal
 * to the raw one it came from.
 */
export function mergeExternalRefs(
  stored: ExternalRef[],
  incoming: ExternalRefInput[] | undefined,
  nowIso: string,
  defaultCreatedBy = 'api',
  sameUri: (storedUri: string, incomingUri: string) => boolean = (a, b) => a === b,
): ExternalRef[] {
  const out = stored.slice();
  for (const ref of incoming ?? []) {
    const createdBy = ref.created_by ?? defaultCreatedBy;
    const duplicate = out.some(
      (r) => r.kind === ref.kind && r.created_by === createdBy && sameUri(r.uri, ref.uri),
    );
    if (duplicate) continue;
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
