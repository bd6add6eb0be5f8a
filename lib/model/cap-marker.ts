import type { Message } from './session.js';

/**
 * The system message the size cap leaves where it removed message groups (lib/pipeline/cap.ts), part of
 * the stored format: the import's matcher (lib/odek/match.ts) knows a capped session by it.
 */

// Older markers said "earlier message groups"; a create can drop its newest message, so the words no
// longer say which ones. Both forms are recognised.
export const MARKER = new RegExp(
  String.raw`^\[satchel\] (\d+) (?:earlier )?message groups? (?:was|were) ` +
    String.raw`removed to keep this session under its size limit\.$`,
);

/** The marker text for `n` dropped groups. */
export function markerText(n: number): string {
  return (
    `[satchel] ${n} message ${n === 1 ? 'group was' : 'groups were'} ` +
    'removed to keep this session under its size limit.'
  );
}

/** True for Satchel's drop marker (a system message whose whole content is the marker text). */
export function isMarker(m: Message | undefined): boolean {
  return m !== undefined && m.role === 'system' && MARKER.test(m.content);
}
