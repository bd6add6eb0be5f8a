import { groupCount, groupEnd, isMarker, markerCount, markerText } from '../model/cap-marker.js';
import type { Message } from '../model/session.js';

/**
 * The size cap: the serialised session must stay within `maxBytes`. The protected head (the system
 * prompt, if first, and the first user message: `layout`) stays; after it, whole
 * groups are dropped oldest first (an assistant message with tool calls plus its tool results, or any other
 * single message); one system marker right after the head counts every group removed so far. When the
 * head fits but the head plus the marker does not, the head stays whole and the marker is left out (odek's
 * behaviour). If the head alone is too large, the first user message goes too (the system prompt and
 * `task` stay) and the other groups are fitted the same way behind the system prompt and the marker (the
 * marker first when there is no system prompt); when even they do not fit, the write is refused.
 */

export { isMarker, markerText };

/** UTF-8 bytes of a value's JSON serialisation. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value));
}

/** UTF-8 length of a string, without encoding it. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

export interface CapResult {
  messages: Message[];
  /** Groups dropped by this write (the first user message counts as one when it went). */
  dropped: number;
  /** True when the first user message had to go. */
  headCut: boolean;
  /** False when even the system prompt alone does not fit: no object under the cap keeps it. */
  fits: boolean;
}

/**
 * Fits `messages` so that the whole object serialises to at most `maxBytes`. `fixedBytes` is the size of
 * everything but the messages array (the caller knows it: header fields, refs, bookkeeping, and the
 * records it adds after the pipeline).
 */
export function capMessages(all: Message[], fixedBytes: number, maxBytes: number): CapResult {
  const allSizes = all.map(jsonBytes);
  const total = allSizes.reduce((a, b) => a + b, 0);
  if (fixedBytes + arrayBytes(all.length, total) <= maxBytes)
    return { messages: all, dropped: 0, headCut: false, fits: true };

  // The marker, wherever an earlier write put it (before 2026-12 one could land at 0, then a second one):
  // it goes, its count carries on, and one marker goes back right after the head.
  const previouslyDropped = all.reduce((n, m) => n + markerCount(m), 0);
  const messages = all.filter((m) => !isMarker(m));
  const sizes = allSizes.filter((_, i) => !isMarker(all[i]));
  const { head, groups } = layout(messages);
  const room = { messages, sizes, groups, fixedBytes, maxBytes };
  const whole = fitGroups(room, head, previouslyDropped);
  if (whole) return { ...whole, headCut: false, fits: true };
  // The head alone is too large: the first user message goes (a group, so the marker counts it) and the
  // rest is fitted as usual behind the system prompt, with the marker after it when that fits too (until
  // 2026-12-06 every other group went with it, though they fitted). When the system prompt alone does not
  // fit, nothing can be stored: `fits` is false (the contract keeps the system prompt and `task`).
  const system = messages[0]?.role === 'system' ? [0] : [];
  const userGone = groupCount(head.slice(system.length).map((i) => messages[i]!));
  const cut = fitGroups(room, system, previouslyDropped + userGone);
  const headCut = userGone > 0;
  if (cut) return { messages: cut.messages, dropped: cut.dropped + userGone, headCut, fits: true };
  const kept = system.map((i) => messages[i]!);
  return { messages: kept, dropped: groups.length + userGone, headCut, fits: false };
}

/**
 * The normal path: with `headAt` kept, drops `groups` oldest first until the rest fits together with one
 * marker after the head (counting `previouslyDropped` and this write's drops); when the head fits but the
 * head plus the marker does not, the head alone without the marker. Undefined when the head alone is over.
 */
function fitGroups(
  room: {
    messages: Message[];
    sizes: number[];
    groups: Group[];
    fixedBytes: number;
    maxBytes: number;
  },
  headAt: number[],
  previouslyDropped: number,
): { messages: Message[]; dropped: number } | undefined {
  const { messages, sizes, groups, fixedBytes, maxBytes } = room;
  const headBytes = headAt.reduce((a, i) => a + sizes[i]!, 0);
  // The marker goes right after the head's last message (the first user message, or the system prompt).
  const anchor = headAt.length ? headAt[headAt.length - 1]! : -1;
  let keptFrom = 0;
  let bodyBytes = groups.reduce((a, g) => a + g.bytes(sizes), 0);
  let bodyCount = groups.reduce((a, g) => a + g.length, 0);
  const fits = (markerBytes: number, extra: number) =>
    fixedBytes +
      arrayBytes(headAt.length + bodyCount + extra, headBytes + bodyBytes + markerBytes) <=
    maxBytes;
  while (keptFrom < groups.length) {
    const dropped = previouslyDropped + keptFrom;
    const mBytes = dropped > 0 ? jsonBytes(markerMessage(dropped)) : 0;
    if (fits(mBytes, dropped > 0 ? 1 : 0)) break;
    bodyBytes -= groups[keptFrom]!.bytes(sizes);
    bodyCount -= groups[keptFrom]!.length;
    keptFrom++;
  }
  const totalDropped = previouslyDropped + keptFrom;
  // What stays, in the session's order (messages kept between the system prompt and the first user message
  // stay before it), with the marker after the head.
  const keep = new Set(headAt);
  for (const g of groups.slice(keptFrom))
    for (let i = g.start; i < g.start + g.length; i++) keep.add(i);
  const inOrder = (marker?: Message) => {
    const out: Message[] = marker && anchor < 0 ? [marker] : [];
    messages.forEach((m, i) => {
      if (!keep.has(i)) return;
      out.push(m);
      if (marker && i === anchor) out.push(marker);
    });
    return out;
  };
  const marker = markerMessage(totalDropped);
  if (totalDropped > 0 && fits(jsonBytes(marker), 1))
    return { messages: inOrder(marker), dropped: keptFrom };
  // The marker would not fit: omit it.
  if (fits(0, 0)) return { messages: inOrder(), dropped: keptFrom };
  return undefined;
}

const arrayBytes = (count: number, total: number) => total + Math.max(0, count - 1) + 2; // commas, brackets

/**
 * The protected head, as indexes: the system prompt (if first) and the first user message, wherever it is
 * (after an assistant's greeting, a second system message or an agent's own tool rounds); and the groups
 * that may go, oldest first: those between the two, then those after the first user message (until
 * 2026-12-05 a first user message that did not come right after the system prompt was a group like any).
 */
function layout(messages: Message[]): { head: number[]; groups: Group[] } {
  const start = messages[0]?.role === 'system' ? 1 : 0;
  const user = messages.findIndex((m, i) => i >= start && m.role === 'user');
  const system = start ? [0] : [];
  if (user < 0) return { head: system, groups: groupsOf(messages, start) };
  // A group never runs over a user message (tool results follow their call), so none spans the two ranges.
  const between = groupsOf(messages.slice(0, user), start);
  return { head: [...system, user], groups: [...between, ...groupsOf(messages, user + 1)] };
}

interface Group {
  start: number;
  length: number;
  bytes(sizes: number[]): number;
}

/** Splits messages from `from` into groups: an assistant with tool calls plus its tool results, or one message. */
export function groupsOf(messages: Message[], from: number): Group[] {
  const groups: Group[] = [];
  let i = from;
  while (i < messages.length) {
    const end = groupEnd(messages, i);
    const start = i;
    const length = end - i;
    groups.push({
      start,
      length,
      bytes: (sizes) => sizes.slice(start, start + length).reduce((a, b) => a + b, 0),
    });
    i = end;
  }
  return groups;
}

function markerMessage(n: number): Message {
  return { role: 'system', content: markerText(n) };
}
