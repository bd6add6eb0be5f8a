import { groupEnd } from '../model/cap-marker.js';
import { groupsOf, jsonBytes } from '../pipeline/cap.js';
import type { Message } from '../model/session.js';
import { toChatMessage } from './model.js';

/**
 * What a model turn sees of its session: pure functions over the stored messages. The stored session is
 * never changed by them; only the request to the model is shaped.
 */

/**
 * Fits messages into `budgetBytes` (the sum of each message's JSON size as the model request carries it,
 * `toChatMessage`: reasoning, parts and unknown fields are not sent, so they are not counted): a leading
 * system message always stays, then the newest groups that fit, whole (an assistant message with tool
 * calls and its results is one group, never split). The newest group is kept even when it alone is
 * over the budget, since a request without the question is useless; the model then rejects it if it is
 * too large. Tool results whose call is not in front of them are left out: chat APIs refuse them. A tool
 * call with no result after it (an agent stopped mid call, a client's append of the call alone) gets one
 * that says so (`answerToolCalls`), counted in the budget: chat APIs refuse the call without it.
 */
export function fitContext(stored: Message[], budgetBytes: number): Message[] {
  const messages = answerToolCalls(stored);
  const head = messages[0]?.role === 'system' ? 1 : 0;
  const sent = (m: Message) => jsonBytes(toChatMessage(m));
  let used = head ? sent(messages[0]!) : 0;
  const sizes = messages.map(sent);
  const groups = groupsOf(messages, head).filter((g) => messages[g.start]!.role !== 'tool');
  let first = groups.length;
  for (let i = groups.length - 1; i >= 0; i--) {
    const bytes = groups[i]!.bytes(sizes);
    if (first < groups.length && used + bytes > budgetBytes) break;
    used += bytes;
    first = i;
  }
  return [
    ...messages.slice(0, head),
    ...groups.slice(first).flatMap((g) => messages.slice(g.start, g.start + g.length)),
  ];
}

/**
 * Moves this continue's own user message to the end when other writers stored messages after it (another
 * continue's turn that ran while this one waited for the lease), so the conversation the model sees ends
 * with the question it is to answer. `own` is matched by role and content, from the end; when it is not
 * found (redacted differently, or dropped by the size cap) the messages are returned as they are.
 */
export function ownMessageLast(
  messages: Message[],
  own: Pick<Message, 'role' | 'content'> | undefined,
): Message[] {
  if (!own) return messages;
  const at = messages.findLastIndex((m) => m.role === own.role && m.content === own.content);
  if (at < 0 || at === messages.length - 1) return messages;
  return [...messages.slice(0, at), ...messages.slice(at + 1), messages[at]!];
}

/** The result a tool call that has none in the session gets in the model request (never stored). */
export const NO_TOOL_RESULT = JSON.stringify({
  error: 'no result was recorded for this tool call',
});

/**
 * The messages with exactly one result for every tool call: of the results after an assistant message's
 * calls, only the first for each of its call ids is kept (one without an id, or naming an earlier
 * message's call, a late result, is left out), then one `NO_TOOL_RESULT` per call id with none.
 * OpenAI-compatible APIs refuse a request with a call not answered right after it, or a result that
 * answers no call in front of it (a continue of such a session was a 502 every time: reviews s52a,
 * s67c); the calls are kept, so the model still sees what was attempted.
 */
export function answerToolCalls(messages: Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length;) {
    const end = groupEnd(messages, i);
    const m = messages[i]!;
    out.push(m);
    const open = new Set(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []);
    for (const r of messages.slice(i + 1, end))
      if (r.tool_call_id !== undefined && open.delete(r.tool_call_id)) out.push(r);
    for (const id of open) out.push({ role: 'tool', content: NO_TOOL_RESULT, tool_call_id: id });
    i = end;
  }
  return out;
}
