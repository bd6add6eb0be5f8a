import type { Message } from '../model/session.js';

/** odek's trim: keep the system message plus the newest messages, `keep` in all; drop orphaned tool results. */
export function trimMessages(messages: Message[], keep: number): Message[] {
  if (messages.length <= keep) return messages;
  const head = messages[0]?.role === 'system' ? 1 : 0;
  let start = Math.max(head, messages.length - (keep - head));
  while (start < messages.length && messages[start]!.role === 'tool') start++;
  return [...messages.slice(0, head), ...messages.slice(start)];
}
