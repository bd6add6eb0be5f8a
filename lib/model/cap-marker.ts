import type { Message } from './session.js';

/**
 * The system message the size cap leaves where it removed message groups (lib/pipeline/cap.ts), part of
 * the stored format: the import's matcher (lib/odek/match.ts) knows a capped session by it.
 */

// Older markers said "earlier message groups"; a create can drop its newest message, so the words no
// longer say which ones. Both forms are recognised.
const MARKER = new RegExp(
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

/** How many groups a marker says were removed (0 for any other message). */
export function markerCount(m: Message | undefined): number {
  const found = m && m.role === 'system' ? MARKER.exec(m.content) : null;
  return found ? Number(found[1]) : 0;
}

/**
 * Where the group that starts at `i` ends (exclusive): an assistant message with tool calls takes the tool
 * results after it; any other message is a group of its own. The cap removes whole groups.
 */
export function groupEnd(messages: readonly Message[], i: number): number {
  let end = i + 1;
  const m = messages[i]!;
  if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0)
    while (end < messages.length && messages[end]!.role === 'tool') end++;
  return end;
}

/** How many groups the cap counts in a run of messages. */
export function groupCount(messages: readonly Message[]): number {
  let n = 0;
  for (let i = 0; i < messages.length; i = groupEnd(messages, i)) n++;
  return n;
}
