// Message builders for the size cap's tests (test/pipeline/cap*.test.ts).
import { jsonBytes } from '../../lib/pipeline/cap.js';
import type { Message } from '../../lib/model/session.js';

export const user = (c: string): Message => ({ role: 'user', content: c });

/** An assistant message, with tool calls of these ids. */
export const asst = (c: string, calls: string[] = []): Message => ({
  role: 'assistant',
  content: c,
  ...(calls.length
    ? {
        tool_calls: calls.map((id) => ({
          id,
          type: 'function',
          function: { name: 'f', arguments: '{}' },
        })),
      }
    : {}),
});

export const tool = (id: string, c: string): Message => ({
  role: 'tool',
  content: c,
  tool_call_id: id,
});

/** Bytes of `{"messages":[...]}` plus `fixed`: what the cap bounds. */
export const total = (messages: Message[], fixed: number) => fixed + jsonBytes(messages);
